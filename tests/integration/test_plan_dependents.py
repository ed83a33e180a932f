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

    # saved and applied: the dependents' change sets are made once the VPC is replaced, and executed since
    # they do nothing the plan did not show (their may-change replacements)
    saved = tmp_path / "plan.json"
    assert run_cli("plan", str(project), "-o", str(saved)).code == 0
    applied = run_cli("deploy", str(project), "--plan", str(saved), "--output", "json")
    assert applied.code == 0, applied.out + applied.err
    new_vpc = applied.json()["outputs"]["network"]["VpcId"]
    assert new_vpc != old_vpc
    app = cloud.client("cloudformation").describe_stacks(StackName="three-tier-app")["Stacks"][0]
    assert {p["ParameterKey"]: p["ParameterValue"] for p in app["Parameters"]}["VpcId"] == new_vpc


def three_tier(tmp_path: Path, run_cli) -> Path:
    project = tmp_path / "three-tier"
    shutil.copytree(EXAMPLE, project, ignore=shutil.ignore_patterns(".formwright"))
    first = run_cli("deploy", str(project), "-y", "--output", "json")
    assert first.code == 0, first.err
    return project


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, (path, old)
    path.write_text(text.replace(old, new, 1))


def test_an_in_place_upstream_change_leaves_its_dependents_planned_precisely(tmp_path: Path, run_cli,
                                                                             cloud) -> None:
    # issue 22's scenario: a tag on the VPC (Replacement False) and GroupDescription of the app's security
    # group (create-only: a replacement). `Ref Vpc` of a resource updated in place keeps its value, so the
    # app is planned with a real change set and its replacement is shown, in the plan and in the prompt.
    project = three_tier(tmp_path, run_cli)
    edit(project / "templates" / "network.yaml", "      EnableDnsHostnames: true\n",
         "      EnableDnsHostnames: true\n      Tags:\n        - {Key: tier, Value: net}\n")
    edit(project / "templates" / "app.yaml", "GroupDescription: app servers", "GroupDescription: app tier")
    plan = run_cli("plan", str(project), "--output", "json")
    assert plan.code == 0, plan.err
    plans = plan.json()["plans"]
    [vpc] = plans["network"]["resources"]
    assert (vpc["logical_id"], vpc["replacement"]) == ("Vpc", "False")
    assert plans["network"]["unknown_outputs"] == {}  # VpcId, both subnets: kept
    assert plans["database"]["kind"] == "unchanged"
    app = plans["app"]
    assert app["unknown_parameters"] == {} and "known after apply" not in app["note"]
    group = next(r for r in app["resources"] if r["logical_id"] == "AppSecurityGroup")
    assert (group["action"], group["replacement"], group["may_change"]) == ("Modify", "True", False)
    totals = plan.json()["totals"]
    assert (totals["add"], totals["remove"], totals["unchanged_stacks"], totals["may_change"]) == (0, 0, 1, 0)
    assert totals["replacement"] >= 1

    text = run_cli("plan", str(project)).out
    assert "known after apply" not in text
    dangers = text.split("Replacements and removals:")[1]
    assert "app/AppSecurityGroup" in dangers.split("\n\n")[0]
    assert text.index("app/AppSecurityGroup") < text.index("network (three-tier-network): update")
    assert "unchanged: database" in text
    assert "Plan: 0 to add, " in text.splitlines()[-1] and "1 stack unchanged" in text.splitlines()[-1]

    # the deploy prompt shows the same (declined: nothing changes)
    from tests.cli.terminal import answer_in_terminal

    code, shown = answer_in_terminal("deploy", str(project), answer="n")
    assert code == 4, shown
    assert "app/AppSecurityGroup" in shown and "Plan: 0 to add, " in shown
    assert shown.index("Plan: 0 to add, ") < shown.index("Deploy these changes?")


