"""What formwright does differently for real AWS: import order, partitions, stack options, the cache key,
honest errors and failed states. Stubber stands in for CloudFormation where the local cloud cannot answer
(RollbackStack, OnStackFailure, RoleARN are only checked as passed through)."""

from __future__ import annotations

import datetime as dt
import http.server
import threading
from pathlib import Path

import boto3
import pytest
from botocore.config import Config
from botocore.stub import ANY, Stubber

from formwright.cloud.errors import is_transient, remember_http_status, translate
from formwright.cloud.s3 import object_url, partition_id
from formwright.engine.cfn import CallCounter, CloudFormation
from formwright.engine.group import StackGroup, target_key
from formwright.engine.imports import import_edges
from formwright.engine.runner import StackRunner
from formwright.engine.stack import prepare_stacks
from formwright.errors import ProjectError
from formwright.model import load_project
from formwright.state.applied import AppliedCache

ID = "arn:aws:cloudformation:us-east-1:123456789012:stack/p-s/1"
CS = "arn:aws:cloudformation:us-east-1:123456789012:changeSet/c/1"
NOW = dt.datetime.now(dt.UTC)
LATER = NOW + dt.timedelta(minutes=1)


def project(tmp_path: Path, yaml: str, templates: dict[str, str]):
    for name, text in templates.items():
        (tmp_path / name).write_text(text)
    (tmp_path / "formwright.yaml").write_text(yaml)
    return load_project(tmp_path)


# ---- import order -------------------------------------------------------------------------------
EXPORTER = """Parameters:
  Env: {Type: String, Default: dev}
Resources:
  Q: {Type: AWS::SQS::Queue}
Outputs:
  Arn:
    Value: !GetAtt Q.Arn
    Export: {Name: !Sub '${Env}-queue-arn'}
  Url:
    Value: !Ref Q
    Export: {Name: !Join [':', [!Ref AWS::StackName, url]]}
"""
IMPORTER = """Parameters:
  Env: {Type: String}
Resources:
  P:
    Type: AWS::SSM::Parameter
    Properties:
      Type: String
      Name: !Sub '/${AWS::StackName}/p'
      Value: !ImportValue {'Fn::Sub': '${Env}-queue-arn'}
  Other:
    Type: AWS::SSM::Parameter
    Properties:
      Type: String
      Name: !Sub '/${AWS::StackName}/other'
      Value: !ImportValue 'p-exporter:url'
"""


def test_import_value_names_resolved_with_parameters_add_deploy_edges(tmp_path) -> None:
    proj = project(tmp_path, "name: p\nstacks:\n  importer: {template: i.yaml, parameters: {Env: prod}}\n"
                   "  exporter: {template: e.yaml, parameters: {Env: prod}}\n",
                   {"e.yaml": EXPORTER, "i.yaml": IMPORTER})
    stacks = prepare_stacks(proj)
    edges, warnings = import_edges(stacks, "us-east-1", "123456789012")
    assert edges == {"importer": {"exporter"}, "exporter": set()}
    assert warnings == []


def test_an_import_that_cannot_be_resolved_is_a_warning_naming_it(tmp_path) -> None:
    importer = IMPORTER.replace("!ImportValue 'p-exporter:url'", "!ImportValue {'Fn::Select': [0, [a, b]]}")
    proj = project(tmp_path, "name: p\nstacks:\n  importer: {template: i.yaml, parameters: {Env: prod}}\n",
                   {"i.yaml": importer})
    edges, warnings = import_edges(prepare_stacks(proj), "us-east-1", "123456789012")
    assert edges == {"importer": set()}
    assert len(warnings) == 1 and "importer" in warnings[0] and "Fn::Select" in warnings[0]


def test_the_group_deploys_an_exporter_before_its_importer(tmp_path, cloud) -> None:
    proj = project(tmp_path, "name: p\nstacks:\n  importer: {template: i.yaml, parameters: {Env: prod}}\n"
                   "  exporter: {template: e.yaml, parameters: {Env: prod}}\n",
                   {"e.yaml": EXPORTER, "i.yaml": IMPORTER})
    started: list[str] = []
    group = StackGroup(proj, prepare_stacks(proj, target=cloud), cloud,
                       progress=lambda e: started.append(e.stack) if e.phase == "planning" else None)
    assert group.graph()["importer"] == {"exporter"}
    results = group.deploy()
    assert all(r.ok for r in results.values()), {n: r.error for n, r in results.items()}
    assert started.index("exporter") < started.index("importer")


