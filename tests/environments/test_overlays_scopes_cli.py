"""Environments from overlay files, --env on every project command, and scopes, end to end through the CLI
against the local cloud.

An environment is `environments: {NAME: {...}}` in formwright.yaml and/or `environments/NAME.yaml` (the file
winning key by key, as a later Helm values file does); scopes select a group, `group.stack`, a stack or one
region's copy, as Paco's scopes select part of its model tree.
"""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Any

import boto3
import pytest
import typer

ACCOUNT = "123456789012"  # the local cloud's default caller
ROLE = f"arn:aws:iam::{ACCOUNT}:role"
QUEUE = """Parameters:
  Upstream: {Type: String}
  Size: {Type: String}
Resources:
  Q: {Type: AWS::SQS::Queue}
Outputs:
  Echo: {Value: !Ref Upstream}
  Size: {Value: !Ref Size}
"""
PROJECT = f"""name: ov
region: us-east-1
vars: {{size: small}}
tags: {{team: web}}
service_role: {ROLE}/cfn-base
environments:
  prod:
    vars: {{size: medium}}
    tags: {{env: prod}}
groups:
  net:
    stacks:
      vpc: {{template: queue.yaml, parameters: {{Upstream: none, Size: "{{{{ var.size }}}}"}}}}
  app:
    service_role: {ROLE}/cfn-app
    stacks:
      api: {{template: queue.yaml, parameters: {{Upstream: !ref vpc.outputs.Size, Size: s}}}}
      web:
        template: queue.yaml
        service_role: {ROLE}/cfn-web
        parameters: {{Upstream: !ref api.outputs.Echo, Size: s}}
stacks:
  report: {{template: queue.yaml, parameters: {{Upstream: x, Size: "{{{{ environment or 'none' }}}}"}}}}
"""
PROD_FILE = f"""# prod: its region and sizes; the inline `environments.prod` applies where this file is silent
region: eu-west-1
vars: {{size: large}}
groups:
  app:
    service_role: {ROLE}/cfn-app-prod
    stacks:
      api: {{parameters: {{Size: xl}}}}
"""


@pytest.fixture
def overlaid(tmp_path: Path) -> Path:
    (tmp_path / "queue.yaml").write_text(QUEUE)
    (tmp_path / "formwright.yaml").write_text(PROJECT)
    (tmp_path / "environments").mkdir()
    (tmp_path / "environments" / "prod.yaml").write_text(PROD_FILE)
    (tmp_path / "environments" / "qa.yaml").write_text("vars: {size: tiny}\n")  # a file-only environment
    return tmp_path


def described(endpoint: str, region: str) -> dict[str, dict[str, Any]]:
    """Live stacks of the default account in `region`: name -> outputs, tags and RoleARN."""
    cfn = boto3.client("cloudformation", region_name=region, endpoint_url=endpoint, aws_access_key_id="t",
                       aws_secret_access_key="t")
    return {s["StackName"]: {"outputs": {o["OutputKey"]: o["OutputValue"] for o in s.get("Outputs", [])},
                             "tags": {t["Key"]: t["Value"] for t in s.get("Tags", [])},
                             "role": s.get("RoleARN")}
            for s in cfn.describe_stacks()["Stacks"] if s["StackStatus"] != "DELETE_COMPLETE"}


