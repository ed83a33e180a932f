"""Issue 24 item 1: resolvers in formwright.yaml (`!ssm`, `!secret`, `!stack_output`, `!file`, `!cmd`),
through the real CLI against the local cloud, the values put there with boto3 (moto has SSM and Secrets
Manager). Each failure path is one line at formwright.yaml:LINE, exit 2, before any write.

sceptre's counterparts (its docs, "Resolvers"): `!ssm` (decrypts by default there; here a SecureString
must ask for `decrypt: true`, and is then a secret), `!secretsmanager` (`SecretId`, `VersionStage`,
`VersionId`), `!stack_output_external`, `!file`, `!rcmd`.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

TEMPLATE = """\
Parameters:
  Host: {Type: String}
  Names: {Type: CommaDelimitedList}
  Password: {Type: String, NoEcho: true}
  Vpc: {Type: String}
  Cert: {Type: String}
  Blob: {Type: String}
  Rev: {Type: String}
  Raw: {Type: String, Default: ""}
Resources:
  Q:
    Type: AWS::SQS::Queue
Outputs:
  Host: {Value: !Ref Host}
  Vpc: {Value: !Ref Vpc}
  Cert: {Value: !Ref Cert}
  Blob: {Value: !Ref Blob}
  Rev: {Value: !Ref Rev}
  Raw: {Value: !Ref Raw}
  Names: {Value: !Join [",", !Ref Names]}
"""
EXTERNAL = """\
Resources:
  Q:
    Type: AWS::SQS::Queue
Outputs:
  VpcId: {Value: vpc-0abc}
"""
SECRET = "Sup3r-S3cret-Valu3"
PROJECT = """\
name: res
region: us-east-1
stacks:
  app:
    template: t.yaml
    tags:
      owner: !ssm /app/owner
    parameters:
      Host: !ssm /app/db/host
      Names: !ssm /app/names
      Password: !secret app/db#password
      Vpc: !stack_output shared-network.VpcId
      Cert: !file files/cert.pem
      Blob: !file {path: files/blob.bin, base64: true}
      Rev: !cmd [python3, -c, "print('  rev-42  ')"]
      Raw: !cmd {run: [python3, -c, "print('  rev-42  ')"], strip: false}