def test_getatt_of_a_replaced_resource_makes_its_users_may_change_with_the_replacement(tmp_path: Path,
                                                                                      run_cli, cloud) -> None:
    # database's SecurityGroupId is GetAtt SecurityGroup.GroupId: replacing the group (a new description)
    # gives a new id, so the app's ingress rule using it may change; GroupId is create-only for
    # AWS::EC2::SecurityGroupIngress in its provider schema: at worst a replacement
    project = three_tier(tmp_path, run_cli)
    edit(project / "templates" / "database.yaml", "GroupDescription: database access",
         "GroupDescription: database tier")
    plan = run_cli("plan", str(project), "--output", "json")
    assert plan.code == 0, plan.err
    plans = plan.json()["plans"]
    assert "SecurityGroupId" in plans["database"]["unknown_outputs"]
    assert "TableName" not in plans["database"]["unknown_outputs"]  # Ref Table: the table is untouched
    app = plans["app"]
    assert set(app["unknown_parameters"]) == {"DatabaseSecurityGroup"}
    assert "SecurityGroup" in app["unknown_parameters"]["DatabaseSecurityGroup"]
    ingress = next(r for r in app["resources"] if r["logical_id"] == "DatabaseIngress")
    assert ingress["may_change"] is True and ingress["replacement"] == "True"
    assert "DatabaseSecurityGroup known after apply" in ingress["because"]
    assert {r["logical_id"] for r in app["resources"]} == {"DatabaseIngress"}  # nothing else uses it
    text = run_cli("plan", str(project)).out
    assert "may change" in text and "DatabaseSecurityGroup known after apply" in text
    assert "may replace  app/DatabaseIngress" in text


CHAIN_TEMPLATE = """\
Parameters:
  Upstream: {Type: String, Default: root}
Resources:
  Queue:
    Type: AWS::SQS::Queue
    Properties:
      VisibilityTimeout: 30
  Name:
    Type: AWS::SSM::Parameter
    Properties: {Type: String, Value: !Ref Upstream}
Outputs:
  QueueArn: {Value: !GetAtt Queue.Arn}
  QueueUrl: {Value: !Ref Queue}
"""


def test_a_chain_of_four_is_planned_precisely_when_only_the_head_changes_a_tag(tmp_path: Path, run_cli,
                                                                               cloud) -> None:
    # a tag on the head's queue: an update in place, `Ref Queue` and `GetAtt Queue.Arn` (an identifier)
    # keep their values, so every dependent is planned on known inputs, transitively
    for i in range(4):
        (tmp_path / f"s{i}.yaml").write_text(CHAIN_TEMPLATE)
    stacks = "".join(f"  s{i}:\n    template: s{i}.yaml\n" +
                     (f"    parameters: {{Upstream: !ref s{i - 1}.outputs.QueueArn}}\n" if i else "")
                     for i in range(4))
    (tmp_path / "formwright.yaml").write_text(f"name: chain\nstacks:\n{stacks}")
    assert run_cli("deploy", str(tmp_path), "-y").code == 0
    edit(tmp_path / "s0.yaml", "      VisibilityTimeout: 30\n",
         "      VisibilityTimeout: 30\n      Tags: [{Key: team, Value: a}]\n")
    edit(tmp_path / "s3.yaml", "VisibilityTimeout: 30", "VisibilityTimeout: 45")  # the tail's own change
    plan = run_cli("plan", str(tmp_path), "--output", "json")
    assert plan.code == 0, plan.err
    plans = plan.json()["plans"]
    assert plans["s0"]["unknown_outputs"] == {}
    assert [plans[f"s{i}"]["kind"] for i in (1, 2)] == ["unchanged", "unchanged"]
    assert plans["s3"]["unknown_parameters"] == {}
    [queue] = plans["s3"]["resources"]
    assert (queue["logical_id"], queue["may_change"]) == ("Queue", False)
    assert plan.json()["totals"] == {"add": 0, "change": 2, "replacement": 0, "remove": 0, "may_change": 0,
                                     "unchanged_stacks": 2, "unsettled_stacks": 0}