def test_overlay_files_over_inline_environments(overlaid: Path, run_cli, cloud) -> None:
    prod = run_cli("deploy", str(overlaid), "--env", "prod", "--yes")
    assert prod.code == 0, prod.err
    live = described(cloud.endpoint, "eu-west-1")  # the file's region
    assert set(live) == {"ov-prod-vpc", "ov-prod-api", "ov-prod-web", "ov-prod-report"}
    assert live["ov-prod-vpc"]["outputs"]["Size"] == "large"  # the file's vars over the inline ones
    assert live["ov-prod-api"]["outputs"] == {"Echo": "large", "Size": "xl"}  # a parameter of a group's stack
    assert live["ov-prod-report"]["outputs"]["Size"] == "prod"
    # tags merge key by key: the project's, then the inline environment's (the file sets none)
    assert {"team": "web", "env": "prod"}.items() <= live["ov-prod-vpc"]["tags"].items()
    # service_role (CloudFormation's RoleARN) flows project -> group -> stack; the overlay changes the group's
    assert {n: s["role"] for n, s in live.items()} == {
        "ov-prod-vpc": f"{ROLE}/cfn-base", "ov-prod-report": f"{ROLE}/cfn-base",
        "ov-prod-api": f"{ROLE}/cfn-app-prod", "ov-prod-web": f"{ROLE}/cfn-web"}

    qa = run_cli("deploy", str(overlaid), "--yes", env={"FORMWRIGHT_ENV": "qa"})
    assert qa.code == 0, qa.err
    east = described(cloud.endpoint, "us-east-1")
    assert east["ov-qa-vpc"]["outputs"]["Size"] == "tiny" and east["ov-qa-api"]["role"] == f"{ROLE}/cfn-app"
    # without --env a project with environments is refused: no third, unnamed set of stacks (issue 31)
    base = run_cli("deploy", str(overlaid), "--yes")
    assert base.code == 2 and "name one with --env" in base.err, base.err
    east = described(cloud.endpoint, "us-east-1")
    assert "ov-vpc" not in east
    assert {n for n in east if n.startswith("ov-qa-")} == {f"ov-qa-{n}" for n in ("vpc", "api", "web",
                                                                                    "report")}


@pytest.mark.parametrize(("overlay", "line", "message"), [
    ("region: eu-west-1\nvars: {size: '{{ var.nope }}'}\n", 2, "undefined in '{{ var.nope }}'"),
    ("# a comment\nstacks:\n  api: {parameters: {Size: m}}\n", 3,
     "environment 'prod' sets unknown stack 'api' (stack 'api' is in group 'app': set it under groups: "
     "{app: {stacks: {api: ...}}})"),
    ("groups:\n  app:\n    stacks:\n      apo: {parameters: {Size: m}}\n", 4,
     "environment 'prod' sets unknown stack 'apo' in group 'app' (did you mean 'api'?)"),
    ("stacks:\n  report:\n    parameters: {Upstream: !ref vcp.outputs.Size}\n", 3,
     "!ref vcp.outputs.Size names unknown stack 'vcp' (did you mean 'vpc'?)"),
    ("\nregion: europe\n", 2, "unknown region 'europe'"),
])
def test_a_mistake_in_an_overlay_file_is_reported_at_its_own_line(overlaid: Path, run_cli, overlay: str,
                                                                  line: int, message: str) -> None:
    (overlaid / "environments" / "prod.yaml").write_text(overlay)
    result = run_cli("validate", str(overlaid), "--env", "prod")
    assert result.code == 2 and result.err.strip().count("\n") == 0, result.err
    assert f"{overlaid / 'environments' / 'prod.yaml'}:{line}: {message}" in result.err, result.err
    # the CI gate without --env loads every environment too: the mistake fails it, named with its environment
    gate = run_cli("validate", str(overlaid), "--no-lint")
    assert gate.code == 2 and gate.err.strip().count("\n") == 0, gate.err
    assert f"{overlaid / 'environments' / 'prod.yaml'}:{line}: environment 'prod': {message}" in gate.err


# every command that reads the project takes --env (and FORMWRIGHT_ENV), --var, --var-file
PROJECT_COMMANDS = ["validate", "build", "graph", "plan", "deploy", "delete", "status", "outputs", "diff",
                    "events", "drift", "import"]