"""


def write_project(folder: Path, text: str = PROJECT) -> Path:
    (folder / "files").mkdir(parents=True, exist_ok=True)
    (folder / "t.yaml").write_text(TEMPLATE)
    (folder / "files" / "cert.pem").write_text("-----CERT-----")
    (folder / "files" / "blob.bin").write_bytes(b"\x00\x01\xff")
    (folder / "formwright.yaml").write_text(text.replace("python3", sys.executable))
    return folder


def seed(cloud) -> None:
    ssm = cloud.client("ssm")
    ssm.put_parameter(Name="/app/db/host", Value="db.internal", Type="String")
    ssm.put_parameter(Name="/app/names", Value="a,b", Type="StringList")
    ssm.put_parameter(Name="/app/owner", Value="team-a", Type="String")
    ssm.put_parameter(Name="/app/key", Value="k3y-Secur3-Str", Type="SecureString")
    cloud.client("secretsmanager").create_secret(Name="app/db", SecretString=json.dumps({"password": SECRET}))
    cloud.client("cloudformation").create_stack(StackName="shared-network", TemplateBody=EXTERNAL)


def everything_written(folder: Path) -> str:
    return "".join(p.read_text(errors="replace") for p in (folder / ".formwright").rglob("*") if p.is_file())


def test_every_resolver_resolves_at_deploy_and_the_plan_names_its_source(tmp_path: Path, run_cli,
                                                                          cloud) -> None:
    seed(cloud)
    folder = write_project(tmp_path / "p")
    assert run_cli("validate", str(folder), "--no-lint").code == 0  # offline: nothing fetched

    plan = run_cli("plan", str(folder))
    assert plan.code == 0, plan.err
    assert "Host <- ssm:/app/db/host" in plan.out
    assert "Password <- secret:app/db#password" in plan.out
    assert "Vpc <- stack_output:shared-network.VpcId" in plan.out
    assert "Rev <- cmd:" in plan.out
    assert "tag owner <- ssm:/app/owner" in plan.out

    done = run_cli("deploy", str(folder), "-y", "--output", "json")
    assert done.code == 0, done.err
    outputs = done.json()["outputs"]["app"]
    assert outputs["Host"] == "db.internal"
    assert outputs["Names"] == "a,b"  # a StringList is the comma-separated list CloudFormation takes
    assert outputs["Vpc"] == "vpc-0abc"
    assert outputs["Cert"] == "-----CERT-----"
    assert outputs["Blob"] == "AAH/"  # base64 of 00 01 ff
    assert outputs["Rev"] == "rev-42"  # stdout stripped
    assert outputs["Raw"] == "  rev-42  \n"  # as it is: what sceptre's `!rcmd` passes (import-sceptre)
    stack = cloud.client("cloudformation").describe_stacks(StackName="res-app")["Stacks"][0]
    assert {"Key": "owner", "Value": "team-a"} in stack["Tags"]

    again = run_cli("deploy", str(folder), "-y", "--output", "json")
    assert again.code == 0, again.err
    assert again.json()["stacks"]["app"]["outcome"] == "unchanged"  # same values: the same hash

    cloud.client("ssm").put_parameter(Name="/app/db/host", Value="db2.internal", Type="String",
                                      Overwrite=True)
    changed = run_cli("plan", str(folder), "--output", "json")
    assert changed.code == 0, changed.err
    params = {p["key"]: p for p in changed.json()["plans"]["app"]["parameters"]}
    assert params["Host"]["new"] == "db2.internal"
    assert {"parameter": "Host", "source": "ssm:/app/db/host"} in changed.json()["plans"]["app"]["references"]


def test_a_secret_never_appears_in_any_output_or_record(tmp_path: Path, run_cli, cloud) -> None:
    seed(cloud)
    text = PROJECT.replace("      Host: !ssm /app/db/host\n",
                           "      Host: !ssm {name: /app/key, decrypt: true}\n")
    folder = write_project(tmp_path / "p", text)
    seen = []
    for args in (("plan",), ("deploy", "-y"), ("plan", "--output", "json"),
                 ("deploy", "-y", "--output", "json"), ("status",), ("events",), ("diff",), ("outputs",)):
        result = run_cli(*args, str(folder))
        assert result.code == 0, (args, result.err)
        seen.append(result.out + result.err)
    everything = "\n".join(seen) + everything_written(folder)
    assert SECRET not in everything
    assert "k3y-Secur3-Str" not in everything  # a decrypted SecureString is a secret too
    assert "****" in "\n".join(seen)
    # Host is not NoEcho: the user is told CloudFormation shows it
    assert "parameter Host takes a secret but is not NoEcho" in seen[0]


@pytest.mark.parametrize(("line", "text", "message"), [
    ("Host: !ssm /app/missing", "!ssm /app/missing: no such SSM parameter", ""),
    ("Host: !ssm /app/key", "!ssm /app/key: is a SecureString", "decrypt: true"),
    ("Host: !secret nope", "!secret nope: no such secret", ""),
    ("Host: !secret app/db#user", "the secret has no key 'user'", "its keys: password"),
    ("Host: !secret {id: app/db, version_stage: AWSPREVIOUS}", "no such secret (or version)", ""),
    ("Host: !stack_output gone-stack.VpcId", "no stack 'gone-stack'", ""),
    ("Host: !stack_output shared-network.Nope", "stack 'shared-network' has no output 'Nope'", "VpcId"),
    ("Host: !stack_output {stack: shared-network, output: VpcId, region: eu-west-1}",
     "no stack 'shared-network' in 123456789012/eu-west-1", ""),
    ("Host: !cmd [false]", "exited with code 1", ""),
    ("Host: !cmd [no-such-program-24]", "no program 'no-such-program-24'", ""),
    ("Host: !cmd {run: [python3, -c, 'import time; time.sleep(5)'], timeout: 1}", "did not finish within 1 s",
     ""),
])
def test_a_missing_value_is_one_line_at_its_line_before_any_write(tmp_path: Path, run_cli, cloud, line: str,
                                                                  text: str, message: str) -> None:
    seed(cloud)
    folder = write_project(tmp_path / "p", PROJECT.replace("Host: !ssm /app/db/host", line))
    number = PROJECT.splitlines().index("      Host: !ssm /app/db/host") + 1
    for command in (("plan",), ("deploy", "-y")):
        result = run_cli(*command, str(folder))
        assert result.code == 2, result.err
        first = result.err.strip().splitlines()
        assert len(first) == 1 and "Traceback" not in result.err
        assert f"formwright.yaml:{number}:" in first[0] and text in first[0] and message in first[0]
    assert [s["StackName"] for s in cloud.client("cloudformation").describe_stacks()["Stacks"]] == \
        ["shared-network"]  # nothing written


@pytest.mark.parametrize(("line", "text"), [
    ("Host: !ssm {nam: /x}", "!ssm: unknown key 'nam'"),
    ("Host: !secret {key: password}", "!secret: needs a secret id"),
    ("Host: !stack_output just-a-stack", "!stack_output: needs STACK.KEY"),
    ("Host: !file ../outside.txt", "outside the checkout"),
    ("Host: !file files/none.txt", "no such file"),
    ("Host: !cmd {run: [], timeout: 5}", "!cmd: needs a command"),
    ("Host: !cmd {run: [ls], strip: maybe}", "!cmd: `strip` must be true or false"),
    ("Host: !stack_output res-app.Url", "is stack 'app' of this project"),
])
def test_validate_checks_the_form_offline(tmp_path: Path, run_cli, line: str, text: str) -> None:
    folder = write_project(tmp_path / "p", PROJECT.replace("Host: !ssm /app/db/host", line))
    result = run_cli("validate", str(folder), "--no-lint")
    assert result.code == 2, result.out
    assert text in result.err and "formwright.yaml:" in result.err and "Traceback" not in result.err


def test_a_secret_in_a_tag_is_refused(tmp_path: Path, run_cli, cloud) -> None:
    seed(cloud)
    folder = write_project(tmp_path / "p", PROJECT.replace("owner: !ssm /app/owner", "owner: !secret app/db"))
    result = run_cli("plan", str(folder))
    assert result.code == 2 and "tags are shown in clear" in result.err and SECRET not in result.err


def test_cmd_is_refused_under_the_sandbox(tmp_path: Path, run_cli, cloud) -> None:
    seed(cloud)
    folder = write_project(tmp_path / "p")
    result = run_cli("--sandbox", "plan", str(folder))
    assert result.code == 2, result.err
    assert "!cmd" in result.err and "refused by the sandbox" in result.err


def test_delete_needs_no_resolver(tmp_path: Path, run_cli, cloud) -> None:
    seed(cloud)
    folder = write_project(tmp_path / "p")
    assert run_cli("deploy", str(folder), "-y").code == 0
    cloud.client("ssm").delete_parameter(Name="/app/db/host")  # its value is not needed to delete
    gone = run_cli("delete", str(folder), "-y")
    assert gone.code == 0, gone.err
    assert [s["StackName"] for s in cloud.client("cloudformation").describe_stacks()["Stacks"]] == \
        ["shared-network"]
