"""Packaging on deploy, plan and build, through the real CLI against the local cloud and its real S3.

A SAM application with a Python and a Node function; a nested stack tree three deep; bad paths; the
`package` and `build` commands; rain's directives. Invoking the functions belongs to the Lambda runtime
work (issue 28, items 4-5): here the function's code in S3 is checked to be the zip of its folder.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import shutil
import zipfile
from pathlib import Path

import pytest

BUCKET = "formwright-123456789012-us-east-1"  # the managed bucket on the local cloud's one account

SAM = """\
Transform: AWS::Serverless-2016-10-31
Resources:
  PyFn:
    Type: AWS::Serverless::Function
    Properties: {CodeUri: py/, Handler: app.handler, Runtime: python3.12}
  NodeFn:
    Type: AWS::Serverless::Function
    Properties: {CodeUri: node/, Handler: index.handler, Runtime: nodejs20.x}
Outputs:
  Py: {Value: !Ref PyFn}
  Node: {Value: !Ref NodeFn}
"""


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


@pytest.fixture
def sam_app(tmp_path: Path) -> Path:
    root = tmp_path / "sam"
    write(root / "formwright.yaml", "name: sam\nstacks:\n  app:\n    template: template.yaml\n"
                                    "    capabilities: [CAPABILITY_IAM]\n")
    write(root / "template.yaml", SAM)
    write(root / "py" / "app.py", "def handler(event, context):\n    return {'from': 'python'}\n")
    write(root / "node" / "index.js", "exports.handler = async () => ({from: 'node'});\n")
    return root


def invoke(lam, name: str) -> dict:
    """The function's answer to an empty event (Lambda's Invoke, RequestResponse)."""
    reply = lam.invoke(FunctionName=name, Payload=b"{}")
    assert "FunctionError" not in reply, reply["Payload"].read()
    return json.loads(reply["Payload"].read())


def code_sha(data: bytes) -> str:
    return base64.b64encode(hashlib.sha256(data).digest()).decode()


def test_a_sam_app_deploys_its_code_updates_one_function_and_then_makes_no_write(sam_app: Path, run_cli,
                                                                                 cloud) -> None:
    first = run_cli("deploy", str(sam_app), "-y", "--output", "json")
    assert first.code == 0, first.out + first.err
    outputs = first.json()["outputs"]["app"]
    lam, s3 = cloud.client("lambda"), cloud.client("s3")
    keys = {o["Key"] for o in s3.list_objects_v2(Bucket=BUCKET)["Contents"]}
    assert len(keys) == 2 and all(k.startswith("sam/") and k.endswith(".zip") for k in keys)
    objects = {k: s3.get_object(Bucket=BUCKET, Key=k)["Body"].read() for k in keys}
    names = {k: zipfile.ZipFile(io.BytesIO(d)).namelist() for k, d in objects.items()}
    assert sorted(names.values()) == [["app.py"], ["index.js"]]
    py_sha = lam.get_function(FunctionName=outputs["Py"])["Configuration"]["CodeSha256"]
    node_sha = lam.get_function(FunctionName=outputs["Node"])["Configuration"]["CodeSha256"]
    assert {py_sha, node_sha} == {code_sha(d) for d in objects.values()}  # the function's code is the zip
    # and the local cloud runs it from that zip (cloud/lambda_runtime): the return values read back
    assert invoke(lam, outputs["Py"]) == {"from": "python"}
    assert invoke(lam, outputs["Node"]) == {"from": "node"}

    write(sam_app / "py" / "app.py", "def handler(event, context):\n    return {'from': 'python', 'v': 2}\n")
    changed = run_cli("deploy", str(sam_app), "-y", "--output", "json")
    assert changed.code == 0, changed.out + changed.err
    data = changed.json()
    assert data["stacks"]["app"]["outcome"] == "updated"
    assert data["calls"].get("put_object") == 1  # only the changed function's artifact went up
    assert [(r["action"], r["logical_id"]) for r in data["stacks"]["app"]["plan"]["resources"]] == \
        [("Modify", "PyFn")]
    assert lam.get_function(FunctionName=outputs["Py"])["Configuration"]["CodeSha256"] != py_sha
    assert lam.get_function(FunctionName=outputs["Node"])["Configuration"]["CodeSha256"] == node_sha
    assert invoke(lam, outputs["Py"]) == {"from": "python", "v": 2}  # the updated function runs the new code

    again = run_cli("deploy", str(sam_app), "-y", "--output", "json")
    assert again.code == 0
    assert again.json()["stacks"]["app"]["outcome"] == "unchanged"
    assert again.json()["write_calls"] == 0


TREE = {
    "app.yaml": """\