def test_every_project_command_reads_the_environment(overlaid: Path, run_cli, cloud) -> None:
    from formwright.cli import main

    app = typer.Typer()
    for module in dict.fromkeys(main.COMMAND_MODULES.values()):
        importlib.import_module(module).register(app)
    root: Any = typer.main.get_command(app)
    for flag in ("--env", "--var", "--var-file"):
        having = {name for name, command in root.commands.items()
                  if any(flag in getattr(p, "opts", []) for p in command.params)}
        assert having == set(PROJECT_COMMANDS), flag
    for command in PROJECT_COMMANDS:
        extra = ["--yes"] if command in ("deploy", "delete") else []
        if command == "import":  # `import [DIR] STACK LOGICAL_ID=IDENTIFIER…`
            extra = ["vpc", "Vpc=vpc-123", "--yes"]
        for how in ({"args": ["--env", "staging"]}, {"args": [], "env": {"FORMWRIGHT_ENV": "staging"}}):
            result = run_cli(command, str(overlaid), *how["args"], *extra, env=how.get("env"))
            assert result.code == 2 and result.err.strip().count("\n") == 0, (command, result.err)
            assert "unknown environment 'staging' (environments: prod, qa)" in result.err, command

    # and each works in the environment it names
    assert run_cli("deploy", str(overlaid), "--env", "prod", "--yes").code == 0
    assert run_cli("validate", str(overlaid), "--env", "prod").code == 0
    built = run_cli("build", str(overlaid), "--env", "qa")
    assert built.code == 0, built.err
    assert (overlaid / ".formwright" / "build" / "qa" / "vpc" / "processed.json").is_file()
    graph = run_cli("graph", str(overlaid), "--env", "prod", "--output", "json")
    assert graph.code == 0, graph.err
    assert "ov-prod-web" in graph.out and "ov-web" not in graph.out
    status = run_cli("status", str(overlaid), "--env", "prod", "--output", "json").json()
    assert {n: s["status"] for n, s in status["stacks"].items()} == dict.fromkeys(
        ("vpc", "api", "web", "report"), "CREATE_COMPLETE")
    outputs = run_cli("outputs", str(overlaid), "api", "Size", env={"FORMWRIGHT_ENV": "prod"})
    assert outputs.code == 0 and outputs.out.strip() == "xl", outputs.err
    diff = run_cli("diff", str(overlaid), "--env", "prod", "--exit-code")
    assert diff.code == 0, diff.out + diff.err
    changed = run_cli("diff", str(overlaid), "--env", "prod", "--var", "size=huge", "--exit-code")
    assert changed.code == 1 and "huge" in changed.out, changed.out + changed.err
    events = run_cli("events", str(overlaid), "--env", "prod", "-s", "vpc", "--output", "json")
    assert events.code == 0 and "ov-prod-vpc" in events.out, events.err
    gone = run_cli("delete", str(overlaid), "--env", "prod", "--yes")
    assert gone.code == 0, gone.err
    assert described(cloud.endpoint, "eu-west-1") == {}