# ---- partitions ---------------------------------------------------------------------------------
@pytest.mark.parametrize(("region", "partition", "url"), [
    ("us-east-1", "aws", "https://s3.us-east-1.amazonaws.com/b/k.json"),
    ("cn-north-1", "aws-cn", "https://s3.cn-north-1.amazonaws.com.cn/b/k.json"),
    ("us-gov-west-1", "aws-us-gov", "https://s3.us-gov-west-1.amazonaws.com/b/k.json"),
])
def test_template_urls_come_from_the_regions_partition(region, partition, url) -> None:
    # botocore's partition data (endpoints.json) is the source, not a hard-coded amazonaws.com
    assert partition_id(region) == partition
    assert object_url("b", "k.json", region) == url


# ---- stack options ------------------------------------------------------------------------------
class FakeTarget:
    kind, region = "aws", "us-east-1"

    def __init__(self, client) -> None:
        self._client = client

    def client(self, _service: str):
        return self._client

    def account_id(self) -> str:
        return "123456789012"


# every stack formwright makes carries its ownership tags (issue 23), sorted as the runner sends tags
OWNED = [{"Key": "formwright:project", "Value": "p"}, {"Key": "formwright:stack", "Value": "s"}]


def stack_response(status: str, *, updated=None, protected=False) -> dict:
    stack = {"StackName": "p-s", "StackId": ID, "StackStatus": status, "CreationTime": NOW,
             "EnableTerminationProtection": protected, "Tags": OWNED}
    if updated:
        stack["LastUpdatedTime"] = updated
    return {"Stacks": [stack]}


def harness(tmp_path: Path, options: str):
    proj = project(tmp_path, f"name: p\n{options}stacks:\n  s: {{template: t.yaml}}\n",
                   {"t.yaml": "Resources:\n  Q: {Type: AWS::SQS::Queue}\n"})
    stack = prepare_stacks(proj)["s"]
    client = boto3.client("cloudformation", region_name="us-east-1", aws_access_key_id="x",
                          aws_secret_access_key="x", endpoint_url="http://127.0.0.1:9")
    cfn = CloudFormation(client, CallCounter(), sleep=lambda _s: None)
    runner = StackRunner(proj, FakeTarget(client), cfn, AppliedCache(proj.state_dir, "t"), lambda _e: None)
    return runner, stack, Stubber(client)


ROLE = "arn:aws:iam::123456789012:role/cfn"
READY = {"ChangeSetId": CS, "StackId": ID, "Status": "CREATE_COMPLETE", "Changes": []}
BY_ID = {"StackName": ID}
BY_NAME = {"StackName": "p-s"}
TOPIC = "arn:aws:sns:us-east-1:123456789012:deploys"


def test_options_reach_create_change_set_and_execute(tmp_path) -> None:
    runner, stack, stubber = harness(tmp_path, f"on_failure: delete\nservice_role: {ROLE}\n"
                                               f"notification_arns: [{TOPIC}]\n")
    stubber.add_client_error("describe_stacks", "ValidationError", "Stack with id p-s does not exist",
                             expected_params={"StackName": "p-s"})
    stubber.add_response("create_change_set", {"Id": CS, "StackId": ID}, {
        "StackName": "p-s", "ChangeSetName": ANY, "ChangeSetType": "CREATE", "Parameters": [], "Tags": OWNED,
        "Capabilities": [], "ClientToken": ANY, "TemplateBody": ANY, "RoleARN": ROLE,
        "NotificationARNs": [TOPIC], "OnStackFailure": "DELETE"})
    stubber.add_response("describe_change_set", READY, {"ChangeSetName": CS})
    stubber.add_response("execute_change_set", {}, {"ChangeSetName": CS, "ClientRequestToken": ANY})
    # on_failure: delete: the failed create is gone when read by its stack id
    stubber.add_response("describe_stacks", {"Stacks": [{**stack_response("DELETE_COMPLETE")["Stacks"][0]}]},
                         {"StackName": ID})
    stubber.add_response("describe_stack_events", {"StackEvents": []}, {"StackName": ID})
    with stubber:
        result = runner.deploy(stack, {})
    stubber.assert_no_pending_responses()
    assert result.outcome == "failed" and "the stack was deleted" in result.error


