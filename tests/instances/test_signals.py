"""cfn-signal from booted instances completes a CreationPolicy or a WaitCondition; a missing signal fails it
(`local_cloud: {instances: boot}`), through the CLI and the real local cloud.

Marked slow: each test boots instances from the cached image (tests/instances/test_boot.py builds it).

Where the behaviour comes from (AWS CloudFormation User Guide, "CreationPolicy attribute",
"AWS::CloudFormation::WaitCondition", "cfn-signal"; the reason texts are CloudFormation's as its users
report them, e.g. aws/aws-cli#7133, aws-samples/immersive-media-refarch#7):
- each signal a CreationPolicy receives is an event "Received SUCCESS signal with UniqueId ID" on the
  resource, and it completes after Count of them (distinct UniqueIds: `cfn-signal -i`);
- a WaitCondition counts the signals PUT to its handle's URL, even those sent before it started; its
  Fn::GetAtt Data is a JSON object of UniqueId to Data; with too few by its Timeout it fails with
  "WaitCondition timed out. Received N conditions when expecting COUNT"
  and the stack rolls back (the instance is deleted).
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import time
from pathlib import Path

import boto3
import pytest

from tests.instances.conftest import free_subnet, image_or_skip, processes_in

pytestmark = [pytest.mark.slow, pytest.mark.cloud]
LINUX_AMI = "ami-760aaa0f"  # a Linux image of moto's catalog (amzn-ami-hvm-2017.09.1 x86_64): boots as Debian


def _network() -> tuple[str, str]:
    third = free_subnet()
    return f"10.213.{third}.0/24", f"10.213.{third}.{random.randint(10, 250)}"  # noqa: S311


def _template(subnet: str, address: str, user_data: str, **web: object) -> dict:
    return {
        "Resources": {
            "Net": {"Type": "AWS::EC2::VPC", "Properties": {"CidrBlock": "10.213.0.0/16"}},
            "Sub": {"Type": "AWS::EC2::Subnet", "Properties": {"VpcId": {"Ref": "Net"}, "CidrBlock": subnet}},
            "Handle": {"Type": "AWS::CloudFormation::WaitConditionHandle"},
            "Web": {"Type": "AWS::EC2::Instance", **web,
                    "Properties": {"ImageId": LINUX_AMI, "InstanceType": "t3.micro",
                                   "SubnetId": {"Ref": "Sub"}, "PrivateIpAddress": address,
                                   "UserData": {"Fn::Base64": {"Fn::Sub": user_data}}}},
        },
    }


def _project(root: Path, name: str, template: dict) -> None:
    (root / "web.json").write_text(json.dumps(template))
    (root / "formwright.yaml").write_text(f"name: {name}\nregion: us-east-1\n"
                                          "stacks:\n  web: {template: web.json}\n"
                                          "local_cloud: {instances: boot}\n")


def test_a_creation_policy_completes_with_two_signals_and_a_wait_condition_gets_its_data(
        tmp_path: Path, run_cli, cloud) -> None:
    image_or_skip()
    subnet, address = _network()
    user_data = """#!/bin/sh
/opt/aws/bin/cfn-signal -e 0 -i report -d "made at boot" "${Handle}"
/opt/aws/bin/cfn-signal -e 0 --stack ${AWS::StackName} --resource Web --region ${AWS::Region} -i first
cfn-signal -e 0 --stack ${AWS::StackName} --resource Web --region ${AWS::Region} -i second
"""
    template = _template(subnet, address, user_data,
                         CreationPolicy={"ResourceSignal": {"Count": 2, "Timeout": "PT5M"}})
    template["Resources"]["Done"] = {"Type": "AWS::CloudFormation::WaitCondition", "DependsOn": "Web",
                                     "Properties": {"Handle": {"Ref": "Handle"}, "Timeout": "300"}}
    template["Outputs"] = {"Data": {"Value": {"Fn::GetAtt": ["Done", "Data"]}}}
    _project(tmp_path, "signals", template)
    deployed = run_cli("deploy", str(tmp_path), "-y", "--output", "json")
    assert deployed.code == 0, deployed.err + deployed.out
    cfn = cloud.client("cloudformation")
    stack = cfn.describe_stacks(StackName="signals-web")["Stacks"][0]
    assert stack["StackStatus"] == "CREATE_COMPLETE"
    assert json.loads(stack["Outputs"][0]["OutputValue"]) == {"report": "made at boot"}
    events = cfn.describe_stack_events(StackName="signals-web")["StackEvents"]
    said = [e.get("ResourceStatusReason") for e in reversed(events) if e["LogicalResourceId"] == "Web"]
    assert "Received SUCCESS signal with UniqueId first" in said
    assert "Received SUCCESS signal with UniqueId second" in said
    assert said.index("Received SUCCESS signal with UniqueId second") < len(said) - 1  # then CREATE_COMPLETE
    assert next(e["ResourceStatus"] for e in events if e["LogicalResourceId"] == "Web") == "CREATE_COMPLETE"
    deleted = run_cli("delete", str(tmp_path), "-y")
    assert deleted.code == 0, deleted.err + deleted.out


def test_a_wait_condition_short_of_its_signals_times_out_and_the_stack_rolls_back(
        tmp_path: Path, run_cli, cloud) -> None:
    image_or_skip()
    subnet, address = _network()
    user_data = """#!/bin/sh
