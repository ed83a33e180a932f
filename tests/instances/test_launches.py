"""Instances launched other than by a stack's AWS::EC2::Instance boot too: RunInstances through boto3
against a local cloud started with `--instances boot`, and an Auto Scaling group of a booting stack, whose
CreationPolicy waits for its instances' cfn-signal (`cfn-signal --resource GROUP`).

Marked slow: each test boots instances from the cached image (tests/instances/test_boot.py builds it).

Where the behaviour comes from (AWS CloudFormation User Guide, "CreationPolicy attribute": an Auto Scaling
group's ResourceSignal Count is how many success signals it needs, MinSuccessfulInstancesPercent (default 100)
the share of them that must succeed, a signal missing at the Timeout counts as a failure; the texts are
CloudFormation's events as its users report them: "Failed to receive 1 resource signal(s) for the current
batch. Each resource signal timeout is counted as a FAILURE." then CREATE_FAILED "Received 0 SUCCESS
signal(s) out of 1. Unable to satisfy 100% MinSuccessfulInstancesPercent requirement"
(widdix/aws-cf-templates#565, F5Networks/f5-aws-cloudformation#168)).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import botocore.exceptions
import pytest

from tests.instances.conftest import (
    LINUX_AMI,
    PrivateCloud,
    free_subnet,
    get,
    image_or_skip,
    processes_in,
)

pytestmark = [pytest.mark.slow, pytest.mark.cloud]
WINDOWS_AMI = "ami-12c6146b"  # moto's catalog: Windows_Server-2008-R2_SP1-English-64Bit-Base


def _gone(home: Path, instance_id: str) -> bool:
    """The instance's processes, root and state folder are gone."""
    state = home / "instances" / instance_id
    return not state.exists() and processes_in(state / "root") == []


def test_run_instances_boots_its_user_data_and_terminate_instances_ends_it(tmp_path: Path) -> None:
    image_or_skip()
    cloud = PrivateCloud(tmp_path / "home")
    started = cloud.start("--instances", "boot")
    try:
        assert started["instances"] == "boot"
        ec2 = cloud.ec2()  # no subnet given: the default VPC's, on the instance network (as EC2 does)
        user_data = ("#!/bin/sh\necho launched-by-run-instances > /srv/index.html\n"
                     "cd /srv && nohup python3 -m http.server 8080 >/dev/null 2>&1 &\n")
        launched = ec2.run_instances(ImageId=LINUX_AMI, InstanceType="t3.micro", MinCount=1, MaxCount=1,
                                     UserData=user_data)["Instances"][0]
        instance_id, address = launched["InstanceId"], launched["PrivateIpAddress"]
        assert get(f"http://{address}:8080/") == "launched-by-run-instances\n"
        root = cloud.home / "instances" / instance_id / "root"
        assert processes_in(root), "the listener runs in the instance's root"
        ec2.terminate_instances(InstanceIds=[instance_id])
        assert _gone(cloud.home, instance_id)

        with pytest.raises(botocore.exceptions.ClientError) as refused:  # what cannot boot is not launched
            ec2.run_instances(ImageId=WINDOWS_AMI, InstanceType="t3.micro", MinCount=1, MaxCount=1)
        assert refused.value.response["Error"]["Code"] == "Unsupported"
        assert "is a Windows image" in refused.value.response["Error"]["Message"]
        states = {i["InstanceId"]: i["State"]["Name"] for r in ec2.describe_instances()["Reservations"]
                  for i in r["Instances"]}
        assert set(states.values()) == {"terminated"}
    finally:
        cloud.cli("local-cloud", "stop")


def _group_project(root: Path, name: str, signal: bool, timeout: str) -> None:
    """A VPC, a subnet, a launch template whose UserData answers HTTP (and signals the group, with `signal`)
    and an Auto Scaling group of two with a CreationPolicy of Count 2."""
    user_data = ("#!/bin/sh\nhostname > /srv/index.html\n"
                 "cd /srv && nohup python3 -m http.server 8080 >/dev/null 2>&1 &\n")
    if signal:
        user_data += ("/opt/aws/bin/cfn-signal -e 0 --stack ${AWS::StackName} --resource Group "
                      "--region ${AWS::Region}\n")
    template = {"Resources": {
        "Net": {"Type": "AWS::EC2::VPC", "Properties": {"CidrBlock": "10.213.0.0/16"}},
        "Sub": {"Type": "AWS::EC2::Subnet",
                "Properties": {"VpcId": {"Ref": "Net"}, "CidrBlock": f"10.213.{free_subnet()}.0/24"}},
        "Launch": {"Type": "AWS::EC2::LaunchTemplate", "Properties": {"LaunchTemplateData": {
            "ImageId": LINUX_AMI, "InstanceType": "t3.micro",
            "UserData": {"Fn::Base64": {"Fn::Sub": user_data}}}}},
        "Group": {"Type": "AWS::AutoScaling::AutoScalingGroup",
                  "CreationPolicy": {"ResourceSignal": {"Count": 2, "Timeout": timeout}},
                  "Properties": {"MinSize": "1", "MaxSize": "3", "DesiredCapacity": "2",
                                 "VPCZoneIdentifier": [{"Ref": "Sub"}],
                                 "LaunchTemplate": {"LaunchTemplateId": {"Ref": "Launch"}, "Version": {
                                     "Fn::GetAtt": ["Launch", "LatestVersionNumber"]}}}},
    }}
    (root / "web.json").write_text(json.dumps(template))
    (root / "formwright.yaml").write_text(f"name: {name}\nregion: us-east-1\nstacks:\n"
                                          "  web: {template: web.json}\nlocal_cloud: {instances: boot}\n")