Resources:
  Network:
    Type: AWS::CloudFormation::Stack
    Properties:
      TemplateURL: net/network.yaml
      Parameters: {Prefix: demo}
Outputs:
  Queue: {Value: !GetAtt Network.Outputs.Queue}
""",
    "net/network.yaml": """\
Parameters:
  Prefix: {Type: String}
Resources:
  Topic: {Type: AWS::SNS::Topic}
  Leaf:
    Type: AWS::CloudFormation::Stack
    Properties:
      TemplateURL: leaf/leaf.yaml
      Parameters: {Prefix: !Ref Prefix}
Outputs:
  Queue: {Value: !GetAtt Leaf.Outputs.Queue}
""",
    "net/leaf/leaf.yaml": """\
Parameters:
  Prefix: {Type: String}
Resources:
  Queue:
    Type: AWS::SQS::Queue
    Properties: {VisibilityTimeout: 30}
Outputs:
  Queue: {Value: !Ref Queue}
""",
}


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "tree"
    write(root / "formwright.yaml", "name: tree\nstacks:\n  app:\n    template: app.yaml\n")
    for name, text in TREE.items():
        write(root / name, text)
    return root


def test_a_change_only_in_the_leaf_of_a_nested_tree_is_planned_and_deployed(tree: Path, run_cli,
                                                                            cloud) -> None:
    created = run_cli("deploy", str(tree), "-y", "--output", "json")
    assert created.code == 0, created.out + created.err
    rows = [(r["action"], r["logical_id"]) for r in created.json()["stacks"]["app"]["plan"]["resources"]]
    assert rows == [("Add", "Network"), ("Add", "Network/Topic"), ("Add", "Network/Leaf"),
                    ("Add", "Network/Leaf/Queue")]
    queue_url = created.json()["outputs"]["app"]["Queue"]

    leaf = tree / "net" / "leaf" / "leaf.yaml"
    leaf.write_text(leaf.read_text().replace("VisibilityTimeout: 30", "VisibilityTimeout: 45"))
    plan = run_cli("plan", str(tree), "--output", "json")
    assert plan.code == 0, plan.out + plan.err
    planned = plan.json()["plans"]["app"]
    assert planned["kind"] == "update"  # the parent's plan: only its nested template changed
    assert [(r["action"], r["logical_id"]) for r in planned["resources"]] == [
        ("Modify", "Network"), ("Modify", "Network/Leaf"), ("Modify", "Network/Leaf/Queue")]
    leaf_queue = planned["resources"][2]
    assert [(d["name"], d["old"], d["new"]) for d in leaf_queue["details"]] == [("VisibilityTimeout", 30, 45)]
    text = run_cli("plan", str(tree))
    assert "Network/Leaf/Queue" in text.out
    cf = cloud.client("cloudformation")
    for stack in cf.describe_stacks()["Stacks"]:  # plan removed its change sets, the nested ones too
        summaries = cf.list_change_sets(StackName=stack["StackId"])["Summaries"]
        assert [c for c in summaries if c.get("ExecutionStatus") == "AVAILABLE"] == []

    deployed = run_cli("deploy", str(tree), "-y", "--output", "json")
    assert deployed.code == 0, deployed.out + deployed.err
    attrs = cloud.client("sqs").get_queue_attributes(QueueUrl=queue_url, AttributeNames=["VisibilityTimeout"])
    assert attrs["Attributes"]["VisibilityTimeout"] == "45"
    assert run_cli("deploy", str(tree), "-y", "--output", "json").json()["write_calls"] == 0


def test_a_failed_nested_stack_is_reported_down_to_its_own_reason(tree: Path, run_cli, cloud) -> None:
    write(tree / "other.yaml", "Resources:\n  T: {Type: AWS::SNS::Topic}\n"
                               "Outputs:\n  X: {Value: x, Export: {Name: taken}}\n")
    write(tree / "formwright.yaml", "name: tree\nstacks:\n  other:\n    template: other.yaml\n"
                                    "  app:\n    template: app.yaml\n    depends_on: [other]\n")
    assert run_cli("deploy", str(tree), "-y").code == 0
    leaf = tree / "net" / "leaf" / "leaf.yaml"
    leaf.write_text(leaf.read_text() + "  Dup: {Value: y, Export: {Name: taken}}\n")
    failed = run_cli("deploy", str(tree), "-y", "--output", "json")
    assert failed.code == 1
    error = failed.json()["stacks"]["app"]["error"]
    # not CloudFormation's "Embedded stack … was not successfully updated": the leaf's own reason
    assert "Network/Leaf: Export with name taken is already exported by stack tree-other" in error
    assert "Embedded stack" not in error
    events = run_cli("events", str(tree), "-s", "app", "-n", "30", "--output", "json")
    assert events.code == 0, events.out + events.err
    rows = events.json()["events"]
    assert any(r["stack"] == "app/Network/Leaf" and "already exported" in r["reason"] for r in rows)


def test_bad_paths_stop_before_any_cloud_write(tmp_path: Path, run_cli, cloud) -> None:
    root = tmp_path / "bad"
    write(tmp_path / "outside" / "app.py", "X = 1\n")
    write(root / "formwright.yaml", "name: bad\nstacks:\n  app:\n    template: template.yaml\n")
    write(root / "template.yaml", "Resources:\n  F:\n    Type: AWS::Lambda::Function\n    Properties:\n"
                                  "      Handler: app.h\n      Role: r\n      Code: ../outside\n")
    refused = run_cli("deploy", str(root), "-y")
    assert refused.code == 2
    assert f"{root / 'template.yaml'}:7" in refused.err and "outside the project" in refused.err
    assert "Traceback" not in refused.err
    write(root / "template.yaml", "Resources:\n  F:\n    Type: AWS::Lambda::Function\n    Properties:\n"
                                  "      Handler: app.h\n      Role: r\n      Code: ./src\n")
    missing = run_cli("plan", str(root))
    assert missing.code == 2
    assert f"{root / 'template.yaml'}:7: F.Code: './src' does not exist" in missing.err
    assert cloud.client("cloudformation").describe_stacks()["Stacks"] == []
    assert cloud.client("s3").list_buckets()["Buckets"] == []


def test_package_uploads_once_and_writes_the_template_as_the_aws_cli(sam_app: Path, run_cli, cloud) -> None:
    s3 = cloud.client("s3")
    s3.create_bucket(Bucket="deploy-bucket")
    out = sam_app / "dist" / "packaged.yaml"
    first = run_cli("package", str(sam_app / "template.yaml"), "--bucket", "deploy-bucket", "-o", str(out),
                    "--output", "json")
    assert first.code == 0, first.out + first.err
    assert first.json()["uploaded"] == 2
    text = out.read_text()
    assert "CodeUri: s3://deploy-bucket/" in text and "py/" not in text
    assert "Transform: AWS::Serverless-2016-10-31" in text  # left for CloudFormation, as the AWS CLI does
    again = run_cli("package", str(sam_app / "template.yaml"), "--bucket", "deploy-bucket", "-o", str(out),
                    "--output", "json")
    assert again.json()["uploaded"] == 0
    assert len(s3.list_objects_v2(Bucket="deploy-bucket")["Contents"]) == 2
    no_bucket = run_cli("package", str(sam_app / "template.yaml"), "--bucket", "nope", "-o", str(out))
    assert no_bucket.code == 2 and "bucket 'nope' does not exist" in no_bucket.err


def test_build_writes_packaged_templates_artifacts_and_a_manifest_without_uploading(sam_app: Path, run_cli,
                                                                                    cloud) -> None:
    built = run_cli("build", str(sam_app), "--output", "json")
    assert built.code == 0, built.out + built.err
    manifest = json.loads((sam_app / ".formwright" / "build" / "artifacts.json").read_text())
    entries = manifest["stacks"]["app"]["artifacts"]
    assert sorted(e["path"] for e in entries) == ["node", "py"]
    for entry in entries:
        data = Path(entry["file"]).read_bytes()
        assert entry["size"] == len(data) and entry["sha256"] == hashlib.sha256(data).hexdigest()
        assert entry["key"] == f"sam/{entry['sha256']}.zip" and entry["bucket"] == BUCKET
    packaged = json.loads((sam_app / ".formwright" / "build" / "app" / "packaged.json").read_text())
    assert packaged["Resources"]["PyFn"]["Properties"]["CodeUri"].startswith(f"s3://{BUCKET}/sam/")
    assert cloud.client("s3").list_buckets()["Buckets"] == []  # build is offline


def test_rain_directives_deploy_unchanged(tmp_path: Path, run_cli, cloud) -> None:
    root = tmp_path / "rain"
    write(root / "formwright.yaml", "name: rainy\nstacks:\n  app:\n    template: template.yaml\n")
    write(root / "motd.txt", "hello from rain\n")
    write(root / "modules" / "queue.yaml", "Parameters:\n  Seconds: {Type: Number}\nResources:\n"
                                           "  Queue:\n    Type: AWS::SQS::Queue\n"
                                           "    Properties: {VisibilityTimeout: !Ref Seconds}\n")
    write(root / "template.yaml", """\
