"""Each example: a golden template, cfn-lint clean, shellcheck-clean scripts, and a deploy to the local cloud.

Regenerate the golden files with `FORMWRIGHT_UPDATE_GOLDEN=1 pytest tests/tosca`.
"""

from __future__ import annotations

import difflib
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from botocore.exceptions import WaiterError

from formwright.cloud.local import stub_tags
from formwright.template import dump_json, dump_yaml
from formwright.transform.cloudformation import prepare_stack, transform_tosca
from formwright.transform.cloudformation.lifecycle import runner_script

from .conftest import EXAMPLES, GOLDEN_DIR, lint_errors

NAMES = sorted(EXAMPLES)


@pytest.mark.parametrize("name", NAMES)
def test_golden_template(name: str, tmp_path: Path):
    src, inputs = EXAMPLES[name]
    result = transform_tosca(src, tmp_path / "out", inputs=inputs)
    actual = (tmp_path / "out" / "template.yaml").read_text(encoding="utf-8")
    assert actual == dump_yaml(result.template)
    golden = GOLDEN_DIR / f"{name}.yaml"
    if os.environ.get("FORMWRIGHT_UPDATE_GOLDEN"):
        golden.write_text(actual, encoding="utf-8")
    expected = golden.read_text(encoding="utf-8")
    if actual != expected:
        diff = "".join(difflib.unified_diff(expected.splitlines(True), actual.splitlines(True),
                                            f"golden/{name}.yaml", "generated"))
        pytest.fail(f"template of example {name} changed (FORMWRIGHT_UPDATE_GOLDEN=1 to accept):\n{diff}")
    for secret in inputs.values():
        assert secret not in actual


@pytest.mark.parametrize("name", NAMES)
def test_example_lints_clean(name: str, tmp_path: Path):
    src, inputs = EXAMPLES[name]
    transform_tosca(src, tmp_path / "out", inputs=inputs)
    text = (tmp_path / "out" / "template.yaml").read_text(encoding="utf-8")
    from formwright.template import loads

    assert lint_errors(loads(text), text=text) == []


@pytest.mark.parametrize("name", NAMES)
def test_artifact_layout(name: str, tmp_path: Path):
    src, inputs = EXAMPLES[name]
    out = tmp_path / "out"
    transform_tosca(src, out, inputs=inputs)
    for script in ("deploy.sh", "file-upload.sh", "create-stack.sh", "cleanup.sh"):
        path = out / "scripts" / script
        assert path.is_file() and os.access(path, os.X_OK)
    assert (out / "scripts" / "util" / "common.sh").is_file()
    readme = (out / "README.md").read_text(encoding="utf-8")
    assert "formwright deploy" in readme and "scripts/deploy.sh" in readme
    assert any((out / "files").rglob("*"))
    deploy = (out / "scripts" / "create-stack.sh").read_text(encoding="utf-8")
    assert "aws cloudformation deploy" in deploy and "CAPABILITY_IAM" in deploy
    for secret in inputs.values():
        assert secret not in "".join(p.read_text(errors="ignore") for p in out.rglob("*") if p.is_file())


@pytest.mark.parametrize("name", NAMES)
def test_scripts_pass_shellcheck(name: str, tmp_path: Path):
    shellcheck = shutil.which("shellcheck")
    if shellcheck is None:
        pytest.skip("shellcheck is not installed (apt-get install shellcheck)")
    src, inputs = EXAMPLES[name]
    out = tmp_path / "out"
    transform_tosca(src, out, inputs=inputs)
    runner = tmp_path / "formwright-run.sh"
    runner.write_text(runner_script(), encoding="utf-8")
    scripts = [*sorted(str(p) for p in (out / "scripts").rglob("*.sh")), str(runner)]
    done = subprocess.run(
        [shellcheck, "-x", "-s", "bash", *scripts],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=out,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr


# What the local cloud cannot run (docs/local-cloud.md): Elastic Beanstalk (moto lacks it) and instances
# waiting for cfn-signal (CreationPolicy); stubbed as a project's `local_cloud: {stub: [...]}` would
LOCAL_CLOUD_STUBS = {
    "java": ["AWS::ElasticBeanstalk::Application", "AWS::ElasticBeanstalk::ApplicationVersion",
             "AWS::ElasticBeanstalk::Environment"],
}


@pytest.mark.cloud
@pytest.mark.parametrize("name", NAMES)
def test_example_deploys_to_local_cloud(name: str, cloud, tmp_path: Path):
    src, inputs = EXAMPLES[name]
    s3 = cloud.client("s3")
    stack = prepare_stack(src, inputs=inputs, region=cloud.region, out_dir=tmp_path / "out", s3_client=s3,
                          bucket=f"fw-{name}-artifacts")
    template = stack.template
    if "ArtifactBucket" in template.get("Parameters", {}):
        keys = {o["Key"] for o in s3.list_objects_v2(Bucket=f"fw-{name}-artifacts").get("Contents", [])}
        assert keys == {p.relative_to(tmp_path / "out" / "files").as_posix()
                        for p in (tmp_path / "out" / "files").rglob("*") if p.is_file()}
    cfn = cloud.client("cloudformation")
    # JSON: moto splits a short-form `!GetAtt Db.Endpoint.Address` at every dot (CloudFormation does not)
    cfn.create_stack(
        StackName=f"tosca-{name}",
        TemplateBody=dump_json(template),
        Parameters=[{"ParameterKey": k, "ParameterValue": v} for k, v in stack.parameters.items()],
        Capabilities=stack.capabilities,
        Tags=stub_tags(cloud, LOCAL_CLOUD_STUBS.get(name, ["AWS::EC2::Instance"])),
    )
    try:
        cfn.get_waiter("stack_create_complete").wait(StackName=f"tosca-{name}",
                                                      WaiterConfig={"Delay": 1, "MaxAttempts": 120})
    except WaiterError:
        failed = [(e["LogicalResourceId"], e["ResourceStatus"], e.get("ResourceStatusReason"))
                  for e in cfn.describe_stack_events(StackName=f"tosca-{name}")["StackEvents"]
                  if e["ResourceStatus"].endswith("FAILED")]
        pytest.fail(f"tosca-{name} did not create: {failed}")
    described = cfn.describe_stacks(StackName=f"tosca-{name}")["Stacks"][0]
    assert described["StackStatus"] == "CREATE_COMPLETE"
    assert {o["OutputKey"] for o in described.get("Outputs", [])} == set(template.get("Outputs", {}))
    for name in stack.parameters:
        if name != "ArtifactBucket":  # every other value passed is a secret: NoEcho, never a default
            assert template["Parameters"][name]["NoEcho"] is True
            assert "Default" not in template["Parameters"][name]