def test_an_update_with_on_failure_do_nothing_disables_rollback(tmp_path) -> None:
    runner, stack, stubber = harness(tmp_path, "on_failure: do_nothing\n")
    stubber.add_response("describe_stacks", stack_response("UPDATE_COMPLETE"), {"StackName": "p-s"})
    stubber.add_response("create_change_set", {"Id": CS, "StackId": ID}, {
        "StackName": "p-s", "ChangeSetName": ANY, "ChangeSetType": "UPDATE", "Parameters": [], "Tags": OWNED,
        "Capabilities": [], "ClientToken": ANY, "TemplateBody": ANY})  # OnStackFailure is for creates only
    stubber.add_response("describe_change_set", READY, {"ChangeSetName": CS})
    stubber.add_response("execute_change_set", {}, {"ChangeSetName": CS, "ClientRequestToken": ANY,
                                                    "DisableRollback": True})
    stubber.add_response("describe_stacks", stack_response("UPDATE_COMPLETE", updated=LATER), BY_ID)
    with stubber:
        result = runner.deploy(stack, {})
    stubber.assert_no_pending_responses()
    assert result.outcome == "updated", result.error


def test_create_failed_is_rolled_back_with_rollback_stack_then_recreated(tmp_path) -> None:
    runner, stack, stubber = harness(tmp_path, f"service_role: {ROLE}\n")
    stubber.add_response("describe_stacks", stack_response("CREATE_FAILED"), {"StackName": "p-s"})
    stubber.add_response("rollback_stack", {"StackId": ID}, {"StackName": ID, "RoleARN": ROLE})
    stubber.add_response("describe_stacks", stack_response("CREATE_FAILED"), {"StackName": ID})  # stale
    stubber.add_response("describe_stacks", stack_response("ROLLBACK_COMPLETE"), {"StackName": ID})
    stubber.add_response("delete_stack", {}, {"StackName": ID, "RoleARN": ROLE})
    stubber.add_client_error("describe_stacks", "ValidationError", "Stack with id p-s does not exist",
                             expected_params={"StackName": ID})
    stubber.add_response("create_change_set", {"Id": CS, "StackId": ID}, {
        "StackName": "p-s", "ChangeSetName": ANY, "ChangeSetType": "CREATE", "Parameters": [], "Tags": OWNED,
        "Capabilities": [], "ClientToken": ANY, "TemplateBody": ANY, "RoleARN": ROLE})
    stubber.add_response("describe_change_set", READY, {"ChangeSetName": CS})
    stubber.add_response("execute_change_set", {}, {"ChangeSetName": CS, "ClientRequestToken": ANY})
    stubber.add_response("describe_stacks", stack_response("CREATE_COMPLETE"), {"StackName": ID})
    with stubber:
        result = runner.deploy(stack, {})
    stubber.assert_no_pending_responses()
    assert result.outcome == "created", result.error


