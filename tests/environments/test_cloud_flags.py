"""`--profile` and `--region` on every command that calls the cloud, meaning the same everywhere.

The region is --region, else the project's `region:`, else AWS_REGION, else the profile's region (as the
AWS CLI and boto3 resolve it); a project region that wins over AWS_REGION is said once. End to end
through the CLI against the local cloud, which keeps regions apart as AWS does.
"""

from __future__ import annotations

import importlib
import json
import subprocess
from pathlib import Path
from typing import Any

import boto3
import pytest
import typer

QUEUE = """Resources:
  Q: {Type: AWS::SQS::Queue}
Outputs:
  Name: {Value: !GetAtt Q.QueueName}
"""
# the commands that call the cloud (expand: for AWS::Include from s3://, and the region macros see);
# local-cloud, validate, build, graph, package, transform, instance list|show|history and
# sync status|suspend|resume do not
CLOUD_COMMANDS = [
    "ls", "plan", "deploy", "delete", "status", "outputs", "diff", "events", "expand", "drift", "import",
    "adopt",
    "instance create", "instance update", "instance upgrade", "instance rollback", "instance retry",
    "instance run", "instance scope", "instance delete", "sync run", "sync reconcile",
]


def live_stacks(endpoint: str, region: str) -> set[str]:
    cfn = boto3.client("cloudformation", region_name=region, endpoint_url=endpoint,
                       aws_access_key_id="t", aws_secret_access_key="t")
    return {s["StackName"] for s in cfn.describe_stacks()["Stacks"] if s["StackStatus"] != "DELETE_COMPLETE"}


@pytest.fixture
def aws_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """An AWS config file with a profile whose region is eu-north-1 (and no AWS_REGION)."""
    config = tmp_path / "aws-config"
    config.write_text("[profile north]\nregion = eu-north-1\n")
    monkeypatch.delenv("AWS_REGION", raising=False)
    monkeypatch.delenv("AWS_DEFAULT_REGION", raising=False)
    return {"AWS_CONFIG_FILE": str(config)}


def all_commands() -> dict[str, Any]:
    """Every command of the program by its path ("instance create"), from a fresh application with every
    command module, as shell completion loads them."""
    from formwright.cli import main

    app = typer.Typer()
    for module in dict.fromkeys(main.COMMAND_MODULES.values()):
        importlib.import_module(module).register(app)
    found: dict[str, Any] = {}

    def walk(command: Any, path: list[str]) -> None:
        if hasattr(command, "commands"):
            for name, sub in command.commands.items():
                walk(sub, [*path, name])
        else:
            found[" ".join(path)] = command

    walk(typer.main.get_command(app), [])
    return found


def test_every_cloud_command_takes_profile_and_region() -> None:
    commands = all_commands()
    flags = {path: {opt for param in command.params for opt in getattr(param, "opts", [])}
             for path, command in commands.items()}
    for path in CLOUD_COMMANDS:
        assert {"--profile", "--region"} <= flags[path], path
    # every other command is one that makes no cloud call (a new command must be put in one list or the other)
    offline = {"init", "validate", "build", "graph", "history", "package", "completion", "transform tosca",
               "instance list", "instance show", "instance history", "sync status", "sync suspend",
               "sync resume", "local-cloud start", "local-cloud stop", "local-cloud status",
               "local-cloud reset", "show-plan", "import-sceptre"}
    assert set(commands) == set(CLOUD_COMMANDS) | offline


