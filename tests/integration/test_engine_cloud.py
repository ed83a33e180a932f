"""The engine against the local cloud: a 20-stack DAG, failures, import guards, big templates, bad input."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

LEAF = {
    "Parameters": {"Upstream": {"Type": "String", "Default": "none"}},
    "Resources": {
        "Queue": {"Type": "AWS::SQS::Queue"},
        "Setting": {"Type": "AWS::SSM::Parameter",
                    "Properties": {"Type": "String", "Value": {"Ref": "Upstream"},
                                   "Name": {"Fn::Sub": "/${AWS::StackName}/upstream"}}},
    },
    "Outputs": {"Chain": {"Value": {"Fn::Sub": "${Upstream}>${AWS::StackName}"}}},
}


def write_dag(root: Path, count: int, width: int = 4) -> None:
    """`count` stacks; stack i takes the Chain output of stack i-width (a DAG of depth count/width)."""
    (root / "t.json").write_text(json.dumps(LEAF))
    stacks = {}
    for i in range(count):
        body: dict = {"template": "t.json"}
        if i >= width:
            body["parameters"] = {"Upstream": f"@@ref s{i - width}.outputs.Chain"}
        stacks[f"s{i}"] = body
    text = yaml.safe_dump({"name": "dag", "stacks": stacks}, sort_keys=False)
    (root / "formwright.yaml").write_text(text.replace("'@@ref ", "!ref ").replace("Chain'", "Chain"))


def test_twenty_stacks_deploy_in_dag_order_and_delete(tmp_path: Path, run_cli, cloud) -> None:
    write_dag(tmp_path, 20)
    result = run_cli("deploy", str(tmp_path), "-y", "--output", "json", "--max-concurrency", "4")
    assert result.code == 0, result.err
    data = result.json()
    assert {s["outcome"] for s in data["stacks"].values()} == {"created"}
    assert data["outputs"]["s16"]["Chain"] == "none>dag-s0>dag-s4>dag-s8>dag-s12>dag-s16"

    noop = run_cli("deploy", str(tmp_path), "-y", "--output", "json")
    assert noop.json()["write_calls"] == 0 and set(noop.json()["calls"]) == {"describe_stacks"}

    deleted = run_cli("delete", str(tmp_path), "-y", "--output", "json")
    assert deleted.code == 0, deleted.err
    assert [s for s in cloud.client("cloudformation").describe_stacks()["Stacks"]
            if s["StackStatus"] != "DELETE_COMPLETE"] == []


def test_failed_stack_skips_dependents_and_independent_stacks_finish(tmp_path: Path, run_cli, cloud) -> None:
    (tmp_path / "ok.json").write_text(json.dumps(LEAF))
    # moto refuses a subnet in a VPC that does not exist: the stack fails in the cloud
    (tmp_path / "bad.json").write_text(
        json.dumps(
            {
                "Resources": {
                    "S": {
                        "Type": "AWS::EC2::Subnet",
                        "Properties": {"VpcId": "vpc-doesnotexist", "CidrBlock": "10.0.0.0/24"},
                    }
                },
                "Outputs": {"Chain": {"Value": "x"}},
            }
        )
    )
    (tmp_path / "formwright.yaml").write_text("""name: mixed
stacks:
  broken: {template: bad.json}
  after: {template: ok.json, parameters: {Upstream: !ref broken.outputs.Chain}}
  later: {template: ok.json, depends_on: [after]}
  independent: {template: ok.json}
