"""Instances in an environment: `instance create NAME --env prod` renders the project with prod's overlay, and
the instance keeps that environment for every later operation (as it keeps its region), end to end through
the CLI against the local cloud."""

from __future__ import annotations

from pathlib import Path

import boto3

QUEUE = """Parameters:
  Size: {Type: String}
Resources:
  Q: {Type: AWS::SQS::Queue}
Outputs:
  Size: {Value: !Ref Size}
"""
PROJECT = """name: inst
inputs:
  - {name: size, type: string, default: small}
environments:
  prod: {region: eu-west-1, tags: {env: prod}}
  dev: {}
stacks:
  q: {template: queue.yaml, parameters: {Size: "{{ input('size') }}"}}
"""


def live(endpoint: str, region: str) -> dict[str, dict[str, str]]:
    """Stacks of the default account in `region`: name -> outputs."""
    cfn = boto3.client("cloudformation", region_name=region, endpoint_url=endpoint, aws_access_key_id="t",
                       aws_secret_access_key="t")
    return {s["StackName"]: {o["OutputKey"]: o["OutputValue"] for o in s.get("Outputs", [])}
            for s in cfn.describe_stacks()["Stacks"] if s["StackStatus"] != "DELETE_COMPLETE"}


def test_an_instance_keeps_the_environment_it_was_created_in(tmp_path: Path, run_cli, cloud) -> None:
    (tmp_path / "queue.yaml").write_text(QUEUE)
    (tmp_path / "formwright.yaml").write_text(PROJECT)
    made = run_cli("instance", "create", "a", str(tmp_path), "--env", "prod")
    assert made.code == 0, made.err
    assert live(cloud.endpoint, "eu-west-1") == {"inst-prod-q": {"Size": "small"}}  # prod's region and name
    assert live(cloud.endpoint, "us-east-1") == {}
    # later operations need no --env: the instance's own is used
    update = run_cli("instance", "update", "a", str(tmp_path), "--input", "size=large")
    assert update.code == 0, update.err
    assert live(cloud.endpoint, "eu-west-1") == {"inst-prod-q": {"Size": "large"}}
    # another environment is refused, one line, exit 2, from the flag or the variable alike
    for how in ({"args": ["--env", "dev"]}, {"args": [], "env": {"FORMWRIGHT_ENV": "dev"}}):
        moved = run_cli("instance", "update", "a", str(tmp_path), *how["args"], env=how.get("env"))
        assert moved.code == 2 and moved.err.strip().count("\n") == 0, moved.err
        assert "instance 'a' is of environment 'prod', not 'dev' (--env, FORMWRIGHT_ENV)" in moved.err
    assert live(cloud.endpoint, "us-east-1") == {}
    unknown = run_cli("instance", "create", "b", str(tmp_path), "--env", "staging")
    assert unknown.code == 2 and "unknown environment 'staging' (environments: dev, prod)" in unknown.err
    gone = run_cli("instance", "delete", "a", str(tmp_path), "--yes", env={"FORMWRIGHT_ENV": "prod"})
    assert gone.code == 0, gone.err
    assert live(cloud.endpoint, "eu-west-1") == {}
    # an instance made without one keeps none: an exported FORMWRIGHT_ENV is refused, not silently ignored
    plain = run_cli("instance", "create", "c", str(tmp_path))
    assert plain.code == 0 and set(live(cloud.endpoint, "us-east-1")) == {"inst-q"}, plain.err
    exported = run_cli("instance", "update", "c", str(tmp_path), env={"FORMWRIGHT_ENV": "prod"})
    assert exported.code == 2 and "instance 'c' is of no environment, not 'prod'" in exported.err
