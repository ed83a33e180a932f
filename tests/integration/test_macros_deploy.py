"""End to end: a project whose template uses a user macro and AWS::LanguageExtensions deploys locally."""

from __future__ import annotations

import shutil
from pathlib import Path

MACROS = Path(__file__).resolve().parents[2] / "examples" / "macros"

TEMPLATE = """AWSTemplateFormatVersion: "2010-09-09"
Transform: [AWS::LanguageExtensions, Count]
Parameters:
  Queues:
    Type: CommaDelimitedList
    Default: orders,invoices
Resources:
  # The loop can't be named like the parameter: AWS refuses it (fnForEachWithConflictingLoopNameParam).
  Fn::ForEach::QueueLoop:
    - Name
    - !Ref Queues
    - "${Name}Queue":
        Type: AWS::SQS::Queue
        Properties:
          QueueName: !Sub "${AWS::StackName}-${Name}"
  Worker:
    Type: AWS::SSM::Parameter
    Count: 3
    Properties:
      Type: String
      Name: !Sub "/${AWS::StackName}/worker-%d"
      Value: worker-%d
Outputs:
  QueueCount:
    Value: !Select [0, !Ref Queues]
"""


def make_project(root: Path) -> None:
    (root / "macros").mkdir()
    shutil.copy(MACROS / "count.py", root / "macros" / "count.py")
    (root / "stack.yaml").write_text(TEMPLATE)
    (root / "formwright.yaml").write_text(
        "name: macro-demo\nmacros:\n  Count: macros/count.py\nstacks:\n"
        "  queues:\n    template: stack.yaml\n    parameters:\n      Queues: [orders, invoices, refunds]\n")


def test_user_macro_and_language_extensions_deploy(tmp_path: Path, run_cli, cloud) -> None:
    make_project(tmp_path)
    assert run_cli("validate", str(tmp_path)).code == 0

    result = run_cli("deploy", str(tmp_path), "-y", "--output", "json")
    assert result.code == 0, result.err
    cf = cloud.client("cloudformation")
    resources = {r["LogicalResourceId"] for r in
                 cf.describe_stack_resources(StackName="macro-demo-queues")["StackResources"]}
    assert resources == {"ordersQueue", "invoicesQueue", "refundsQueue", "Worker1", "Worker2", "Worker3"}
    ssm = cloud.client("ssm")
    assert ssm.get_parameter(Name="/macro-demo-queues/worker-2")["Parameter"]["Value"] == "worker-2"

    build = tmp_path / ".formwright" / "build" / "queues"
    assert (build / "original.yaml").read_text() == TEMPLATE
    processed = (build / "processed.json").read_text()
    assert "Transform" not in processed and "Fn::ForEach" not in processed and "refundsQueue" in processed

    again = run_cli("deploy", str(tmp_path), "-y", "--output", "json")
    assert again.json()["write_calls"] == 0


def test_a_failing_macro_is_one_line_at_the_transform(tmp_path: Path, run_cli, cloud) -> None:
    make_project(tmp_path)
    (tmp_path / "macros" / "count.py").write_text(
        "def handler(event, context):\n"
        "    return {'requestId': event['requestId'], 'status': 'failure', 'errorMessage': 'no quota'}\n")
    result = run_cli("deploy", str(tmp_path), "-y", "--output", "json")
    assert result.code == 2  # bad input, not a cloud failure
    error = result.json()["stacks"]["queues"]["error"]
    assert "stack.yaml:2" in error and "Transform 123456789012::Count failed with: no quota" in error
    assert cloud.client("cloudformation").describe_stacks()["Stacks"] == []


def test_diff_never_shows_a_noecho_value_that_a_macro_put_into_the_template(tmp_path: Path, run_cli,
                                                                              cloud) -> None:
    (tmp_path / "t.yaml").write_text("""Transform: AWS::LanguageExtensions
Parameters:
  Pw: {Type: String, NoEcho: true}
Resources:
  Setting:
    Type: AWS::SSM::Parameter
    Properties:
      Type: String
      Name: /noecho/setting
      Value: {"Fn::ToJsonString": {password: !Ref Pw}}
""")
    (tmp_path / "formwright.yaml").write_text(
        "name: ne\nstacks:\n  s:\n    template: t.yaml\n    parameters: {Pw: s3cr3t-value}\n")
    assert run_cli("deploy", str(tmp_path), "-y").code == 0
    (tmp_path / "formwright.yaml").write_text(
        "name: ne\nstacks:\n  s:\n    template: t.yaml\n    parameters: {Pw: other-s3cr3t}\n")
    for args in (("diff", str(tmp_path)), ("diff", str(tmp_path), "--output", "json"),
                 ("plan", str(tmp_path), "--output", "json")):
        result = run_cli(*args)
        assert "s3cr3t-value" not in result.out + result.err and "other-s3cr3t" not in result.out + result.err