/opt/aws/bin/cfn-signal -e 0 -i only-one "${Handle}"
"""
    template = _template(subnet, address, user_data)
    template["Resources"]["Done"] = {"Type": "AWS::CloudFormation::WaitCondition", "DependsOn": "Web",
                                     "Properties": {"Handle": {"Ref": "Handle"}, "Timeout": "8", "Count": 2}}
    _project(tmp_path, "late", template)
    deployed = run_cli("deploy", str(tmp_path), "-y")
    assert deployed.code != 0
    said = " ".join((deployed.out + deployed.err).split())
    assert "WaitCondition timed out. Received 1 conditions when expecting 2" in said
    cfn = cloud.client("cloudformation")
    assert cfn.describe_stacks(StackName="late-web")["Stacks"][0]["StackStatus"] == "ROLLBACK_COMPLETE"
    events = cfn.describe_stack_events(StackName="late-web")["StackEvents"]
    failed = [e for e in events if e["ResourceStatus"] == "CREATE_FAILED"]
    assert failed[0]["LogicalResourceId"] == "Done"
    timed_out = "WaitCondition timed out. Received 1 conditions when expecting 2"
    assert failed[0]["ResourceStatusReason"] == timed_out
    web = [e for e in events if e["LogicalResourceId"] == "Web" and e["ResourceStatus"] == "DELETE_COMPLETE"]
    assert web, "the rollback deletes the instance"
    instance_id = web[0]["PhysicalResourceId"]
    root = Path(cloud_home()) / "instances" / instance_id / "root"
    assert not root.exists() and processes_in(root) == []


def test_a_failure_signal_fails_the_instance_with_its_unique_id(tmp_path: Path, run_cli, cloud) -> None:
    image_or_skip()
    subnet, address = _network()
    user_data = """#!/bin/sh
false
/opt/aws/bin/cfn-signal -e $? --stack ${AWS::StackName} --resource Web --region ${AWS::Region}
"""
    template = _template(subnet, address, user_data, CreationPolicy={"ResourceSignal": {"Timeout": "PT5M"}})
    _project(tmp_path, "failing", template)
    deployed = run_cli("deploy", str(tmp_path), "-y")
    assert deployed.code != 0
    cfn = cloud.client("cloudformation")
    events = cfn.describe_stack_events(StackName="failing-web")["StackEvents"]
    failed = [e for e in events if e["ResourceStatus"] == "CREATE_FAILED"]
    assert failed[0]["LogicalResourceId"] == "Web"
    instance_id = next(e["PhysicalResourceId"] for e in events if e["LogicalResourceId"] == "Web"
                       and e["PhysicalResourceId"])
    assert failed[0]["ResourceStatusReason"] == f"Received FAILURE signal with UniqueId {instance_id}"
    assert cfn.describe_stacks(StackName="failing-web")["Stacks"][0]["StackStatus"] == "ROLLBACK_COMPLETE"


def cloud_home() -> str:
    """The session local cloud's home (the instances' roots are under it)."""
    return os.environ["FORMWRIGHT_HOME"]


def test_a_stop_during_a_wait_ends_the_stack_failed_after_the_restart(tmp_path: Path, run_cli) -> None:
    """`local-cloud stop` while a WaitCondition waits: the snapshot holds the stack CREATE_IN_PROGRESS; the
    next start (of this private local cloud) ends it CREATE_FAILED with the reason, and it can be deleted."""
    image_or_skip()
    private = {"FORMWRIGHT_HOME": str(tmp_path / "home"), "FORMWRIGHT_TARGET": "local"}

    def client(started) -> object:
        assert started.code == 0, started.err
        return boto3.client("cloudformation", endpoint_url=json.loads(started.out)["endpoint"],
                            region_name="us-east-1", aws_access_key_id="testing",
                            aws_secret_access_key="testing")  # noqa: S106

    cfn = client(run_cli("local-cloud", "start", "--output", "json", env=private))
    project = tmp_path / "project"
    project.mkdir()
    _project(project, "stopped", {"Resources": {
        "Handle": {"Type": "AWS::CloudFormation::WaitConditionHandle"},
        "Done": {"Type": "AWS::CloudFormation::WaitCondition",
                 "Properties": {"Handle": {"Ref": "Handle"}, "Timeout": "600"}}}})
    deploy = subprocess.Popen([sys.executable, "-m", "formwright", "deploy", str(project), "-y"],
                              env={**os.environ, **private}, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    try:
        for _ in range(600):
            found = cfn.describe_stacks()["Stacks"]
            if found and found[0]["StackStatus"] == "CREATE_IN_PROGRESS" and any(
                    e["LogicalResourceId"] == "Done" for e in cfn.describe_stack_events(
                        StackName="stopped-web")["StackEvents"]):
                break
            time.sleep(0.2)
        assert run_cli("local-cloud", "stop", env=private).code == 0
        deploy.kill()  # the deploy would retry its polls of the stopped local cloud for minutes
        deploy.wait()
        cfn = client(run_cli("local-cloud", "start", "--output", "json", env=private))
        assert cfn.describe_stacks(StackName="stopped-web")["Stacks"][0]["StackStatus"] == "CREATE_FAILED"
        newest = cfn.describe_stack_events(StackName="stopped-web")["StackEvents"][0]
        assert newest["ResourceStatus"] == "CREATE_FAILED"
        assert newest["ResourceStatusReason"].startswith("The local cloud stopped while this operation ran")
        assert run_cli("delete", str(project), "-y", env=private).code == 0
    finally:
        deploy.kill()
        run_cli("local-cloud", "stop", env=private)