def test_scopes_deploy_what_they_need_and_delete_what_needs_them(overlaid: Path, run_cli, cloud) -> None:
    # `group.stack` deploys that stack and the stacks it needs (here in another group), nothing else; without
    # DIR (run inside the project, as a user does) the first word is the scope, not a folder
    api = run_cli("deploy", "app.api", "--env", "prod", "--yes", "--output", "json", cwd=overlaid)
    assert api.code == 0, api.err
    assert set(api.json()["stacks"]) == {"vpc", "api"}
    assert set(described(cloud.endpoint, "eu-west-1")) == {"ov-prod-vpc", "ov-prod-api"}
    # a group; a stack by its own name; each of plan, status and outputs scoped alike
    app = run_cli("deploy", str(overlaid), "app", "--env", "prod", "--yes", "--output", "json")
    assert app.code == 0 and set(app.json()["stacks"]) == {"vpc", "api", "web"}, app.err
    plan = run_cli("plan", str(overlaid), "net", "report", "--env", "prod", "--output", "json")
    assert plan.code == 0 and set(plan.json()["plans"]) == {"vpc", "report"}, plan.err
    kinds = {name: p["kind"] for name, p in plan.json()["plans"].items()}
    assert kinds == {"vpc": "unchanged", "report": "create"}
    status = run_cli("status", ".", "net.vpc", "--env", "prod", "--output", "json", cwd=overlaid)
    assert status.code == 0 and set(status.json()["stacks"]) == {"vpc"}, status.err
    outputs = run_cli("outputs", str(overlaid), "app", "--env", "prod", "--output", "json")
    assert outputs.code == 0 and set(outputs.json()["outputs"]) == {"api", "web"}, outputs.err
    value = run_cli("outputs", "app.api", "Size", "--env", "prod", cwd=overlaid)
    assert value.code == 0 and value.out == "xl\n", value.err
    several = run_cli("outputs", "app", "Size", "--env", "prod", cwd=overlaid)
    assert several.code == 2 and "'app' is 2 stacks (api, web); an output KEY is read from one" in several.err
    for command in (["deploy", "--yes"], ["status"]):
        unknown = run_cli(command[0], "ap.api", *command[1:], "--env", "prod", cwd=overlaid)
        assert unknown.code == 2 and "unknown stack 'ap.api'" in unknown.err, unknown.err

    # delete of a group takes the stacks that depend on it, listed (with why) before anything goes
    net = run_cli("delete", str(overlaid), "net", "--env", "prod", "--yes")
    assert net.code == 0, net.err
    listing = net.out[net.out.index("will delete, in this order:"):]
    assert listing.index("ov-prod-web (depends on api)") < listing.index("ov-prod-api (depends on vpc)") \
        < listing.index("ov-prod-vpc\n")
    assert described(cloud.endpoint, "eu-west-1") == {}


def test_a_written_stack_name_never_lets_one_environment_change_anothers_stack(tmp_path: Path, run_cli,
                                                                              cloud) -> None:
    # default names carry the environment; a written stack_name does not, and dev's stack must not become
    # prod's by an update in place (sceptre's names always differ: they come from the environment's folder)
    (tmp_path / "queue.yaml").write_text(QUEUE)
    project = """name: named
environments:
  dev: {}
  prod: {vars: {size: large}}
vars: {size: small}
stacks:
  registry: {template: queue.yaml, stack_name: org-registry, parameters: {Upstream: x, Size: s}}
  queue: {template: queue.yaml, stack_name: the-queue, parameters: {Upstream: x, Size: "{{ var.size }}"}}
"""
    (tmp_path / "formwright.yaml").write_text(project)
    dev = run_cli("deploy", str(tmp_path), "--env", "dev", "--yes")
    assert dev.code == 2 and dev.err.strip().count("\n") == 0, dev.err
    assert (f"{tmp_path / 'formwright.yaml'}:8: stack 'queue' is CloudFormation stack 'the-queue' in "
            "environment 'prod' too, with the same credentials and region but another definition: deploying "
            "'dev' would change it") in dev.err
    assert described(cloud.endpoint, "us-east-1") == {}  # before any write
    # a stack both define alike is one shared stack; a name per environment, or another region, keeps apart
    (tmp_path / "formwright.yaml").write_text(project.replace("stack_name: the-queue",
                                                              "stack_name: \"{{ environment }}-queue\""))
    for env in ("dev", "prod"):
        assert run_cli("deploy", str(tmp_path), "--env", env, "--yes").code == 0
    assert set(described(cloud.endpoint, "us-east-1")) == {"org-registry", "dev-queue", "prod-queue"}
    elsewhere = project.replace("prod: {vars", "prod: {region: eu-west-1, vars")
    (tmp_path / "formwright.yaml").write_text(elsewhere)
    prod = run_cli("deploy", str(tmp_path), "--env", "prod", "--yes")
    assert prod.code == 0, prod.err
    assert set(described(cloud.endpoint, "eu-west-1")) == {"org-registry", "the-queue"}
    # the CI gate finds it too, without --env
    (tmp_path / "formwright.yaml").write_text(project)
    gate = run_cli("validate", str(tmp_path), "--no-lint")
    assert gate.code == 2, gate.err
    assert "environment 'dev': stack 'queue' is CloudFormation stack 'the-queue'" in gate.err