Resources:
  Motd:
    Type: AWS::SSM::Parameter
    Properties: {Type: String, Value: !Rain::Embed motd.txt}
  Work:
    Type: !Rain::Module modules/queue.yaml
    Properties: {Seconds: 40}
Outputs:
  Queue: {Value: !Ref WorkQueue}
  Motd: {Value: !GetAtt Motd.Value}
""")
    deployed = run_cli("deploy", str(root), "-y", "--output", "json")
    assert deployed.code == 0, deployed.out + deployed.err
    outputs = deployed.json()["outputs"]["app"]
    assert outputs["Motd"] == "hello from rain"
    attrs = cloud.client("sqs").get_queue_attributes(QueueUrl=outputs["Queue"], AttributeNames=["All"])
    assert attrs["Attributes"]["VisibilityTimeout"] == "40"


def test_a_nested_sam_template_is_expanded_as_its_parent_and_validate_lints_it(tmp_path: Path, run_cli,
                                                                              cloud) -> None:
    root = tmp_path / "nestedsam"
    write(root / "formwright.yaml", "name: nestedsam\nstacks:\n  app:\n    template: app.yaml\n"
                                    "    capabilities: [CAPABILITY_IAM, CAPABILITY_AUTO_EXPAND]\n")
    write(root / "app.yaml", "Resources:\n  Fns:\n    Type: AWS::CloudFormation::Stack\n"
                             "    Properties: {TemplateURL: fns/fns.yaml}\n")
    write(root / "fns" / "fns.yaml", "Transform: AWS::Serverless-2016-10-31\nResources:\n  Hello:\n"
                                     "    Type: AWS::Serverless::Function\n"
                                     "    Properties: {CodeUri: code/, Handler: app.handler,"
                                     " Runtime: python3.12}\n")
    write(root / "fns" / "code" / "app.py", "def handler(event, context):\n    return 1\n")
    assert run_cli("validate", str(root)).code == 0
    # the local cloud runs no transform: the nested template must arrive expanded, its code uploaded
    deployed = run_cli("deploy", str(root), "-y", "--output", "json")
    assert deployed.code == 0, deployed.out + deployed.err
    rows = {r["logical_id"] for r in deployed.json()["stacks"]["app"]["plan"]["resources"]}
    assert {"Fns", "Fns/Hello", "Fns/HelloRole"} <= rows
    assert len(cloud.client("lambda").list_functions()["Functions"]) == 1

    write(root / "fns" / "fns.yaml", "Transform: AWS::Serverless-2016-10-31\nResources:\n  Hello:\n"
                                     "    Type: AWS::Serverless::Function\n"
                                     "    Properties: {CodeUri: code/, Handler: app.handler, Runtime: 3}\n")
    linted = run_cli("validate", str(root))
    assert linted.code == 2
    assert f"{root / 'fns' / 'fns.yaml'}:5" in linted.err  # the nested template's own line


def test_artifacts_go_to_the_stacks_artifact_bucket(sam_app: Path, run_cli, cloud) -> None:
    (sam_app / "formwright.yaml").write_text(
        "name: sam\nstacks:\n  app:\n    template: template.yaml\n    capabilities: [CAPABILITY_IAM]\n"
        "    artifact_bucket: team-artifacts\n")
    deployed = run_cli("deploy", str(sam_app), "-y", "--output", "json")
    assert deployed.code == 0, deployed.out + deployed.err
    s3 = cloud.client("s3")
    assert [b["Name"] for b in s3.list_buckets()["Buckets"]] == ["team-artifacts"]  # created on demand
    assert len(s3.list_objects_v2(Bucket="team-artifacts")["Contents"]) == 2
    shutil.rmtree(sam_app / "py")  # delete needs no artifact: a code folder gone does not stop it
    deleted = run_cli("delete", str(sam_app), "-y")
    assert deleted.code == 0, deleted.out + deleted.err
    assert cloud.client("cloudformation").describe_stacks()["Stacks"] == []