def test_project_commands_use_the_flags_and_the_profiles_region(tmp_path: Path, run_cli, cloud,
                                                                aws_config) -> None:
    (tmp_path / "queue.yaml").write_text(QUEUE)
    (tmp_path / "formwright.yaml").write_text("name: f\nstacks:\n  q: {template: queue.yaml}\n")
    west = run_cli("deploy", str(tmp_path), "--yes", "--region", "eu-west-1")
    assert west.code == 0, west.err
    assert live_stacks(cloud.endpoint, "eu-west-1") == {"f-q"}
    # the project names no region: the profile's is used (AWS_REGION unset)
    north = run_cli("deploy", str(tmp_path), "--yes", "--profile", "north", env=aws_config)
    assert north.code == 0, north.err
    assert live_stacks(cloud.endpoint, "eu-north-1") == {"f-q"}
    # the read-only commands look where they are told
    for command in ("status", "outputs", "events"):
        result = run_cli(command, str(tmp_path), "--region", "eu-west-1", "--output", "json")
        assert result.code == 0, (command, result.err)
    status = run_cli("status", str(tmp_path), "--region", "eu-west-1", "--output", "json").json()
    assert status["stacks"]["q"]["status"] == "CREATE_COMPLETE", status
    outputs = run_cli("outputs", str(tmp_path), "--profile", "north", "--output", "json",
                      env=aws_config).json()
    assert outputs["outputs"]["q"]["Name"], outputs
    missing = run_cli("status", str(tmp_path), "--region", "ap-south-2", "--output", "json").json()
    assert missing["stacks"]["q"]["status"] != "CREATE_COMPLETE", missing
    bad = run_cli("status", str(tmp_path), "--region", "mars-1")
    assert bad.code == 2 and bad.err.strip().count("\n") == 0, bad.err
    assert "--region mars-1: unknown region" in bad.err


def test_instance_commands_use_the_flags_and_stay_in_their_region(tmp_path: Path, run_cli, cloud,
                                                                  aws_config) -> None:
    (tmp_path / "queue.yaml").write_text(QUEUE)
    (tmp_path / "formwright.yaml").write_text(
        "name: inst\npolicies: {multiple_instances: true}\nstacks:\n"
        "  q: {template: queue.yaml, stack_name: '{{ instance.name }}-q'}\n")
    made = run_cli("instance", "create", "a", str(tmp_path), "--region", "eu-west-1", "--output", "json")
    assert made.code == 0, made.err
    assert live_stacks(cloud.endpoint, "eu-west-1") == {"a-q"}
    assert live_stacks(cloud.endpoint, "us-east-1") == set()
    # later commands find the instance where its stacks are, whatever AWS_REGION says now
    update = run_cli("instance", "update", "a", str(tmp_path), env={"AWS_REGION": "us-west-2"})
    assert update.code == 0, update.err
    assert "note: the region of instance 'a', eu-west-1 is used, not AWS_REGION us-west-2" in update.err
    assert live_stacks(cloud.endpoint, "us-west-2") == set()
    # an instance does not move: another --region is refused, one line, exit 2
    moved = run_cli("instance", "update", "a", str(tmp_path), "--region", "us-west-2")
    assert moved.code == 2 and moved.err.strip().count("\n") == 0, moved.err
    assert "instance 'a' has its stacks in eu-west-1, not us-west-2 (--region)" in moved.err
    # --profile: a new instance goes to the profile's region
    north = run_cli("instance", "create", "b", str(tmp_path), "--profile", "north", env=aws_config)
    assert north.code == 0, north.err
    assert live_stacks(cloud.endpoint, "eu-north-1") == {"b-q"}
    gone = run_cli("instance", "delete", "a", str(tmp_path), "--yes")
    assert gone.code == 0, gone.err
    assert live_stacks(cloud.endpoint, "eu-west-1") == set()


