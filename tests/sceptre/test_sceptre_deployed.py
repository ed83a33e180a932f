"""The proof of issue 25: stacks `sceptre launch` made on the local cloud, the project converted with
`formwright import-sceptre`, then `formwright plan`: the same stack names, every stack an update (none created
or replaced), no parameter, template or resource change; only the ownership tags formwright adds to every
stack, and the parameters read from a stack with that pending tag change shown as "(known after apply)",
their deployed values being the referenced outputs' current ones.

sceptre runs as itself, a child process, against the local cloud through boto3's AWS_ENDPOINT_URL (botocore
reads it for every client sceptre makes: sceptre passes no endpoint of its own). sceptre pins old versions of
jsonschema and networkx, so it is not in the project's test dependencies: install it in its own folder
(`pip install --target DIR sceptre`) and point FORMWRIGHT_TEST_SCEPTRE at `DIR` (it runs with this
interpreter and DIR first on PYTHONPATH), or have `sceptre` on PATH."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import boto3
import pytest

from formwright.template.document import loads

from .fixtures import FILES, write

OWNERSHIP = {"formwright:project", "formwright:stack"}


def sceptre_command() -> tuple[list[str], dict[str, str]]:
    """How to run sceptre here: (argv prefix, extra environment)."""
    folder = os.environ.get("FORMWRIGHT_TEST_SCEPTRE")
    if folder:
        return [sys.executable, "-c", "import sys; from sceptre.cli import cli; sys.exit(cli())"], {
            "PYTHONPATH": os.pathsep.join([folder, *sys.path])}
    found = shutil.which("sceptre")
    if not found:
        pytest.skip("sceptre is not installed (see this module's docstring)")
    return [found], {}


def test_stacks_sceptre_launched_plan_with_nothing_but_formwrights_ownership_tags(
        tmp_path: Path, run_cli, cloud) -> None:
    argv, extra = sceptre_command()
    source = write(tmp_path / "shop-sceptre", FILES)
    env = {**os.environ, **extra, "AWS_ENDPOINT_URL": cloud.endpoint, "AWS_ACCESS_KEY_ID": "testing",
           "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-east-1",
           "AWS_CONFIG_FILE": os.devnull, "AWS_SHARED_CREDENTIALS_FILE": os.devnull}
    launched = subprocess.run([*argv, "--dir", str(source), "launch", "--yes", "dev"], env=env,
                              capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL)
    assert launched.returncode == 0, launched.stdout + launched.stderr
    cfn = boto3.client("cloudformation", endpoint_url=cloud.endpoint, region_name="us-east-1",
                       aws_access_key_id="testing", aws_secret_access_key="testing")
    made = {s["StackName"] for s in cfn.describe_stacks()["Stacks"]}
    assert made == {"shop-dev-network-queue", "shop-dev-network-params", "shop-dev-app-service"}

    out = tmp_path / "shop"
    converted = run_cli("import-sceptre", str(source), "-o", str(out), "--output", "json")
    assert converted.code == 0, converted.out + converted.err
    assert {s["stack_name"] for s in converted.json()["stacks"]} == made
    # the Jinja template formwright wrote is the one sceptre rendered and deployed
    generated = subprocess.run([*argv, "--dir", str(source), "--output", "json", "--ignore-dependencies",
                                "generate", "dev/app/service.yaml"], env=env, capture_output=True, text=True,
                               timeout=300, stdin=subprocess.DEVNULL)
    assert generated.returncode == 0, generated.stderr
    sceptres, _ = json.JSONDecoder().raw_decode(generated.stdout.strip())
    assert json.loads(json.dumps(loads((out / "templates" / "dev-app-service.yaml").read_text()))) == sceptres

    plan = run_cli("plan", str(out), "--output", "json")
    assert plan.code == 0, plan.out + plan.err
    plans = plan.json()["plans"]
    assert set(plans) == {"dev-network-queue", "dev-network-params", "dev-app-service"}
    queue = cfn.describe_stacks(StackName="shop-dev-network-queue")["Stacks"][0]
    outputs = {o["OutputKey"]: o["OutputValue"] for o in queue["Outputs"]}
    # a !ref of a stack with a pending change is "(known after apply)" in formwright's plans (here the
    # queue stack's change is only its ownership tags): each such parameter's deployed value is the
    # referenced output's current value, so the deploy passes the same value
    chained = {("dev-network-params", "Value"): outputs["QueueArn"],
               ("dev-app-service", "QueueUrl"): outputs["QueueUrl"]}
    for name, stack in plans.items():
        assert stack["kind"] == "update", (name, stack["kind"])  # taken over, never created
        for change in stack["parameters"]:
            assert change["new"] == "(known after apply)", (name, change)
            assert change["old"] == chained.pop((name, change["key"])), (name, change)
        # a stack with a parameter known after apply gets its change set at deploy (its plan has none yet)
        tags = {tag["key"] for tag in stack["tags"]}
        assert tags == (set() if stack["parameters"] else OWNERSHIP), (name, stack["tags"])
        assert all(tag["old"] is None for tag in stack["tags"]), stack["tags"]
        for change in stack["resources"]:  # tags reach the taggable resources, and nothing else changes
            assert change["action"] == "Modify" and change["replacement"] == "False", (name, change)
            assert {d["name"] for d in change["details"]} <= {"Tags"}, (name, change)
    assert chained == {}

    # the first deploy adds the ownership tags and nothing else; then a plan has nothing left to do
    deployed = run_cli("deploy", str(out), "-y", "--output", "json")
    assert deployed.code == 0, deployed.out + deployed.err
    assert {s["StackName"] for s in cfn.describe_stacks()["Stacks"]} == made
    again = run_cli("plan", str(out), "--output", "json")
    assert again.code == 0, again.err
    for name, stack in again.json()["plans"].items():
        assert (stack["resources"], stack["parameters"], stack["tags"]) == ([], [], []), (name, stack)
    after = cfn.describe_stacks(StackName="shop-dev-network-queue")["Stacks"][0]
    assert {o["OutputKey"]: o["OutputValue"] for o in after["Outputs"]} == outputs
