"""`formwright adopt` end to end on the local cloud: stacks made with boto3 outside any project (parameters
chained from outputs, an export imported, two regions, a NoEcho parameter, termination protection) adopted
into a project whose first plan shows no change and whose deploy makes no call that writes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from formwright.cloud.session import Target

SECRET = "s3cret-never-written"
ENV = {"ADOPT_SECRET_DBPASSWORD": SECRET}


def topic(export: bool = False) -> str:
    outputs = {"TopicArn": {"Value": {"Ref": "Topic"}}}
    if export:
        outputs["TopicArn"]["Export"] = {"Name": "adopt-net-TopicArn"}
    return json.dumps({"Resources": {"Topic": {"Type": "AWS::SNS::Topic"}}, "Outputs": outputs})


QUEUE_YAML = """\
Parameters:
  Suffix: {Type: String, Default: one}
Resources:
  Queue:
    Type: AWS::SQS::Queue
Outputs:
  QueueName:
    Value: !GetAtt Queue.QueueName
"""
APP_YAML = """\
Parameters:
  TopicArn: {Type: String}
  QueueName: {Type: String}
  Shared: {Type: String}
Resources:
  Param:
    Type: AWS::SSM::Parameter
    Properties: {Type: String, Value: !Sub "${TopicArn} ${QueueName}"}
"""
CONSUMER_YAML = """\
Resources:
  Param:
    Type: AWS::SSM::Parameter
    Properties:
      Type: String
      Value: !ImportValue adopt-net-TopicArn
"""
SECRET_YAML = """\
Parameters:
  DbPassword: {Type: String, NoEcho: true}
Resources:
  Topic:
    Type: AWS::SNS::Topic
"""
CONSTANT = json.dumps({"Resources": {"Topic": {"Type": "AWS::SNS::Topic"}},
                       "Outputs": {"Same": {"Value": "shared-value"}}})
EDGE_YAML = """\
Parameters:
  TopicArn: {Type: String}
Resources:
  Queue:
    Type: AWS::SQS::Queue
