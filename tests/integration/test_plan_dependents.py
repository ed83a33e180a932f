"""A plan never calls a stack unchanged while a stack it takes outputs from is changing.

Terraform's "(known after apply)" is the model: a replaced VPC gets a new id, so every stack taking
`!ref network.outputs.VpcId` will change although its own inputs, read from what is deployed now,
look the same. CloudFormation itself cannot say more before the upstream change set executes."""

from __future__ import annotations

import shutil
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "three-tier"


def test_dependents_of_a_replaced_vpc_are_planned_with_inputs_known_after_apply(tmp_path: Path, run_cli,
                                                                                cloud) -> None:
    project = tmp_path / "three-tier"
    shutil.copytree(EXAMPLE, project, ignore=shutil.ignore_patterns(".formwright"))
    first = run_cli("deploy", str(project), "-y", "--output", "json")
    assert first.code == 0, first.err
    old_vpc = first.json()["outputs"]["network"]["VpcId"]

    config = project / "formwright.yaml"
    config.write_text(config.read_text().replace("10.20.", "10.30."))  # CidrBlock is create-only: replaced
    plan = run_cli("plan", str(project), "--output", "json")
    assert plan.code == 0, plan.err
    plans = plan.json()["plans"]
    vpc = next(r for r in plans["network"]["resources"] if r["logical_id"] == "Vpc")
    assert vpc["replacement"] == "True"
    for dependent in ("database", "app"):
        assert plans[dependent]["kind"] != "unchanged", plans[dependent]
        assert "VpcId (!ref network.outputs.VpcId)" in plans[dependent]["note"]

    text = run_cli("plan", str(project))
    assert "known after apply" in text.out

    applied = run_cli("deploy", str(project), "-y", "--output", "json")
    assert applied.code == 0, applied.err
    new_vpc = applied.json()["outputs"]["network"]["VpcId"]
    assert new_vpc != old_vpc
    app = cloud.client("cloudformation").describe_stacks(StackName="three-tier-app")["Stacks"][0]
    assert {p["ParameterKey"]: p["ParameterValue"] for p in app["Parameters"]}["VpcId"] == new_vpc