@pytest.mark.parametrize("status", ["UPDATE_FAILED", "IMPORT_ROLLBACK_FAILED"])
def test_a_kept_failed_state_is_updated_again(tmp_path, status) -> None:
    # with rollback disabled (on_failure: do_nothing) a failed update keeps its resources; CloudFormation
    # accepts a new update from there
    runner, stack, stubber = harness(tmp_path, "on_failure: do_nothing\n")
    stubber.add_response("describe_stacks", stack_response(status), {"StackName": "p-s"})
    stubber.add_response("create_change_set", {"Id": CS, "StackId": ID}, {
        "StackName": "p-s", "ChangeSetName": ANY, "ChangeSetType": "UPDATE", "Parameters": [], "Tags": OWNED,
        "Capabilities": [], "ClientToken": ANY, "TemplateBody": ANY})
    stubber.add_response("describe_change_set", READY, {"ChangeSetName": CS})
    stubber.add_response("execute_change_set", {}, {"ChangeSetName": CS, "ClientRequestToken": ANY,
                                                    "DisableRollback": True})
    stubber.add_response("describe_stacks", stack_response("UPDATE_COMPLETE", updated=LATER), BY_ID)
    with stubber:
        result = runner.deploy(stack, {})
    stubber.assert_no_pending_responses()
    assert result.outcome == "updated", result.error
    assert f"stack was {status}" in result.plan.note


def test_update_failed_is_rolled_back_with_rollback_stack_then_updated(tmp_path) -> None:
    # RollbackStack "rolls back the specified stack to the last known stable state from CREATE_FAILED or
    # UPDATE_FAILED stack statuses" (AWS CloudFormation API Reference, RollbackStack); from there the
    # update is made again, rollback on (the default on_failure)
    runner, stack, stubber = harness(tmp_path, "")
    stubber.add_response("describe_stacks", stack_response("UPDATE_FAILED", updated=NOW), BY_NAME)
    stubber.add_response("rollback_stack", {"StackId": ID}, {"StackName": ID})
    stubber.add_response("describe_stacks", stack_response("UPDATE_FAILED", updated=NOW), BY_ID)  # stale
    stubber.add_response("describe_stacks", stack_response("UPDATE_ROLLBACK_IN_PROGRESS", updated=LATER),
                         BY_ID)
    stubber.add_response("describe_stacks", stack_response("UPDATE_ROLLBACK_COMPLETE", updated=LATER), BY_ID)
    stubber.add_response("create_change_set", {"Id": CS, "StackId": ID}, {
        "StackName": "p-s", "ChangeSetName": ANY, "ChangeSetType": "UPDATE", "Parameters": [], "Tags": OWNED,
        "Capabilities": [], "ClientToken": ANY, "TemplateBody": ANY})
    stubber.add_response("describe_change_set", READY, {"ChangeSetName": CS})
    stubber.add_response("execute_change_set", {}, {"ChangeSetName": CS, "ClientRequestToken": ANY})
    later_still = LATER + dt.timedelta(minutes=1)
    stubber.add_response("describe_stacks", stack_response("UPDATE_COMPLETE", updated=later_still), BY_ID)
    with stubber:
        result = runner.deploy(stack, {})
    stubber.assert_no_pending_responses()
    assert result.outcome == "updated", result.error
    assert "stack was UPDATE_FAILED with rollback disabled: rolled back first" in result.plan.note


def test_a_rollback_that_fails_is_reported_with_its_status(tmp_path) -> None:
    runner, stack, stubber = harness(tmp_path, "")
    stubber.add_response("describe_stacks", stack_response("UPDATE_FAILED", updated=NOW), BY_NAME)
    stubber.add_response("rollback_stack", {"StackId": ID}, {"StackName": ID})
    stubber.add_response("describe_stacks", stack_response("UPDATE_ROLLBACK_FAILED", updated=LATER), BY_ID)
    with stubber:
        result = runner.deploy(stack, {})
    stubber.assert_no_pending_responses()  # no change set on a stack the rollback left broken
    assert result.outcome == "failed" and result.exit_code == 1
    assert "the rollback ended in UPDATE_ROLLBACK_FAILED" in result.error


