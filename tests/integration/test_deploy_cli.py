"""End to end through the real CLI against the local cloud: plan, deploy, no-op, update, delete."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "three-tier"


@pytest.fixture
def three_tier(tmp_path: Path) -> Path:
    target = tmp_path / "three-tier"
    shutil.copytree(EXAMPLE, target, ignore=shutil.ignore_patterns(".formwright"))
    return target


def test_three_tier_lifecycle(three_tier: Path, run_cli, cloud) -> None:
    assert run_cli("validate", str(three_tier)).code == 0

    plan = run_cli("plan", str(three_tier), "--output", "json")
    assert plan.code == 0, plan.err
    plans = plan.json()["plans"]
    assert {n: p["kind"] for n, p in plans.items()} == {
        "network": "create",
        "database": "create",
        "app": "create",
    }
    assert {r["logical_id"] for r in plans["network"]["resources"]} == {
        "Vpc",
        "PrivateSubnetA",
        "PrivateSubnetB",
    }
    assert "known after apply" in plans["app"]["note"]
    cf = cloud.client("cloudformation")
    assert cf.describe_stacks()["Stacks"] == []  # plan removed its change sets and empty stacks

    first = run_cli("deploy", str(three_tier), "-y", "--output", "json")
    assert first.code == 0, first.err
    data = first.json()
    assert {n: s["outcome"] for n, s in data["stacks"].items()} == {
        "network": "created",
        "database": "created",
        "app": "created",
    }
    vpc = data["outputs"]["network"]["VpcId"]
    app = cf.describe_stacks(StackName="three-tier-app")["Stacks"][0]
    assert {p["ParameterKey"]: p["ParameterValue"] for p in app["Parameters"]}["VpcId"] == vpc
    assert {t["Key"]: t["Value"] for t in app["Tags"]} == {"project": "three-tier", "stage": "demo",
                                                           "formwright:project": "three-tier",
                                                           "formwright:stack": "app"}

    again = run_cli("deploy", str(three_tier), "-y", "--output", "json")
    assert again.code == 0
    assert {s["outcome"] for s in again.json()["stacks"].values()} == {"unchanged"}
    assert again.json()["write_calls"] == 0

    app_template = three_tier / "templates" / "app.yaml"
    app_template.write_text(app_template.read_text().replace("VisibilityTimeout: 60", "VisibilityTimeout: 90")
                            .replace("Outputs:", "  DeadLetters:\n    Type: AWS::SQS::Queue\nOutputs:", 1))
    diff = run_cli("diff", str(three_tier), "--output", "json")
    assert diff.json()["changed"] == ["app"]
    plan = run_cli("plan", str(three_tier), "--output", "json").json()["plans"]
    assert plan["network"]["kind"] == "unchanged" and plan["database"]["kind"] == "unchanged"
    actions = {(r["action"], r["logical_id"]) for r in plan["app"]["resources"]}
    assert ("Add", "DeadLetters") in actions and ("Modify", "Jobs") in actions

    update = run_cli("deploy", str(three_tier), "-y", "--output", "json")
    assert update.code == 0, update.err
    outcomes = {n: s["outcome"] for n, s in update.json()["stacks"].items()}
    assert outcomes == {"network": "unchanged", "database": "unchanged", "app": "updated"}
    resources = cf.describe_stack_resources(StackName="three-tier-app")["StackResources"]
    assert "DeadLetters" in {r["LogicalResourceId"] for r in resources}

    forced = run_cli("deploy", str(three_tier), "-y", "--force", "--output", "json")
    assert {s["outcome"] for s in forced.json()["stacks"].values()} == {"no changes"}

    outputs = run_cli("outputs", str(three_tier), "--output", "json").json()["outputs"]
    assert outputs["network"]["VpcId"] == vpc
    status = run_cli("status", str(three_tier), "--output", "json").json()["stacks"]
    assert {s["status"] for s in status.values()} <= {"CREATE_COMPLETE", "UPDATE_COMPLETE"}

    deleted = run_cli("delete", str(three_tier), "-y", "--output", "json")
    assert deleted.code == 0, deleted.err
    assert {s["outcome"] for s in deleted.json()["stacks"].values()} == {"deleted"}
    live = [s for s in cf.describe_stacks()["Stacks"] if s["StackStatus"] != "DELETE_COMPLETE"]
    assert live == []


def test_text_output_and_progress_lines(three_tier: Path, run_cli, cloud) -> None:
    result = run_cli("deploy", str(three_tier), "-y")
    assert result.code == 0, result.err
    assert "outputs" in result.out and "VpcId" in result.out
    assert "network: creating" in result.err and "app: done CREATE_COMPLETE" in result.err


def test_deploy_without_yes_when_not_interactive_refuses(three_tier: Path, run_cli, cloud) -> None:
    result = run_cli("deploy", str(three_tier))
    assert result.code == 2
    assert "needs confirmation" in result.err and "--yes" in result.err
    assert cloud.client("cloudformation").describe_stacks()["Stacks"] == []


def test_graph_is_dot(three_tier: Path, run_cli) -> None:
    result = run_cli("graph", str(three_tier))
    assert result.code == 0
    assert '"network" -> "database";' in result.out and '"database" -> "app";' in result.out


def test_plan_keep_leaves_change_sets_and_deploy_creates_from_review_in_progress(three_tier: Path, run_cli,
                                                                                  cloud) -> None:
    kept = run_cli("plan", str(three_tier), "--keep", "--output", "json")
    assert kept.code == 0, kept.err
    change_set = kept.json()["plans"]["network"]["change_set_id"]
    cf = cloud.client("cloudformation")
    assert (
        cf.describe_stacks(StackName="three-tier-network")["Stacks"][0]["StackStatus"] == "REVIEW_IN_PROGRESS"
    )
    assert cf.describe_change_set(ChangeSetName=change_set)["Status"] == "CREATE_COMPLETE"
    result = run_cli("deploy", str(three_tier), "-y", "--output", "json")
    assert result.code == 0, result.err
    assert result.json()["stacks"]["network"]["outcome"] == "created"


def test_delete_needs_yes_off_a_terminal(three_tier: Path, run_cli, cloud) -> None:
    assert run_cli("deploy", str(three_tier), "-y").code == 0
    refused = run_cli("delete", str(three_tier))
    assert refused.code == 2 and "--yes" in refused.err
    assert len(cloud.client("cloudformation").describe_stacks()["Stacks"]) == 3


def test_graph_renders_svg_with_graphviz(three_tier: Path, run_cli, tmp_path: Path) -> None:
    out = tmp_path / "graph.svg"
    result = run_cli("graph", str(three_tier), "--format", "svg", "--out", str(out))
    if shutil.which("dot") is None:  # make test installs graphviz; without it the error must be clear
        assert result.code == 2 and "needs Graphviz" in result.err
        return
    assert result.code == 0, result.err
    assert out.read_text().lstrip().startswith(("<?xml", "<svg")) and "database" in out.read_text()


def test_init_starter_validates_and_deploys(tmp_path: Path, run_cli, cloud) -> None:
    project = tmp_path / "starter"
    created = run_cli("init", str(project), "--name", "starter")
    assert created.code == 0, created.err
    assert run_cli("validate", str(project)).code == 0
    deployed = run_cli("deploy", str(project), "-y", "--output", "json")
    assert deployed.code == 0, deployed.err
    assert set(deployed.json()["outputs"]["app"]) == {"QueueUrl"}
    again = run_cli("init", str(project))
    assert again.code == 2 and "a project already exists here" in again.err


def test_help_lists_every_command_group_and_each_loads_alone(run_cli) -> None:
    listing = run_cli("--help")
    assert listing.code == 0
    for group in ("deploy", "local-cloud", "expand", "transform", "instance", "history", "sync"):
        assert f"\n  {group} " in listing.out, group
        assert run_cli(group, "--help").code == 0, group


def test_json_output_never_prompts(three_tier: Path, run_cli, cloud) -> None:
    result = run_cli("deploy", str(three_tier), "--output", "json")
    # issue #16: in JSON mode the error is the JSON envelope on stdout, with the same exit code
    assert result.code == 2
    error = result.json()["errors"][0]
    assert result.json()["ok"] is False and "--output json cannot ask" in error["message"]
    assert error["hint"] == "add --yes (-y)"


def test_markup_in_messages_is_printed_as_written(tmp_path: Path, run_cli) -> None:
    (tmp_path / "formwright.yaml").write_text("name: p\nstacks:\n  a: {template: '[/x]missing.yaml'}\n")
    result = run_cli("validate", str(tmp_path))
    assert result.code == 2 and "[/x]missing.yaml" in result.err and "internal error" not in result.err