"""


def make(cfn, name: str, body: str, params: dict[str, str] | None = None, **extra) -> dict:
    """Create a stack with boto3 (as the console or the AWS CLI would) and return its description."""
    cfn.create_stack(StackName=name, TemplateBody=body,
                     Parameters=[{"ParameterKey": k, "ParameterValue": v} for k, v in (params or {}).items()],
                     **extra)
    cfn.get_waiter("stack_create_complete").wait(StackName=name,
                                                 WaiterConfig={"Delay": 1, "MaxAttempts": 120})
    return cfn.describe_stacks(StackName=name)["Stacks"][0]


def outputs(stack: dict) -> dict[str, str]:
    return {o["OutputKey"]: o["OutputValue"] for o in stack.get("Outputs", [])}


@pytest.fixture
def estate(cloud: Target) -> dict[str, dict]:
    """Ten stacks in two regions, made outside formwright, and one the patterns do not match."""
    east = cloud.client("cloudformation")
    west = Target("local", "eu-west-1", cloud.endpoint).client("cloudformation")
    made = {}
    made["adopt-net"] = make(east, "adopt-net", topic(export=True), Tags=[{"Key": "team", "Value": "net"}])
    made["adopt-data"] = make(east, "adopt-data", QUEUE_YAML, {"Suffix": "two"})
    made["adopt-same-a"] = make(east, "adopt-same-a", CONSTANT)
    made["adopt-same-b"] = make(east, "adopt-same-b", CONSTANT)
    made["adopt-app"] = make(east, "adopt-app", APP_YAML, {
        "TopicArn": outputs(made["adopt-net"])["TopicArn"],
        "QueueName": outputs(made["adopt-data"])["QueueName"], "Shared": "shared-value"})
    made["adopt-consumer"] = make(east, "adopt-consumer", CONSUMER_YAML)
    made["adopt-secret"] = make(east, "adopt-secret", SECRET_YAML, {"DbPassword": SECRET},
                                EnableTerminationProtection=True)
    made["adopt-plain"] = make(east, "adopt-plain", QUEUE_YAML, Tags=[{"Key": "cost", "Value": "a b: c"}])
    made["adopt-edge"] = make(west, "adopt-edge", EDGE_YAML,
                              {"TopicArn": outputs(made["adopt-net"])["TopicArn"]})
    made["adopt-edge-store"] = make(west, "adopt-edge-store", QUEUE_YAML)
    make(east, "other-stack", QUEUE_YAML)
    return made


def adopt(run_cli, folder: Path, *extra: str):
    return run_cli("adopt", "adopt-*", "-o", str(folder), "--region", "us-east-1", "--region", "eu-west-1",
                   *extra, "--output", "json", env=ENV)


def test_adopted_stacks_plan_no_change_and_deploy_writes_nothing(estate, tmp_path: Path, run_cli) -> None:
    folder = tmp_path / "adopted"
    done = adopt(run_cli, folder)
    assert done.code == 0, done.out + done.err
    answer = done.json()
    stacks = answer["stacks"]
    assert sorted(stacks) == sorted(estate)  # other-stack does not match the pattern
    assert stacks["adopt-app"]["references"] == {"TopicArn": "adopt-net.outputs.TopicArn",
                                                 "QueueName": "adopt-data.outputs.QueueName"}
    assert stacks["adopt-edge"]["region"] == "eu-west-1"
    assert stacks["adopt-edge"]["references"] == {"TopicArn": "adopt-net.outputs.TopicArn"}
    assert stacks["adopt-consumer"]["depends_on"] == ["adopt-net"]
    # two stacks output the value: listed, not guessed
    assert [(a["stack"], a["parameter"], a["outputs"]) for a in answer["ambiguous"]] == [
        ("adopt-app", "Shared", ["adopt-same-a.outputs.Same", "adopt-same-b.outputs.Same"])]
    assert stacks["adopt-secret"]["secrets"] == {"DbPassword": "ADOPT_SECRET_DBPASSWORD"}
    assert answer["unmarked"] == {}
    assert answer["read_calls"] <= 3 * len(estate)
    text = (folder / "formwright.yaml").read_text()
    assert SECRET not in "".join(p.read_text() for p in folder.rglob("*") if p.is_file())
    assert '"{{ env.ADOPT_SECRET_DBPASSWORD }}"  # NoEcho' in text
    assert "termination_protection: true" in text and '"cost": "a b: c"' in text
    assert (folder / "templates" / "adopt-net.json").is_file()
    assert (folder / "templates" / "adopt-consumer.yaml").read_text() == CONSUMER_YAML  # as written

    plan = run_cli("plan", str(folder), "--output", "json", env=ENV)
    assert plan.code == 0, plan.out + plan.err
    assert {n: p["kind"] for n, p in plan.json()["plans"].items()} == dict.fromkeys(estate, "unchanged")

    deploy = run_cli("deploy", str(folder), "-y", "--output", "json", env=ENV)
    assert deploy.code == 0, deploy.out + deploy.err
    assert deploy.json()["write_calls"] == 0
    assert {n: r["outcome"] for n, r in deploy.json()["stacks"].items()} == dict.fromkeys(estate, "unchanged")

    # the applied record is no shortcut: CloudFormation itself, asked with a change set per stack, finds
    # nothing to change (nothing executed, the stacks' tags untouched)
    forced = run_cli("deploy", str(folder), "-y", "--force", "--output", "json", env=ENV)
    assert forced.code == 0, forced.out + forced.err
    outcomes = {n: r["outcome"] for n, r in forced.json()["stacks"].items()}
    assert outcomes == dict.fromkeys(estate, "no changes")
    assert "execute_change_set" not in forced.json()["calls"]


def test_adopt_tag_makes_the_next_deploy_add_the_ownership_tags(estate, tmp_path: Path, run_cli,
                                                               cloud: Target) -> None:
    folder = tmp_path / "tagged"
    done = adopt(run_cli, folder, "--tag")
    assert done.code == 0, done.out + done.err
    text = run_cli("adopt", "adopt-plain", "-o", str(tmp_path / "one"), "--tag", env=ENV)
    assert "a tags-only update" in text.out, text.out + text.err
    plan = run_cli("plan", str(folder), "-s", "adopt-plain", "--output", "json", env=ENV)
    assert plan.code == 0, plan.out + plan.err
    tags = {t["key"]: t for t in plan.json()["plans"]["adopt-plain"]["tags"]}
    assert set(tags) == {"formwright:project", "formwright:stack"}
    deploy = run_cli("deploy", str(folder), "-y", "-s", "adopt-plain", "--output", "json", env=ENV)
    assert deploy.code == 0, deploy.out + deploy.err
    described = cloud.client("cloudformation").describe_stacks(StackName="adopt-plain")["Stacks"][0]
    assert {t["Key"]: t["Value"] for t in described["Tags"]} == {
        "cost": "a b: c", "formwright:project": "tagged", "formwright:stack": "adopt-plain"}


@pytest.mark.parametrize("args, message", [
    (["nothing-like-this-*"], "no live stack matches nothing-like-this-*"),
    (["adopt-*", "--region", "moon-1"], "--region moon-1: not an AWS region"),
    (["adopt-*", "-o", "{full}"], "not an empty folder"),
])
def test_bad_input_is_one_line_and_exit_2(cloud: Target, tmp_path: Path, run_cli, args, message) -> None:
    full = tmp_path / "full"
    full.mkdir()
    (full / "keep.txt").write_text("mine")
    args = [a.replace("{full}", str(full)) for a in args]
    if "-o" not in args:
        args += ["-o", str(tmp_path / "new")]
    done = run_cli("adopt", *args)
    assert done.code == 2, done.out + done.err
    assert message in done.err and len(done.err.strip().splitlines()) == 1 and "Traceback" not in done.err
    assert not (tmp_path / "new").exists() and (full / "keep.txt").read_text() == "mine"


def test_a_noecho_value_not_in_the_environment_leaves_the_stack_to_cloudformation(
        cloud: Target, tmp_path: Path, run_cli) -> None:
    make(cloud.client("cloudformation"), "lone-secret", SECRET_YAML, {"DbPassword": SECRET})
    done = run_cli("adopt", "lone-secret", "-o", str(tmp_path / "p"), "--output", "json")
    assert done.code == 0, done.out + done.err
    assert "LONE_SECRET_DBPASSWORD" in done.json()["unmarked"]["lone-secret"]  # said, not hidden
    plan = run_cli("plan", str(tmp_path / "p"), "--output", "json", env={"LONE_SECRET_DBPASSWORD": SECRET})
    assert plan.code == 0, plan.out + plan.err
    assert plan.json()["plans"]["lone-secret"]["kind"] == "no changes"  # asked with a change set
