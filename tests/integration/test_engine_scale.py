"""The engine at scale against the local cloud: a 500-stack project's no-op re-deploy reads each stack once
(in one listing, as its plan does) and writes nothing (issue 29; the timings live in bench/scale.py, not
here)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from formwright.cloud.session import Target
from formwright.engine.cfn import CallCounter
from formwright.engine.group import StackGroup
from formwright.engine.stack import prepare_stacks
from formwright.engine.stack_info import StackInfo
from formwright.model.project import load_project

# 500 CreateStack calls and the no-op's 500 reads: ~15 s on a quiet machine, a minute on a loaded one
pytestmark = pytest.mark.slow

COUNT = 500
LEAF = {
    "Parameters": {"Upstream": {"Type": "String", "Default": "root"}},
    "Resources": {"Setting": {"Type": "AWS::SSM::Parameter",
                              "Properties": {"Type": "String", "Value": {"Ref": "Upstream"}}}},
    "Outputs": {"Chain": {"Value": {"Fn::Sub": "${Upstream}>${AWS::StackName}"}}},
}


def write_project(root: Path) -> Path:
    """COUNT stacks of one template; the second half each takes an output of one of the first."""
    (root / "leaf.json").write_text(json.dumps(LEAF))
    lines = ["name: wide", "stacks:"]
    for i in range(COUNT):
        lines.append(f"  s{i}:\n    template: leaf.json")
        if i >= COUNT // 2:
            lines.append(f"    parameters:\n      Upstream: !ref s{i - COUNT // 2}.outputs.Chain")
    (root / "formwright.yaml").write_text("\n".join(lines) + "\n")
    return root


def deployed_directly(project_dir: Path, cloud: Target) -> None:
    """The project's stacks made with CreateStack (one call each: a deploy through change sets would
    take four) and recorded as applied by the engine's own `remember`, as a deploy leaves them."""
    project = load_project(project_dir)
    stacks = prepare_stacks(project, target=cloud)
    group = StackGroup(project, stacks, cloud)
    runner, client = group.runner, cloud.client("cloudformation")
    outputs: dict[str, dict[str, str]] = {}
    for layer in (range(COUNT // 2), range(COUNT // 2, COUNT)):  # the first half's outputs feed the second
        prepared = {}
        for i in layer:
            stack = stacks[f"s{i}"]
            prepared[stack.stack_name] = stack, runner.prepare(stack, outputs)
            prep = prepared[stack.stack_name][1]
            client.create_stack(StackName=stack.stack_name, TemplateBody=prep.body,
                                Parameters=[{"ParameterKey": k, "ParameterValue": v}
                                            for k, v in prep.parameters.items()],
                                Tags=[{"Key": k, "Value": v} for k, v in stack.config.tags.items()])
        for page in client.get_paginator("describe_stacks").paginate():  # one listing, not a read each
            for data in page["Stacks"]:
                if data["StackName"] in prepared:
                    stack, prep = prepared[data["StackName"]]
                    info = StackInfo.from_api(data)
                    assert info.status == "CREATE_COMPLETE", info
                    runner.remember(stack, info, prep)
                    outputs[stack.name] = info.outputs


def test_a_500_stack_no_op_reads_each_stack_once_in_a_listing_as_its_plan_does(tmp_path: Path,
                                                                         cloud: Target) -> None:
    project_dir = write_project(tmp_path)
    deployed_directly(project_dir, cloud)

    # a fresh target: its clients are made after the hooks below, which count every request they send
    fresh = Target("local", cloud.region, cloud.endpoint)
    calls: Counter[str] = Counter()
    sent: list[str] = []
    fresh.core().register("before-call.cloudformation", lambda model, **_: calls.update([model.name]))
    fresh.core().register("before-send.cloudformation", lambda request, **_: sent.append(request.url))
    project = load_project(project_dir)
    counter = CallCounter()
    group = StackGroup(project, prepare_stacks(project, target=fresh), fresh, counter=counter)
    seen: Counter[str] = Counter()  # each stack's description in the answers, however many reads hold them
    fresh.core().register("after-call.cloudformation.DescribeStacks",
                          lambda parsed, **_: seen.update(s["StackName"] for s in parsed.get("Stacks", [])))
    results = group.deploy()

    assert Counter(r.outcome for r in results.values()) == {"unchanged": COUNT}
    assert results[f"s{COUNT - 1}"].outputs["Chain"] == f"root>wide-s{COUNT // 2 - 1}>wide-s{COUNT - 1}"
    # each stack read exactly once: in the listing read when the deploy began (its pages), none by name
    pages = sum(1 for _ in cloud.client("cloudformation").get_paginator("describe_stacks").paginate())
    assert pages < COUNT // 10
    assert dict(calls) == {"DescribeStacks": pages}
    assert set(seen.values()) == {1} and len(seen) == COUNT
    assert len(sent) == pages  # no retry, no call besides
    assert counter.writes == 0 and dict(counter.calls) == {"describe_stacks": pages}

    # a plan of that many stacks reads them from one listing (its pages), not one by one
    calls.clear()
    plans = StackGroup(project, prepare_stacks(project, target=fresh), fresh).plan()
    assert Counter(plan.kind for plan in plans.values()) == {"unchanged": COUNT}
    assert dict(calls) == {"DescribeStacks": pages} and pages < COUNT // 10