def test_create_failed_kept_with_do_nothing_is_updated_again(tmp_path) -> None:
    # OnStackFailure DO_NOTHING keeps a failed create's resources (CREATE_FAILED); CloudFormation takes an
    # update of that stack from there ("retry"), with rollback still disabled
    runner, stack, stubber = harness(tmp_path, "on_failure: do_nothing\n")
    stubber.add_response("describe_stacks", stack_response("CREATE_FAILED"), {"StackName": "p-s"})
    stubber.add_response("create_change_set", {"Id": CS, "StackId": ID}, {
        "StackName": "p-s", "ChangeSetName": ANY, "ChangeSetType": "UPDATE", "Parameters": [], "Tags": OWNED,
        "Capabilities": [], "ClientToken": ANY, "TemplateBody": ANY})
    stubber.add_response("describe_change_set", READY, {"ChangeSetName": CS})
    stubber.add_response("execute_change_set", {}, {"ChangeSetName": CS, "ClientRequestToken": ANY,
                                                    "DisableRollback": True})
    stubber.add_response("describe_stacks", stack_response("UPDATE_COMPLETE", updated=LATER), BY_ID)
    with stubber:
        result = runner.deploy(stack, {})
    stubber.assert_no_pending_responses()
    assert result.outcome == "updated", result.error
    assert "stack was CREATE_FAILED: updated again" in result.plan.note


def test_import_rollback_failed_is_updated_again_with_rollback_on(tmp_path) -> None:
    runner, stack, stubber = harness(tmp_path, "")
    stubber.add_response("describe_stacks", stack_response("IMPORT_ROLLBACK_FAILED"), {"StackName": "p-s"})
    stubber.add_response("create_change_set", {"Id": CS, "StackId": ID}, {
        "StackName": "p-s", "ChangeSetName": ANY, "ChangeSetType": "UPDATE", "Parameters": [], "Tags": OWNED,
        "Capabilities": [], "ClientToken": ANY, "TemplateBody": ANY})
    stubber.add_response("describe_change_set", READY, {"ChangeSetName": CS})
    stubber.add_response("execute_change_set", {}, {"ChangeSetName": CS, "ClientRequestToken": ANY})
    stubber.add_response("describe_stacks", stack_response("UPDATE_COMPLETE", updated=LATER), BY_ID)
    with stubber:
        result = runner.deploy(stack, {})
    stubber.assert_no_pending_responses()
    assert result.outcome == "updated", result.error


def test_termination_protection_set_out_of_band_is_kept_and_the_plan_says_so(tmp_path) -> None:
    runner, stack, stubber = harness(tmp_path, "")
    info_response = stack_response("UPDATE_COMPLETE", protected=True)
    stubber.add_response("create_change_set", {"Id": CS, "StackId": ID}, None)
    stubber.add_response("describe_change_set", {"ChangeSetId": CS, "StackId": ID, "Status": "FAILED",
                                                 "StatusReason": "The submitted information didn't contain "
                                                 "changes."}, {"ChangeSetName": CS})
    stubber.add_response("delete_change_set", {}, {"ChangeSetName": CS})
    from formwright.engine.cfn import StackInfo
    from formwright.engine.planning import plan_stack

    info = StackInfo.from_api(info_response["Stacks"][0])
    with stubber:
        plan = plan_stack(runner, stack, {}, info)
    stubber.assert_no_pending_responses()  # no update_termination_protection call
    assert plan.kind == "no changes" and "kept" in plan.note


def test_bad_options_are_one_line_with_the_line(tmp_path) -> None:
    with pytest.raises(ProjectError) as err:
        project(tmp_path, "name: p\non_failure: explode\nstacks:\n  s: {template: t.yaml}\n",
                {"t.yaml": "Resources:\n  Q: {Type: AWS::SQS::Queue}\n"})
    assert err.value.line == 2 and "rollback, delete, do_nothing" in str(err.value)
    with pytest.raises(ProjectError) as err:
        project(tmp_path, "name: p\nstacks:\n  s: {template: t.yaml, service_role: admin}\n",
                {"t.yaml": "Resources:\n  Q: {Type: AWS::SQS::Queue}\n"})
    assert "role ARN" in str(err.value)
    with pytest.raises(ProjectError) as err:
        project(tmp_path, "name: p\nstacks:\n  s:\n    template: t.yaml\n    stack_timeout: 1.5\n",
                {"t.yaml": "Resources:\n  Q: {Type: AWS::SQS::Queue}\n"})
    assert err.value.line == 5 and "whole number of minutes" in str(err.value)


