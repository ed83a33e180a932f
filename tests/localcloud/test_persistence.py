"""State that survives (issue 30): `local-cloud stop` and `start` keep stacks, resources, change sets,
exports, events and the data in S3, SSM, Secrets Manager and SQS; `--reset` starts empty; a snapshot
cut by SIGKILL mid-write keeps the previous one; a snapshot from another version is refused.

Each test runs its own local cloud in a private FORMWRIGHT_HOME through the real CLI.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import boto3
import pytest

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "three-tier"
SERVERLESS = Path(__file__).resolve().parents[2] / "examples" / "serverless"


@pytest.fixture
def home(tmp_path: Path, run_cli):
    """A private formwright home; its local cloud is stopped at the end."""
    folder = tmp_path / "home"
    env = {"FORMWRIGHT_HOME": str(folder)}
    yield folder, env
    run_cli("local-cloud", "stop", env=env)


def _client(folder: Path, service: str):
    endpoint = json.loads((folder / "local-cloud.json").read_text())["endpoint"]
    return boto3.client(service, endpoint_url=endpoint, region_name="us-east-1",
                        aws_access_key_id="testing", aws_secret_access_key="testing")


def _data(folder: Path) -> None:
    s3 = _client(folder, "s3")
    s3.create_bucket(Bucket="kept-bucket")
    s3.put_object(Bucket="kept-bucket", Key="a.txt", Body=b"kept")
    _client(folder, "ssm").put_parameter(Name="/kept", Value="v1", Type="String")
    _client(folder, "secretsmanager").create_secret(Name="kept", SecretString="s3cret")
    sqs = _client(folder, "sqs")
    sqs.send_message(QueueUrl=sqs.create_queue(QueueName="kept")["QueueUrl"], MessageBody="hello")


def _read_data(folder: Path) -> tuple:
    sqs = _client(folder, "sqs")
    messages = sqs.receive_message(QueueUrl=sqs.get_queue_url(QueueName="kept")["QueueUrl"]).get("Messages")
    return (_client(folder, "s3").get_object(Bucket="kept-bucket", Key="a.txt")["Body"].read(),
            _client(folder, "ssm").get_parameter(Name="/kept")["Parameter"]["Value"],
            _client(folder, "secretsmanager").get_secret_value(SecretId="kept")["SecretString"],
            [m["Body"] for m in messages or []])


def _stacks(folder: Path) -> dict:
    cfn = _client(folder, "cloudformation")

    def resources(name: str) -> list:
        return sorted((r["LogicalResourceId"], r.get("PhysicalResourceId", ""))
                      for r in cfn.describe_stack_resources(StackName=name)["StackResources"])

    return {s["StackName"]: (s["StackStatus"], sorted(o["OutputValue"] for o in s.get("Outputs") or []),
                             len(cfn.describe_stack_events(StackName=s["StackName"])["StackEvents"]),
                             resources(s["StackName"]))
            for s in cfn.describe_stacks()["Stacks"]}


def test_stop_and_start_keep_a_deployed_three_tier_and_its_data(home, run_cli, tmp_path) -> None:
    folder, env = home
    project = tmp_path / "three-tier"
    shutil.copytree(EXAMPLE, project, ignore=shutil.ignore_patterns(".formwright"))
    assert run_cli("local-cloud", "start", env=env).code == 0
    deployed = run_cli("deploy", str(project), "-y", env=env)
    assert deployed.code == 0, deployed.err
    _data(folder)
    cfn = _client(folder, "cloudformation")
    pending = cfn.create_change_set(StackName="three-tier-app", ChangeSetName="later", ChangeSetType="UPDATE",
                                   UsePreviousTemplate=True, Parameters=[
                                       {"ParameterKey": k, "UsePreviousValue": True}
                                       for k in ("VpcId", "DatabaseSecurityGroup", "TableName")])
    before, exports = _stacks(folder), cfn.list_exports()["Exports"]
    endpoint = json.loads((folder / "local-cloud.json").read_text())["endpoint"]

    stopped = run_cli("local-cloud", "stop", env=env)
    assert stopped.code == 0, stopped.err
    assert "3 stack(s) kept" in stopped.out
    assert run_cli("local-cloud", "start", env=env).code == 0
    # the endpoint survives the restart while its port is free (a shell's AWS_ENDPOINT_URL still works)
    assert json.loads((folder / "local-cloud.json").read_text())["endpoint"] == endpoint

    assert _stacks(folder) == before
    cfn = _client(folder, "cloudformation")
    assert cfn.list_exports()["Exports"] == exports
    assert cfn.describe_change_set(ChangeSetName=pending["Id"])["ChangeSetName"] == "later"
    vpc = _client(folder, "ec2").describe_vpcs(VpcIds=[next(
        o["OutputValue"] for o in cfn.describe_stacks(StackName="three-tier-network")["Stacks"][0]["Outputs"]
        if o["OutputKey"] == "VpcId")])["Vpcs"]
    assert vpc[0]["CidrBlock"] == "10.20.0.0/16"
    assert _read_data(folder) == (b"kept", "v1", "s3cret", ["hello"])
    again = run_cli("deploy", str(project), "-y", "--output", "json", env=env)
    # nothing to change, known without a change set: the same endpoint keeps the applied cache valid
    assert {s["outcome"] for s in again.json()["stacks"].values()} == {"unchanged"}, again.out

    # `--reset` starts empty, and `local-cloud reset` empties a running one; a start whose last port is
    # taken by now takes another one
    run_cli("local-cloud", "stop", env=env)
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as taken:
        taken.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # the last run's TIME_WAITs
        taken.bind(("127.0.0.1", int(endpoint.rsplit(":", 1)[1])))
        taken.listen()
        assert run_cli("local-cloud", "start", "--reset", env=env).code == 0
    assert json.loads((folder / "local-cloud.json").read_text())["endpoint"] != endpoint
    assert _client(folder, "cloudformation").describe_stacks()["Stacks"] == []
    _data(folder)
    assert run_cli("local-cloud", "reset", env=env).code == 0
    assert _client(folder, "s3").list_buckets()["Buckets"] == []
    assert "0 stack(s) kept" in run_cli("local-cloud", "stop", env=env).out


def _invoked(folder: Path, name: str) -> dict:
    reply = _client(folder, "lambda").invoke(FunctionName=name, Payload=json.dumps({"name": "Ada"}).encode())
    assert "FunctionError" not in reply, reply["Payload"].read()
    return json.loads(reply["Payload"].read())


@pytest.mark.slow  # two local-cloud starts, a SAM deploy and a no-op deploy: ~140 s at load average 19
def test_a_sam_apps_functions_are_still_invokable_after_stop_and_start(home, run_cli, tmp_path) -> None:
    # the code is unpacked from the function's zip, which the snapshot keeps (cloud/lambda_runtime runs each
    # invocation as a child process of the restarted local cloud)
    folder, env = home
    project = tmp_path / "serverless"
    shutil.copytree(SERVERLESS, project, ignore=shutil.ignore_patterns(".formwright"))
    assert run_cli("local-cloud", "start", env=env).code == 0
    deployed = run_cli("deploy", str(project), "-y", "--output", "json", env=env)
    assert deployed.code == 0, deployed.err
    outputs = deployed.json()["outputs"]["api"]
    assert _invoked(folder, outputs["HelloFunction"]) == {"message": "Hello, Ada!"}

    assert run_cli("local-cloud", "stop", env=env).code == 0
    assert run_cli("local-cloud", "start", env=env).code == 0
    assert _invoked(folder, outputs["HelloFunction"]) == {"message": "Hello, Ada!"}
    if shutil.which("node"):
        assert _invoked(folder, outputs["GreeterFunction"]) == {"message": "Hi, Ada!"}
    again = run_cli("deploy", str(project), "-y", "--output", "json", env=env)
    assert {s["outcome"] for s in again.json()["stacks"].values()} <= {"unchanged", "no changes"}, again.out


def test_a_periodic_snapshot_survives_a_killed_local_cloud(home, run_cli) -> None:
    folder, env = home
    assert run_cli("local-cloud", "start", "--snapshot-interval", "0.2", env=env).code == 0
    _client(folder, "ssm").put_parameter(Name="/survivor", Value="yes", Type="String")
    snapshot = folder / "local-cloud.snapshot"
    give_up = time.monotonic() + 120  # a guard against hanging, not a measurement
    while b"survivor" not in (snapshot.read_bytes() if snapshot.exists() else b""):
        assert time.monotonic() < give_up, "no periodic snapshot was written"
        time.sleep(0.05)  # the next periodic snapshot holds it
    pid = json.loads((folder / "local-cloud.json").read_text())["pid"]
    os.kill(pid, signal.SIGKILL)  # no stop: what a crash or a power cut leaves
    assert run_cli("local-cloud", "start", env=env).code == 0
    assert _client(folder, "ssm").get_parameter(Name="/survivor")["Parameter"]["Value"] == "yes"


KILLED_WRITER = """
import sys, time
from pathlib import Path
from formwright.cloud import persistence
path = Path(sys.argv[1])
real_open = open
class Slow:
    def __init__(self, stream): self.stream = stream
    def write(self, data):
        self.stream.write(data[: len(data) // 2]); self.stream.flush()
        print("half written", flush=True)
        time.sleep(600)
    def __getattr__(self, name): return getattr(self.stream, name)
    def __enter__(self): return self
    def __exit__(self, *a): self.stream.close()
persistence.open = lambda p, mode: Slow(real_open(p, mode))
persistence.write(path, b"new snapshot " * 100000)
"""


def test_a_snapshot_cut_by_sigkill_mid_write_keeps_the_previous_one(tmp_path: Path) -> None:
    from formwright.cloud import persistence

    path = tmp_path / "local-cloud.snapshot"
    persistence.write(path, b"previous snapshot")
    # the writer is stopped half-way through its write (a stand-in stream: nothing else can hold a
    # real write at a known point) and SIGKILLed there
    child = subprocess.Popen([sys.executable, "-c", textwrap.dedent(KILLED_WRITER), str(path)],
                             stdout=subprocess.PIPE, text=True)
    assert child.stdout.readline().strip() == "half written"
    child.kill()
    child.wait()
    assert path.read_bytes() == b"previous snapshot"
    assert [p.name for p in tmp_path.iterdir() if ".tmp-" in p.name]  # the cut temporary file is there
    persistence.write(path, b"next")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["local-cloud.snapshot"]  # and cleared by the next


def test_a_snapshot_from_another_version_is_refused_with_the_reason(home, run_cli) -> None:
    folder, env = home
    folder.mkdir(parents=True)
    snapshot = folder / "local-cloud.snapshot"
    from formwright.cloud import persistence

    versions = {**persistence.versions(), "moto": "4.0.0"}
    snapshot.write_bytes(json.dumps(versions).encode() + b"\nnot loaded")
    refused = run_cli("local-cloud", "start", env=env)
    assert refused.code == 2
    assert "written by another version: moto 4.0.0" in refused.err + refused.out
    assert snapshot.read_bytes().endswith(b"not loaded")  # kept as it was
    assert not (folder / "local-cloud.json").exists()
    # one of this version that does not load whole is refused by the server, nothing of it installed
    snapshot.write_bytes(json.dumps(persistence.versions()).encode() + b"\ncut short")
    broken = run_cli("local-cloud", "start", env=env)
    assert broken.code != 0 and "does not load" in broken.err + broken.out
    assert run_cli("local-cloud", "start", "--reset", env=env).code == 0
