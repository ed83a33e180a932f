"""The proof of issue 25, with sceptre itself (4.x, in its own venv: tests/sceptre/install.py) on the local
cloud.

1. Stacks `sceptre launch` made, the project converted with `formwright import-sceptre`, then `formwright
   plan`: the same stack names, and no change at all (the converted project says `ownership_tags: false`, so
   formwright adds none of its tags); a deploy then changes nothing.
2. The same launch recorded (every stack's name, parameters, tags and template), the stacks deleted with
   `sceptre delete`, the converted project deployed by formwright from nothing: the same stacks, parameters,
   tags and templates, and the `!cmd` hooks ran at the same points.

sceptre runs as itself, a child process from the project's folder (its file resolvers read paths relative to
the working folder), against the local cloud through boto3's AWS_ENDPOINT_URL (botocore reads it for every
client sceptre makes: sceptre passes no endpoint of its own). The fixture project is our own
(tests/sceptre/fixtures.py LAUNCHED): nested config folders, resolvers, hooks, a Jinja template with
sceptre_user_data."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import boto3
import pytest

from formwright.template.document import loads

from .fixtures import EXTERNAL_TEMPLATE, LAUNCHED, write
from .install import Sceptre

pytestmark = [pytest.mark.slow, pytest.mark.cloud]

STACKS = {"shop-dev-network-queue", "shop-dev-network-params", "shop-dev-app-service",
          "shop-dev-shared-settings"}
EXTERNAL = "shop-external"  # made with boto3: what `!stack_output_external` reads


def client(cloud, service: str) -> Any:
    return boto3.client(service, endpoint_url=cloud.endpoint, region_name="us-east-1",
                        aws_access_key_id="testing", aws_secret_access_key="testing")


def environment(cloud, tmp_path: Path) -> dict[str, str]:
    """The environment both tools run in: the local cloud as AWS, the variables the fixture project reads."""
    return {**os.environ, "AWS_ENDPOINT_URL": cloud.endpoint, "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing", "AWS_DEFAULT_REGION": "us-east-1",
            "AWS_CONFIG_FILE": os.devnull, "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
            "SHOP_OWNER": "team-orders", "HOOK_LOG": str(tmp_path / "hooks.log")}


def run_sceptre(sceptre: Sceptre, source: Path, env: dict[str, str], *args: str) -> str:
    """`sceptre --dir SOURCE ARGS...` from the project's folder; its stdout (it must succeed)."""
    done = subprocess.run([*sceptre.argv, "--dir", str(source), *args], env={**env, **sceptre.env},
                          cwd=source, capture_output=True, text=True, timeout=600, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def launched(cloud, sceptre: Sceptre, tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """The fixture project written, what it reads from outside made, and `sceptre launch --yes dev` run."""
    source = write(tmp_path / "shop-sceptre", LAUNCHED)
    env = environment(cloud, tmp_path)
    client(cloud, "ssm").put_parameter(Name="/shop/db/host", Value="db.internal", Type="String")
    cfn = client(cloud, "cloudformation")
    cfn.create_stack(StackName=EXTERNAL, TemplateBody=EXTERNAL_TEMPLATE)
    cfn.get_waiter("stack_create_complete").wait(StackName=EXTERNAL, WaiterConfig={"Delay": 1})
    run_sceptre(sceptre, source, env, "launch", "--yes", "dev")
    return source, env


def recorded(cfn) -> dict[str, dict[str, Any]]:
    """Every stack but the external one: its parameters, tags, template (as sent and as parsed), status."""
    stacks = {}
    for stack in cfn.describe_stacks()["Stacks"]:
        name = stack["StackName"]
        if name == EXTERNAL:
            continue
        body = cfn.get_template(StackName=name)["TemplateBody"]
        text = body if isinstance(body, str) else json.dumps(body)
        stacks[name] = {
            "parameters": {p["ParameterKey"]: p["ParameterValue"] for p in stack.get("Parameters", [])},
            "tags": {t["Key"]: t["Value"] for t in stack.get("Tags", [])},
            "template": json.loads(json.dumps(loads(text))),
            "text": text,
            "status": stack["StackStatus"],
        }
    return stacks


def converted(run_cli, source: Path, out: Path, env: dict[str, str]) -> dict[str, Any]:
    answer = run_cli("import-sceptre", str(source), "-o", str(out), "--output", "json", env=env)
    assert answer.code == 0, answer.out + answer.err
    summary = answer.json()
    assert summary["unmapped"] == [], summary["unmapped"]
    return summary


def test_stacks_sceptre_launched_plan_with_no_change(tmp_path: Path, run_cli, cloud,
                                                      sceptre: Sceptre) -> None:
    source, env = launched(cloud, sceptre, tmp_path)
    cfn = client(cloud, "cloudformation")
    before = recorded(cfn)
    assert set(before) == STACKS
    out = tmp_path / "shop"
    summary = converted(run_cli, source, out, env)
    assert {s["stack_name"] for s in summary["stacks"]} == STACKS
    assert "ownership_tags: false" in (out / "formwright.yaml").read_text()
    # the Jinja template formwright wrote is the one sceptre renders and deployed
    generated = run_sceptre(sceptre, source, env, "--output", "json", "--ignore-dependencies", "generate",
                            "dev/app/service.yaml")
    sceptres, _ = json.JSONDecoder().raw_decode(generated.strip())
    assert json.loads(json.dumps(loads((out / "templates" / "dev-app-service.yaml").read_text()))) == sceptres
    assert before["shop-dev-app-service"]["template"] == sceptres

    plan = run_cli("plan", str(out), "--output", "json", env=env)
    assert plan.code == 0, plan.out + plan.err
    plans = plan.json()["plans"]
    assert {p["stack_name"] for p in plans.values()} == STACKS
    for name, stack in plans.items():
        assert stack["kind"] in ("unchanged", "no changes"), json.dumps(stack, indent=1)
        assert (stack["resources"], stack["parameters"], stack["tags"]) == ([], [], []), (name, stack)

    # a deploy then writes nothing sceptre would see: the same parameters, tags and templates, no hook run
    Path(env["HOOK_LOG"]).unlink()
    deployed = run_cli("deploy", str(out), "-y", "--output", "json", env=env)
    assert deployed.code == 0, deployed.out + deployed.err
    assert recorded(cfn) == before
    assert not Path(env["HOOK_LOG"]).exists()  # hooks run when a stack changes, and none did


def test_a_converted_project_deployed_from_nothing_makes_what_sceptre_launch_makes(
        tmp_path: Path, run_cli, cloud, sceptre: Sceptre) -> None:
    source, env = launched(cloud, sceptre, tmp_path)
    cfn = client(cloud, "cloudformation")
    by_sceptre = recorded(cfn)
    assert set(by_sceptre) == STACKS
    hooks = Path(env["HOOK_LOG"])
    sceptre_hooks = hooks.read_text().splitlines()
    assert sceptre_hooks == ["before-create settings", "after-create settings"]
    run_sceptre(sceptre, source, env, "delete", "--yes", "dev")
    assert {s["StackName"] for s in cfn.describe_stacks()["Stacks"]} == {EXTERNAL}
    hooks.unlink()

    out = tmp_path / "shop"
    converted(run_cli, source, out, env)
    deployed = run_cli("deploy", str(out), "-y", "--output", "json", env=env)
    assert deployed.code == 0, deployed.out + deployed.err
    by_formwright = recorded(cfn)
    assert set(by_formwright) == STACKS
    for name in sorted(STACKS):
        ours, theirs = by_formwright[name], by_sceptre[name]
        assert ours["status"] == theirs["status"] == "CREATE_COMPLETE", name
        assert ours["parameters"] == theirs["parameters"], name
        assert ours["tags"] == theirs["tags"], name
        # the same template, read: sceptre sends the file's text (a rendered .j2 with a leading `---`),
        # formwright the template as compact JSON (engine/stack.py Stack.processed)
        assert ours["template"] == theirs["template"], name
    assert hooks.read_text().splitlines() == sceptre_hooks