""")
    result = run_cli("deploy", str(tmp_path), "-y", "--output", "json")
    assert result.code == 1
    outcomes = {n: s["outcome"] for n, s in result.json()["stacks"].items()}
    assert outcomes == {"broken": "failed", "after": "skipped", "later": "skipped", "independent": "created"}
    assert "broken failed" in result.json()["stacks"]["later"]["error"]
    broken = result.json()["stacks"]["broken"]
    assert broken["status"] == "ROLLBACK_COMPLETE" and "vpc-doesnotexist" in broken["error"]
    # the next deploy deletes the rolled-back stack and creates it again (which fails again)
    text = run_cli("deploy", str(tmp_path), "-y")
    assert text.code == 1 and "Traceback" not in text.err and "summary" in text.out
    assert "ROLLBACK_COMPLETE after a failed create: deleted and re-created" in text.err


def test_delete_refuses_a_stack_whose_export_is_imported(tmp_path: Path, run_cli, cloud) -> None:
    (tmp_path / "exporter.json").write_text(json.dumps({
        "Resources": {"Q": {"Type": "AWS::SQS::Queue"}},
        "Outputs": {"Url": {"Value": {"Ref": "Q"}, "Export": {"Name": "shared-queue-url"}}}}))
    (tmp_path / "importer.json").write_text(json.dumps({
        "Resources": {"P": {"Type": "AWS::SSM::Parameter", "Properties": {
            "Type": "String", "Name": {"Fn::Sub": "/${AWS::StackName}/queue"},
            "Value": {"Fn::ImportValue": "shared-queue-url"}}}}}))
    (tmp_path / "formwright.yaml").write_text(
        "name: imp\nstacks:\n  exporter: {template: exporter.json}\n"
        "  importer: {template: importer.json, depends_on: [exporter]}\n")
    assert run_cli("deploy", str(tmp_path), "-y").code == 0
    # a stack outside the project imports the export too
    cf = cloud.client("cloudformation")
    cf.create_stack(StackName="outsider", TemplateBody=(tmp_path / "importer.json").read_text())

    refused = run_cli("delete", str(tmp_path), "-y", "--output", "json")
    assert refused.code == 1
    stacks = refused.json()["stacks"]
    assert stacks["importer"]["outcome"] == "deleted"  # importers in the project go first
    assert stacks["exporter"]["outcome"] == "failed"
    assert "still imported by outsider" in stacks["exporter"]["error"]
    cf.delete_stack(StackName="outsider")
    assert run_cli("delete", str(tmp_path), "-y").code == 0


def test_delete_orders_an_undeclared_importer_before_its_exporter(tmp_path: Path, run_cli, cloud) -> None:
    (tmp_path / "exporter.json").write_text(json.dumps({
        "Resources": {"Q": {"Type": "AWS::SQS::Queue"}},
        "Outputs": {"Url": {"Value": {"Ref": "Q"}, "Export": {"Name": "shared-url"}}}}))
    (tmp_path / "importer.json").write_text(json.dumps({
        "Resources": {"P": {"Type": "AWS::SSM::Parameter", "Properties": {
            "Type": "String", "Name": {"Fn::Sub": "/${AWS::StackName}/url"},
            "Value": {"Fn::ImportValue": "shared-url"}}}}}))
    (tmp_path / "formwright.yaml").write_text(
        "name: imp\nstacks:\n  exporter: {template: exporter.json}\n  importer: {template: importer.json}\n")
    assert run_cli("deploy", str(tmp_path), "-y", "--stack", "exporter").code == 0
    assert run_cli("deploy", str(tmp_path), "-y").code == 0
    deleted = run_cli("delete", str(tmp_path), "-y")
    assert deleted.code == 0, deleted.err
    lines = deleted.err.splitlines()
    importer_done = next(i for i, line in enumerate(lines) if line.startswith("importer: done"))
    exporter_starts = next(i for i, line in enumerate(lines) if line.startswith("exporter: deleting"))
    assert importer_done < exporter_starts


def test_template_over_51200_bytes_goes_through_s3(tmp_path: Path, run_cli, cloud) -> None:
    resources = {f"Param{i}": {"Type": "AWS::SSM::Parameter",
                               "Properties": {"Type": "String", "Value": "v" * 200, "Name": f"/big/{i}",
                                              "Description": "padding " * 20}} for i in range(150)}
    body = json.dumps({"Resources": resources})
    assert len(body) > 51_200
    (tmp_path / "big.json").write_text(body)
    (tmp_path / "formwright.yaml").write_text("name: big\nstacks:\n  big: {template: big.json}\n")
    result = run_cli("deploy", str(tmp_path), "-y", "--output", "json")
    assert result.code == 0, result.err
    assert result.json()["calls"].get("put_object") == 1
    s3 = cloud.client("s3")
    bucket = "formwright-123456789012-us-east-1"
    keys = [o["Key"] for o in s3.list_objects_v2(Bucket=bucket)["Contents"]]
    assert keys and keys[0].startswith("big/big/")


def test_template_over_1mb_is_an_error_before_any_call(tmp_path: Path, run_cli, cloud) -> None:
    resources = {
        f"P{i}": {
            "Type": "AWS::SSM::Parameter",
            "Properties": {"Type": "String", "Value": "v" * 2000, "Name": f"/huge/{i}"},
        }
        for i in range(520)
    }
    (tmp_path / "huge.json").write_text(json.dumps({"Resources": resources}))
    (tmp_path / "formwright.yaml").write_text("name: huge\nstacks:\n  huge: {template: huge.json}\n")
    result = run_cli("deploy", str(tmp_path), "-y", "--output", "json")
    assert result.code == 2
    assert "may not exceed 1000000 bytes" in result.json()["stacks"]["huge"]["error"]
    assert result.json()["write_calls"] == 0


def test_bad_input_is_one_line_exit_2(tmp_path: Path, run_cli) -> None:
    (tmp_path / "t.yaml").write_text("Resources:\n  Q: {Type: AWS::SQS::Queue}\n")
    cases = {
        "name: p\nstacks:\n  a: {template: t.yaml, dependson: [b]}\n":
            "formwright.yaml:3: unknown key 'dependson'",
        "name: p\nstacks:\n  a: {template: missing.yaml}\n": "formwright.yaml:3: template 'missing.yaml'",
        "name: p\nstacks:\n  a: {template: t.yaml, depends_on: [b]}\n"
        "  b: {template: t.yaml, depends_on: [a]}\n": "dependency cycle:",
        "name: p\nstacks:\n  a: {template: t.yaml, parameters: {X: 1}}\n": "parameter 'X' is not declared",
    }
    for text, expected in cases.items():
        (tmp_path / "formwright.yaml").write_text(text)
        for command in ("validate", "plan", "deploy"):
            result = run_cli(command, str(tmp_path), "-y" if command == "deploy" else "--output=text")
            assert result.code == 2, (command, text, result.err)
            assert expected in result.err, (command, result.err)
            assert "Traceback" not in result.err and len(result.err.strip().splitlines()) == 1, result.err


def test_validate_reports_lint_findings_with_source_lines(tmp_path: Path, run_cli) -> None:
    (tmp_path / "t.yaml").write_text("Resources:\n  Q:\n    Type: AWS::SQS::Queue\n    Properties:\n"
                                     "      VisibilityTimeOut: 5\n")
    (tmp_path / "formwright.yaml").write_text("name: p\nstacks:\n  a: {template: t.yaml}\n")
    result = run_cli("validate", str(tmp_path))
    assert result.code == 2
    assert f"{tmp_path / 't.yaml'}:5: E3002:" in result.err


def test_no_local_cloud_is_a_clear_error(tmp_path: Path, run_cli) -> None:
    (tmp_path / "t.yaml").write_text("Resources:\n  Q: {Type: AWS::SQS::Queue}\n")
    (tmp_path / "formwright.yaml").write_text("name: p\nstacks:\n  a: {template: t.yaml}\n")
    result = run_cli("plan", str(tmp_path), env={"FORMWRIGHT_HOME": str(tmp_path / "empty-home")})
    assert result.code == 2
    assert "the local cloud is not running" in result.err and "formwright local-cloud start" in result.err
    bad_target = run_cli("plan", str(tmp_path), "--target", "gcp")
    assert bad_target.code == 2 and "unknown target 'gcp'" in bad_target.err


def test_local_cloud_commands(tmp_path: Path, run_cli) -> None:
    env = {"FORMWRIGHT_HOME": str(tmp_path / "home")}
    assert run_cli("local-cloud", "status", env=env).code == 1
    started = run_cli("local-cloud", "start", "--output", "json", env=env)
    assert started.code == 0, started.err
    info = started.json()
    assert info["started"] and info["endpoint"].startswith("http://127.0.0.1:")
    again = run_cli("local-cloud", "start", "--output", "json", env=env).json()
    assert again["started"] is False and again["endpoint"] == info["endpoint"]
    status = run_cli("local-cloud", "status", "--output", "json", env=env)
    assert status.code == 0 and status.json()["running"]
    stopped = run_cli("local-cloud", "stop", "--output", "json", env=env)
    assert stopped.json()["stopped"] is True
    assert run_cli("local-cloud", "status", env=env).code == 1


def test_validate_rejects_colliding_stack_names_in_a_multi_instance_project(tmp_path: Path, run_cli) -> None:
    (tmp_path / "t.yaml").write_text("Resources:\n  Q: {Type: AWS::SQS::Queue}\n")
    (tmp_path / "formwright.yaml").write_text(
        "name: p\npolicies: {multiple_instances: true}\nstacks:\n"
        "  good: {template: t.yaml, stack_name: '{{ instance.name }}-good'}\n"
        "  clash: {template: t.yaml, stack_name: fixed-name}\n")
    result = run_cli("validate", str(tmp_path))
    assert result.code == 2
    assert "formwright.yaml:5: stack 'clash' is named 'fixed-name' whatever the instance" in result.err


def test_usage_errors_exit_2_without_traceback(tmp_path: Path, run_cli) -> None:
    for argv in (["deploy", "-o", "json"], ["plan", "--max-concurrency", "lots"], ["nosuchcommand"]):
        result = run_cli(*argv)
        assert result.code == 2, argv
        assert "Traceback" not in result.err and "internal error" not in result.err


def test_termination_protection_is_applied_and_guards_delete(tmp_path: Path, run_cli, cloud) -> None:
    (tmp_path / "t.json").write_text(json.dumps(LEAF))
    project = tmp_path / "formwright.yaml"
    project.write_text("name: tp\nstacks:\n  s: {template: t.json, termination_protection: true}\n")
    assert run_cli("deploy", str(tmp_path), "-y").code == 0
    cf = cloud.client("cloudformation")
    assert cf.describe_stacks(StackName="tp-s")["Stacks"][0]["EnableTerminationProtection"] is True
    refused = run_cli("delete", str(tmp_path), "-y", "--output", "json")
    # issue #16: delete checks every stack before deleting any: bad input (exit 2), the JSON error envelope
    assert refused.code == 2 and "termination protection is on" in refused.json()["errors"][0]["message"]
    assert cf.describe_stacks(StackName="tp-s")["Stacks"][0]["StackStatus"] == "CREATE_COMPLETE"

    project.write_text("name: tp\nstacks:\n  s: {template: t.json, termination_protection: false}\n")
    plan = run_cli("plan", str(tmp_path), "--output", "json").json()["plans"]["s"]
    assert plan["kind"] == "update" and plan["note"] == "termination protection: off"
    assert run_cli("deploy", str(tmp_path), "-y").code == 0
    assert cf.describe_stacks(StackName="tp-s")["Stacks"][0]["EnableTerminationProtection"] is False
    assert run_cli("delete", str(tmp_path), "-y").code == 0


def test_a_stack_changed_by_someone_else_is_not_skipped(tmp_path: Path, run_cli, cloud) -> None:
    (tmp_path / "t.json").write_text(json.dumps(LEAF))
    (tmp_path / "formwright.yaml").write_text("name: ext\nstacks:\n  s: {template: t.json}\n")
    assert run_cli("deploy", str(tmp_path), "-y").code == 0
    changed = json.loads(json.dumps(LEAF))
    changed["Resources"]["Extra"] = {"Type": "AWS::SQS::Queue"}
    cloud.client("cloudformation").update_stack(StackName="ext-s", TemplateBody=json.dumps(changed))
    again = run_cli("deploy", str(tmp_path), "-y", "--output", "json")
    assert again.json()["stacks"]["s"]["outcome"] == "updated"  # put back to what the project says
    resources = cloud.client("cloudformation").describe_stack_resources(StackName="ext-s")["StackResources"]
    assert "Extra" not in {r["LogicalResourceId"] for r in resources}


def test_plan_shows_no_removal_for_parameters_left_to_their_defaults(tmp_path: Path, run_cli, cloud) -> None:
    template = {"Parameters": {"Env": {"Type": "String", "Default": "dev"},
                               "Secret": {"Type": "String", "Default": "s3cr3t-default", "NoEcho": True}},
                "Resources": {"Q": {"Type": "AWS::SQS::Queue"}}}
    (tmp_path / "t.json").write_text(json.dumps(template))
    (tmp_path / "formwright.yaml").write_text("name: dflt\nstacks:\n  s: {template: t.json}\n")
    assert run_cli("deploy", str(tmp_path), "-y").code == 0
    template["Resources"]["R"] = {"Type": "AWS::SQS::Queue"}
    (tmp_path / "t.json").write_text(json.dumps(template))
    plan = run_cli("plan", str(tmp_path), "--output", "json")
    assert plan.json()["plans"]["s"]["parameters"] == []
    assert "s3cr3t-default" not in plan.out


def test_stop_never_kills_a_process_that_is_not_the_local_cloud(tmp_path: Path, run_cli) -> None:
    import subprocess

    home = tmp_path / "home"
    home.mkdir()
    bystander = subprocess.Popen(["sleep", "60"], start_new_session=True)
    try:
        (home / "local-cloud.json").write_text(
            json.dumps(
                {
                    "endpoint": "http://127.0.0.1:9",
                    "pid": bystander.pid,
                    "port": 9,
                    "log_file": "x",
                    "started_at": 0,
                }
            )
        )
        stopped = run_cli("local-cloud", "stop", env={"FORMWRIGHT_HOME": str(home)})
        assert stopped.code == 0
        assert bystander.poll() is None  # still running
        assert not (home / "local-cloud.json").exists()
    finally:
        bystander.kill()
        bystander.wait()
