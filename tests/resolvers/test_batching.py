"""Issue 24: resolvers are batched against the local cloud: GetParameters takes up to 10 names per call, each
external stack is described once however many stacks read it, and the same source is fetched once. Counted
with botocore's own event hooks on the target's shared clients (the calls are real)."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from formwright.engine.stack import prepare_stacks
from formwright.model.project import load_project

TEMPLATE = ("Parameters:\n  Host: {Type: String}\n  Vpc: {Type: String}\n"
            "Resources:\n  Q: {Type: AWS::SQS::Queue}\n")
EXTERNAL = "Resources:\n  T: {Type: AWS::SNS::Topic}\nOutputs:\n  VpcId: {Value: vpc-1}\n"


def test_25_stacks_cost_3_get_parameters_and_one_describe_per_external_stack(tmp_path: Path, cloud) -> None:
    ssm, cfn = cloud.client("ssm"), cloud.client("cloudformation")
    for i in range(25):
        ssm.put_parameter(Name=f"/b/{i}", Value=f"h{i}", Type="String")
    for n in range(2):
        cfn.create_stack(StackName=f"ext-{n}", TemplateBody=EXTERNAL)
    (tmp_path / "t.yaml").write_text(TEMPLATE)
    stacks = "".join(f"  s{i}:\n    template: t.yaml\n    parameters: {{Host: !ssm /b/{i}, "
                     f"Vpc: !stack_output ext-{i % 2}.VpcId}}\n" for i in range(25))
    (tmp_path / "formwright.yaml").write_text(f"name: bt\nregion: us-east-1\nstacks:\n{stacks}")
    calls: Counter[str] = Counter()
    for client in (ssm, cfn):
        client.meta.events.register("before-call.*.*", lambda model, **_: calls.update([model.name]))
    project = load_project(tmp_path)
    assert calls == Counter()  # loading (validate) fetches nothing
    prepared = prepare_stacks(project, target=cloud)
    assert calls["GetParameters"] == 3 and calls["DescribeStacks"] == 2
    assert prepared["s7"].resolve_parameters({}) == {"Host": "h7", "Vpc": "vpc-1"}
