"""Saved plans applied exactly or refused, `deny:` guards and `plan --exit-code` (issue #22, items 3-5),
through the CLI on the local cloud."""

from __future__ import annotations

import json
from pathlib import Path

BASE = """\
Resources:
  Queue:
    Type: AWS::SQS::Queue
    Properties:
      VisibilityTimeout: {base_timeout}
Outputs:
  QueueArn: {{Value: !GetAtt Queue.Arn}}
  Label: {{Value: {label}}}
"""
APP = """\
Parameters:
  Upstream: {{Type: String}}
  Label: {{Type: String}}
Resources:
  Jobs:
    Type: AWS::SQS::Queue
    Properties:
      VisibilityTimeout: {app_timeout}
  Setting:
    Type: AWS::SSM::Parameter
    Properties: {{Type: String, Value: !Ref Label}}
  Table:
    Type: AWS::DynamoDB::Table
    Properties:
      TableName: !Sub "${{AWS::StackName}}-{key}"
      BillingMode: PAY_PER_REQUEST
      AttributeDefinitions: [{{AttributeName: id, AttributeType: S}}]
      KeySchema: [{{AttributeName: id, KeyType: HASH}}]
"""


def write(folder: Path, *, base_timeout: int = 30, label: str = "one", app_timeout: int = 30, key: str = "id",
          deny: str = "") -> Path:
    (folder / "base.yaml").write_text(BASE.format(base_timeout=base_timeout, label=label))
    (folder / "app.yaml").write_text(APP.format(app_timeout=app_timeout, key=key))
    (folder / "formwright.yaml").write_text(
        f"name: sp\n{deny}stacks:\n  base: {{template: base.yaml}}\n  app:\n    template: app.yaml\n"
        "    parameters: {Upstream: !ref base.outputs.QueueArn, Label: !ref base.outputs.Label}\n")
    return folder


def attributes(cloud, stack: str, logical: str) -> dict[str, str]:
    """The SQS queue's attributes, read from the local cloud."""
    resource = cloud.client("cloudformation").describe_stack_resource(
        StackName=stack, LogicalResourceId=logical)["StackResourceDetail"]
    return cloud.client("sqs").get_queue_attributes(QueueUrl=resource["PhysicalResourceId"],
                                                    AttributeNames=["All"])["Attributes"]


def test_a_saved_plan_is_applied_exactly(tmp_path: Path, run_cli, cloud) -> None:
    folder = write(tmp_path)
    assert run_cli("deploy", str(folder), "-y").code == 0
    write(folder, app_timeout=45)
    saved = tmp_path / "plan.json"
    plan = run_cli("plan", str(folder), "-o", str(saved))
    assert plan.code == 0, plan.err
    assert f"formwright deploy --plan {saved}" in plan.out
    data = json.loads(saved.read_text())  # JSON a CI job reads with jq
    app = data["stacks"]["app"]
    assert app["change_set_id"].startswith("arn:aws:cloudformation:") and len(app["inputs_hash"]) == 64
    assert app["updated"] and app["stack_id"] and app["depends_on"] == ["base"]
    assert data["stacks"]["base"]["kind"] == "unchanged" and data["totals"]["change"] == 1
    shown = run_cli("show-plan", str(saved))
    assert shown.code == 0 and "app (sp-app): update" in shown.out and "30 → 45" in shown.out
    assert "Plan: 0 to add, 1 to change, 0 to remove; 1 stack unchanged" in shown.out

    applied = run_cli("deploy", str(folder), "--plan", str(saved), "--output", "json")
    assert applied.code == 0, applied.out + applied.err
    assert applied.json()["stacks"]["app"]["outcome"] == "updated"
    assert attributes(cloud, "sp-app", "Jobs")["VisibilityTimeout"] == "45"
    # executed: the change set is spent, so the same plan cannot run twice
    again = run_cli("deploy", str(folder), "--plan", str(saved))
    assert again.code == 2 and "no longer holds" in again.err


def deployed_and_planned(tmp_path: Path, run_cli) -> tuple[Path, Path]:
    """The project deployed, then a change (Jobs' VisibilityTimeout 30 -> 45) saved as a plan."""
    folder = write(tmp_path)
    assert run_cli("deploy", str(folder), "-y").code == 0
    saved = tmp_path / "plan.json"
    write(folder, app_timeout=45)
    assert run_cli("plan", str(folder), "-o", str(saved)).code == 0
    return folder, saved


def refused(folder: Path, saved: Path, run_cli, cloud, why: str) -> None:
    """deploy --plan exits 2 naming `why`, and nothing was executed: the planned change is not there."""
    result = run_cli("deploy", str(folder), "--plan", str(saved))
    assert result.code == 2, result.out + result.err
    assert "nothing was executed" in result.err and why in result.err, result.err
    assert "Traceback" not in result.err
    assert attributes(cloud, "sp-app", "Jobs")["VisibilityTimeout"] == "30"