def test_sync_reconcile_uses_the_flags(tmp_path: Path, run_cli, cloud, aws_config) -> None:
    import yaml

    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "template.yaml").write_text(QUEUE)
    for args in (["init", "--quiet", "--initial-branch=main"], ["add", "-A"],
                 ["-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "--quiet", "-m", "q"]):
        subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, timeout=30)
    objects = tmp_path / "objects"
    objects.mkdir()
    (objects / "stacks.yaml").write_text(yaml.safe_dump_all([
        {"apiVersion": "source.toolkit.fluxcd.io/v1", "kind": "GitRepository",
         "metadata": {"name": "repo", "namespace": "default"},
         "spec": {"url": repo.as_uri(), "ref": {"branch": "main"}, "interval": "1m"}},
        {"apiVersion": "cloudformation.contrib.fluxcd.io/v1alpha1", "kind": "CloudFormationStack",
         "metadata": {"name": "app", "namespace": "default"},
         "spec": {"stackName": "sync-app", "sourceRef": {"kind": "GitRepository", "name": "repo"},
                  "templatePath": "template.yaml", "interval": "1m", "retryInterval": "1s"}},
    ]))
    west = run_cli("sync", "reconcile", "app", str(objects), "--region", "eu-west-1")
    assert west.code == 0, west.err
    assert live_stacks(cloud.endpoint, "eu-west-1") == {"sync-app"}
    north = run_cli("sync", "reconcile", "app", str(objects), "--profile", "north", "--state",
                    str(tmp_path / "state-north"), env=aws_config)
    assert north.code == 0, north.err
    assert live_stacks(cloud.endpoint, "eu-north-1") == {"sync-app"}
    assert live_stacks(cloud.endpoint, "us-east-1") == set()


def test_retry_of_a_create_goes_to_the_region_it_was_started_in(tmp_path: Path, run_cli, cloud) -> None:
    # the second stack imports an export nobody has yet: the create fails there (CloudFormation refuses the
    # import), the export is then made in eu-west-1 out of band, and a retry without --region must resume
    # in eu-west-1, where the import now resolves
    (tmp_path / "queue.yaml").write_text(QUEUE)
    (tmp_path / "importer.yaml").write_text("Resources:\n  Q: {Type: AWS::SQS::Queue}\n"
                                            "Outputs:\n  Up: {Value: !ImportValue late-export}\n")
    (tmp_path / "formwright.yaml").write_text(
        "name: r\nstacks:\n  first: {template: queue.yaml}\n"
        "  second: {template: importer.yaml, depends_on: [first]}\n")
    made = run_cli("instance", "create", "a", str(tmp_path), "--region", "eu-west-1")
    assert made.code != 0 and "late-export" in made.err, made.err
    west = boto3.client("cloudformation", region_name="eu-west-1", endpoint_url=cloud.endpoint,
                        aws_access_key_id="t", aws_secret_access_key="t")
    west.create_stack(StackName="exporter", TemplateBody="Resources:\n  Q: {Type: AWS::SQS::Queue}\n"
                      "Outputs:\n  U: {Value: !Ref Q, Export: {Name: late-export}}\n")
    retried = run_cli("instance", "retry", "a", str(tmp_path))
    assert retried.code == 0, retried.err
    assert live_stacks(cloud.endpoint, "eu-west-1") == {"exporter", "r-first", "r-second"}
    assert live_stacks(cloud.endpoint, "us-east-1") == set()


def test_expand_gives_macros_the_region_of_the_flags(tmp_path: Path, run_cli, cloud, aws_config) -> None:
    # a macro's event carries the region, as CloudFormation's does (its account and region); --region,
    # else AWS_REGION, else the profile's region
    macros = tmp_path / "macros"
    macros.mkdir()
    (macros / "Stamp.py").write_text(
        "def handler(event, context):\n"
        "    fragment = dict(event['fragment'])\n"
        "    fragment['Outputs'] = {'Region': {'Value': event['region']}}\n"
        "    return {'requestId': event['requestId'], 'status': 'success', 'fragment': fragment}\n")
    template = tmp_path / "t.yaml"
    template.write_text("Transform: Stamp\nResources:\n  Q: {Type: AWS::SQS::Queue}\n")

    def region(*flags: str, env: dict[str, str] | None = None) -> str:
        result = run_cli("expand", str(template), "--macros", str(macros), *flags, env=env)
        assert result.code == 0, result.err
        return json.loads(result.out)["Outputs"]["Region"]["Value"]

    assert region("--region", "ap-south-1") == "ap-south-1"
    assert region("--profile", "north", env=aws_config) == "eu-north-1"
    assert region(env={**aws_config, "AWS_REGION": "sa-east-1"}) == "sa-east-1"
    missing = run_cli("expand", str(template), "--macros", str(macros), "--profile", "nope", env=aws_config)
    assert missing.code == 2 and missing.err.strip().count("\n") == 0, missing.err
