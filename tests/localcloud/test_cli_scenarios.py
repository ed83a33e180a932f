"""The issue's scenarios as a new user meets them: the real `formwright` CLI against the local cloud.

Each test deploys a small project with `formwright deploy` and checks what the user is told and what
the local cloud then holds, read back with boto3 (issue 9, "Why").
"""

from __future__ import annotations

from pathlib import Path

PRODUCER = """\
Parameters:
  V: {Type: String}
Resources:
  Q: {Type: AWS::SQS::Queue}
Outputs:
  Out:
    Value: !Ref V
    Export: {Name: !Sub "${AWS::StackName}-out"}
"""
CONSUMER = """\
Resources:
  P:
    Type: AWS::SSM::Parameter
    Properties: {Type: String, Value: !ImportValue exp-prod-out}
"""


def _project(root: Path, value: str) -> None:
    (root / "prod.yaml").write_text(PRODUCER)
    (root / "cons.yaml").write_text(CONSUMER)
    (root / "formwright.yaml").write_text(
        f"name: exp\nstacks:\n  prod:\n    template: prod.yaml\n    parameters: {{V: {value}}}\n"
        "  cons:\n    template: cons.yaml\n")


def test_an_export_in_use_changed_fails_the_deploy_naming_the_export(run_cli, cloud, tmp_path) -> None:
    # "Get exported outputs from a deployed CloudFormation stack": "You can't modify or remove an output
    # value that is referenced by another stack". CloudFormation gives the reason on the stack's own
    # UPDATE_ROLLBACK_IN_PROGRESS event (no resource failed), and the user must be told it.
    _project(tmp_path, "one")
    first = run_cli("deploy", str(tmp_path), "-y")
    assert first.code == 0, first.err[-2000:]
    _project(tmp_path, "two")
    changed = run_cli("deploy", str(tmp_path), "-y", "--output", "json")
    assert changed.code == 1, changed.err[-2000:]
    prod = changed.json()["stacks"]["prod"]
    assert prod["status"] == "UPDATE_ROLLBACK_COMPLETE"
    assert "Export exp-prod-out cannot be updated as it is in use by exp-cons" in prod["error"]
    cfn = cloud.client("cloudformation")
    outputs = cfn.describe_stacks(StackName="exp-prod")["Stacks"][0]["Outputs"]
    assert [(o["OutputKey"], o["OutputValue"]) for o in outputs] == [("Out", "one")]