def test_a_saved_plan_is_refused_after_a_template_edit(tmp_path: Path, run_cli, cloud) -> None:
    folder, saved = deployed_and_planned(tmp_path, run_cli)
    write(folder, app_timeout=50)  # edited after the review
    refused(folder, saved, run_cli, cloud, "app: its inputs changed since the plan")
    # not a plan file at all, or one of another project: bad input naming the file, nothing executed
    wrong = run_cli("deploy", str(folder), "--plan", str(folder / "formwright.yaml"))
    assert wrong.code == 2 and f"{folder / 'formwright.yaml'}:1: not a plan file" in wrong.err
    other = json.loads(saved.read_text())
    other["project"] = "elsewhere"
    (tmp_path / "other.json").write_text(json.dumps(other))
    elsewhere = run_cli("deploy", str(folder), "--plan", str(tmp_path / "other.json"))
    assert elsewhere.code == 2 and "made for elsewhere, not sp" in elsewhere.err
    assert attributes(cloud, "sp-app", "Jobs")["VisibilityTimeout"] == "30"


def test_a_saved_plan_is_refused_after_an_out_of_band_update(tmp_path: Path, run_cli, cloud) -> None:
    folder, saved = deployed_and_planned(tmp_path, run_cli)
    cfn = cloud.client("cloudformation")  # someone updates the stack outside formwright
    current = cfn.describe_stacks(StackName="sp-app")["Stacks"][0]
    cfn.update_stack(StackName="sp-app", UsePreviousTemplate=True, Parameters=[
        {"ParameterKey": p["ParameterKey"], "UsePreviousValue": True} for p in current["Parameters"]],
        Tags=[{"Key": "owner", "Value": "ops"}])
    refused(folder, saved, run_cli, cloud, "app: the stack was updated since the plan")


def test_a_saved_plan_is_refused_after_an_upstream_output_changed(tmp_path: Path, run_cli, cloud) -> None:
    folder = write(tmp_path)
    assert run_cli("deploy", str(folder), "-y").code == 0
    saved = tmp_path / "plan.json"
    write(folder, app_timeout=45)
    assert run_cli("plan", str(folder), "app", "-o", str(saved)).code == 0  # app alone: base is outside
    write(folder, app_timeout=45, label="two")
    assert run_cli("deploy", str(folder), "base", "-y").code == 0  # base's Label output moves
    refused(folder, saved, run_cli, cloud, "upstream output")


def test_a_guard_stops_a_table_replacement_unless_allowed(tmp_path: Path, run_cli, cloud) -> None:
    deny = 'deny: {replacement: ["AWS::DynamoDB::Table", "AWS::RDS::*"]}\n'
    folder = write(tmp_path, deny=deny)
    assert run_cli("deploy", str(folder), "-y").code == 0
    table = cloud.client("cloudformation").describe_stack_resource(
        StackName="sp-app", LogicalResourceId="Table")["StackResourceDetail"]["PhysicalResourceId"]
    write(folder, key="v2", app_timeout=45, deny=deny)  # TableName is create-only: the table is replaced
    plan = run_cli("plan", str(folder))
    assert plan.code == 2
    assert "app/Table (AWS::DynamoDB::Table): replacement denied by `deny: {replacement: " \
           "[AWS::DynamoDB::Table]}`" in plan.err
    assert "--allow-replacement" in plan.err and "app/Table" in plan.out  # the plan itself is shown
    blocked = run_cli("deploy", str(folder), "-y")
    assert blocked.code == 2 and "app/Table" in blocked.err
    # nothing executed: not the table, nor the queue beside it
    assert attributes(cloud, "sp-app", "Jobs")["VisibilityTimeout"] == "30"
    resources = cloud.client("cloudformation").describe_stack_resource(
        StackName="sp-app", LogicalResourceId="Table")["StackResourceDetail"]
    assert resources["PhysicalResourceId"] == table
    (tmp_path / "bad").mkdir()
    bad = write(tmp_path / "bad", deny="deny: {replace: [AWS::RDS::*]}\n")
    wrong = run_cli("plan", str(bad))
    assert wrong.code == 2 and "formwright.yaml:2" in wrong.err and "unknown guard 'replace'" in wrong.err

    allowed = run_cli("deploy", str(folder), "-y", "--allow-replacement", "Table")
    assert allowed.code == 0, allowed.err
    assert attributes(cloud, "sp-app", "Jobs")["VisibilityTimeout"] == "45"


def test_plan_exit_code_in_each_state(tmp_path: Path, run_cli, cloud) -> None:
    folder = write(tmp_path)
    assert run_cli("plan", str(folder), "--exit-code").code == 5  # everything to create
    assert run_cli("plan", str(folder)).code == 0  # without the flag: 0
    assert run_cli("deploy", str(folder), "-y").code == 0
    assert run_cli("plan", str(folder), "--exit-code").code == 0  # nothing to do
    write(folder, base_timeout=40)
    assert run_cli("plan", str(folder), "--exit-code", "--output", "json").code == 5
    # planning failed (an unreachable target): 1
    failed = run_cli("plan", str(folder), "--exit-code", "--target", "aws", "--region", "us-east-1",
                     env={"AWS_ENDPOINT_URL": "http://127.0.0.1:9", "AWS_ACCESS_KEY_ID": "x",
                          "AWS_SECRET_ACCESS_KEY": "y", "AWS_MAX_ATTEMPTS": "1"})
    assert failed.code == 1, failed.err