def test_stack_timeout_flows_project_group_stack_in_minutes(tmp_path) -> None:
    # sceptre's `stack_timeout` is minutes, 0 meaning none; here it flows project -> group -> stack
    loaded = project(tmp_path, "name: p\nstack_timeout: 30\nstacks:\n  a: {template: t.yaml}\n"
                     "  b: {template: t.yaml, stack_timeout: 0}\ngroups:\n  g:\n    stack_timeout: 5\n"
                     "    stacks:\n      c: {template: t.yaml}\n"
                     "      d: {template: t.yaml, stack_timeout: 2}\n",
                     {"t.yaml": "Resources:\n  Q: {Type: AWS::SQS::Queue}\n"})
    assert {n: s.stack_timeout for n, s in loaded.stacks.items()} == {"a": 30, "b": None, "c": 5, "d": 2}


# ---- the applied cache key ----------------------------------------------------------------------
class KeyTarget:
    def __init__(self, kind, region, account, endpoint) -> None:
        self.kind, self.region, self._account = kind, region, account
        self._client = boto3.client("cloudformation", region_name=region, endpoint_url=endpoint,
                                    aws_access_key_id="x", aws_secret_access_key="x")

    def client(self, _service: str):
        return self._client

    def account_id(self) -> str:
        return self._account


def test_the_cache_key_names_account_region_and_endpoint() -> None:
    base = target_key(KeyTarget("aws", "eu-west-1", "111111111111", None))
    assert base.startswith("aws-111111111111-eu-west-1-")
    assert target_key(KeyTarget("aws", "eu-west-1", "222222222222", None)) != base
    assert target_key(KeyTarget("aws", "eu-west-1", "111111111111", "http://127.0.0.1:4566")) != base
    assert target_key(KeyTarget("aws", "eu-west-1", "111111111111", None)) == base


# ---- honest errors ------------------------------------------------------------------------------
def serve(status: int, body: bytes):
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server's name
            self.rfile.read(int(self.headers.get("Content-Length", 0)))
            self.send_response(status)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


@pytest.mark.parametrize(("status", "body"), [(502, b"<html><body>Bad Gateway</body></html>"),
                                              (503, b"<html><br>"), (403, b"<html><br>")])
def test_an_html_error_page_is_the_endpoints_fault_with_its_status(status, body) -> None:
    server = serve(status, body)
    try:
        client = boto3.client("cloudformation", region_name="us-east-1", aws_access_key_id="x",
                              aws_secret_access_key="x", config=Config(retries={"max_attempts": 1}),
                              endpoint_url=f"http://127.0.0.1:{server.server_address[1]}")
        remember_http_status(client)
        with pytest.raises(Exception) as caught:
            client.describe_stacks(StackName="x")
    finally:
        server.shutdown()
    error = translate(caught.value, target="aws")
    assert f"HTTP {status}" in str(error) and "not an AWS answer" in str(error)
    assert "local cloud" not in str(error)
    assert is_transient(caught.value) == (status >= 500)


def test_no_local_cloud_hint_on_the_aws_target() -> None:
    from botocore.exceptions import EndpointConnectionError

    err = EndpointConnectionError(endpoint_url="https://cloudformation.eu-west-1.amazonaws.com")
    assert "local-cloud" not in str(translate(err, target="aws"))
    assert "local-cloud" in str(translate(err, target="local"))


def test_a_missing_profile_is_bad_input(tmp_path) -> None:
    import os
    import subprocess
    import sys

    (tmp_path / "t.yaml").write_text("Resources:\n  Q: {Type: AWS::SQS::Queue}\n")
    (tmp_path / "formwright.yaml").write_text("name: p\nstacks:\n  s: {template: t.yaml}\n")
    env = {**os.environ, "AWS_PROFILE": "no-such-profile-here", "AWS_CONFIG_FILE": str(tmp_path / "none"),
           "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "none")}
    env.pop("AWS_REGION", None)
    env.pop("AWS_DEFAULT_REGION", None)
    proc = subprocess.run([sys.executable, "-m", "formwright", "plan", str(tmp_path), "--target", "aws"],
                          env=env, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert proc.returncode == 2, proc.stderr
    assert "no-such-profile-here" in proc.stderr and "Traceback" not in proc.stderr