def _group_events(cloud, stack: str) -> list[tuple[str, str | None]]:
    events = cloud.client("cloudformation").describe_stack_events(StackName=stack)["StackEvents"]
    return [(e["ResourceStatus"], e.get("ResourceStatusReason")) for e in reversed(events)
            if e["LogicalResourceId"] == "Group"]


def test_an_auto_scaling_group_of_two_completes_from_both_signals_and_its_instances_follow_its_size(
        tmp_path: Path, run_cli, cloud) -> None:
    image_or_skip()
    _group_project(tmp_path, "fleet", signal=True, timeout="PT5M")
    deployed = run_cli("deploy", str(tmp_path), "-y")
    assert deployed.code == 0, deployed.err + deployed.out
    scaling = cloud.client("autoscaling")
    group = scaling.describe_auto_scaling_groups()["AutoScalingGroups"][0]
    ids = [i["InstanceId"] for i in group["Instances"]]
    assert len(ids) == 2
    said = _group_events(cloud, "fleet-web")
    assert sorted(r for _, r in said if r and r.startswith("Received")) == sorted(
        f"Received SUCCESS signal with UniqueId {i}" for i in ids)  # cfn-signal's UniqueId: the instance id
    assert said[-1] == ("CREATE_COMPLETE", None)
    ec2 = cloud.client("ec2")
    addresses = [i["PrivateIpAddress"] for r in ec2.describe_instances(InstanceIds=ids)["Reservations"]
                 for i in r["Instances"]]
    for address in addresses:  # each instance ran the launch template's UserData
        assert get(f"http://{address}:8080/").strip() == "ip-" + address.replace(".", "-")
    home = Path(os.environ["FORMWRIGHT_HOME"])
    name = group["AutoScalingGroupName"]
    scaling.update_auto_scaling_group(AutoScalingGroupName=name, DesiredCapacity=1)
    left = [i["InstanceId"] for i in scaling.describe_auto_scaling_groups(
        AutoScalingGroupNames=[name])["AutoScalingGroups"][0]["Instances"]]
    assert len(left) == 1
    assert [i for i in ids if _gone(home, i)] == [i for i in ids if i not in left]
    assert run_cli("delete", str(tmp_path), "-y").code == 0
    assert all(_gone(home, i) for i in ids)


def test_an_auto_scaling_group_whose_signals_do_not_come_fails_with_cloudformations_text(
        tmp_path: Path, run_cli, cloud) -> None:
    image_or_skip()
    _group_project(tmp_path, "silent", signal=False, timeout="PT4S")
    deployed = run_cli("deploy", str(tmp_path), "-y")
    assert deployed.code != 0
    reason = ("Received 0 SUCCESS signal(s) out of 2. Unable to satisfy 100% MinSuccessfulInstancesPercent "
              "requirement")
    assert reason in " ".join((deployed.out + deployed.err).split())
    said = _group_events(cloud, "silent-web")
    assert ("CREATE_IN_PROGRESS", "Failed to receive 2 resource signal(s) for the current batch. Each "
            "resource signal timeout is counted as a FAILURE.") in said
    assert ("CREATE_FAILED", reason) in said
    cfn = cloud.client("cloudformation")
    assert cfn.describe_stacks(StackName="silent-web")["Stacks"][0]["StackStatus"] == "ROLLBACK_COMPLETE"
    home = Path(os.environ["FORMWRIGHT_HOME"])
    instances = [i["InstanceId"] for r in cloud.client("ec2").describe_instances()["Reservations"]
                 for i in r["Instances"]]
    assert len(instances) == 2 and all(_gone(home, i) for i in instances)  # the rollback's group deletion
