"""Stack states the local cloud cannot produce, driven through botocore's Stubber or a fault proxy.

moto finishes every operation synchronously and never rolls back, so *_IN_PROGRESS waits,
ROLLBACK_COMPLETE after a failed create, UPDATE_ROLLBACK_FAILED, DELETE_FAILED and failed executions
are scripted here with Stubber (each response is what CloudFormation documents for that state).
Throttling goes through a real HTTP proxy in front of the local cloud that answers `Throttling`.
"""

from __future__ import annotations

import datetime as dt
import http.server
import threading
import urllib.error
import urllib.request
from pathlib import Path

import boto3
import pytest
from botocore.config import Config
from botocore.stub import ANY, Stubber

from formwright.engine.cfn import CallCounter, CloudFormation
from formwright.engine.runner import StackRunner
from formwright.engine.stack import prepare_stacks
from formwright.model import load_project
from formwright.state.applied import AppliedCache

ID = "arn:aws:cloudformation:us-east-1:123456789012:stack/p-s/1"
CS = "arn:aws:cloudformation:us-east-1:123456789012:changeSet/c/1"
NOW = dt.datetime.now(dt.UTC)


class FakeTarget:
    """Just enough of a Target for the runner: a region and clients."""

    kind, region = "local", "us-east-1"

    def __init__(self, client) -> None:
        self._client = client

    def client(self, _service: str):
        return self._client

    def account_id(self) -> str:
        return "123456789012"


LATER = NOW + dt.timedelta(minutes=1)


# every stack formwright makes carries its ownership tags (issue 23), sorted as the runner sends tags
OWNED = [{"Key": "formwright:project", "Value": "p"}, {"Key": "formwright:stack", "Value": "s"}]


def stack_response(status: str, reason: str = "", outputs: dict | None = None,
                   updated: dt.datetime | None = None) -> dict:
    stack = {"StackName": "p-s", "StackId": ID, "StackStatus": status, "StackStatusReason": reason,
             "CreationTime": NOW, "Tags": OWNED,
             "Outputs": [{"OutputKey": k, "OutputValue": v} for k, v in (outputs or {}).items()]}
    if updated is not None:
        stack["LastUpdatedTime"] = updated
    return {"Stacks": [stack]}


BY_ID = {"StackName": ID}


GONE = ("ValidationError", "Stack with id p-s does not exist")


@pytest.fixture
def harness(tmp_path: Path):
    (tmp_path / "t.yaml").write_text(
        "Resources:\n  Q: {Type: AWS::SQS::Queue}\nOutputs:\n  Url: {Value: !Ref Q}\n"
    )
    (tmp_path / "formwright.yaml").write_text("name: p\nstacks:\n  s: {template: t.yaml}\n")
    project = load_project(tmp_path)
    stack = prepare_stacks(project)["s"]
    client = boto3.client("cloudformation", region_name="us-east-1", aws_access_key_id="x",
                          aws_secret_access_key="x", endpoint_url="http://127.0.0.1:9")
    stubber = Stubber(client)
    sleeps: list[float] = []
    cfn = CloudFormation(client, CallCounter(), sleep=sleeps.append)
    events: list = []
    runner = StackRunner(
        project, FakeTarget(client), cfn, AppliedCache(project.state_dir, "t"), events.append
    )
    return runner, stack, stubber, sleeps, events


def expect_change_set(stubber: Stubber, kind: str, changes: list | None = None) -> None:
    stubber.add_response("create_change_set", {"Id": CS, "StackId": ID},
                         {"StackName": "p-s", "ChangeSetName": ANY, "ChangeSetType": kind, "Parameters": [],
                          "Tags": OWNED, "Capabilities": [], "ClientToken": ANY, "TemplateBody": ANY})
    stubber.add_response("describe_change_set", {
        "ChangeSetId": CS, "StackId": ID, "Status": "CREATE_COMPLETE", "ExecutionStatus": "AVAILABLE",
        "Changes": changes or [{"Type": "Resource", "ResourceChange": {
            "Action": "Modify", "LogicalResourceId": "Q", "ResourceType": "AWS::SQS::Queue",
            "Replacement": "Conditional"}}]}, {"ChangeSetName": CS})
    stubber.add_response("execute_change_set", {}, {"ChangeSetName": CS, "ClientRequestToken": ANY})


def test_waits_for_an_operation_in_progress_at_the_cadence(harness) -> None:
    from formwright.engine.cfn import Cadence

    runner, stack, stubber, sleeps, events = harness
    runner.cfn.cadence = Cadence(events_interval=0)  # the sleeps are recorded, not slept: no time passes
    stubber.add_response("describe_stacks", stack_response("UPDATE_IN_PROGRESS"), {"StackName": "p-s"})
    stubber.add_response("describe_stacks", stack_response("UPDATE_IN_PROGRESS"), {"StackName": "p-s"})
    stubber.add_response("describe_stacks", stack_response("UPDATE_IN_PROGRESS"), {"StackName": "p-s"})
    stubber.add_response("describe_stacks", stack_response("UPDATE_COMPLETE"), {"StackName": "p-s"})
    expect_change_set(stubber, "UPDATE")
    for poll in range(1, 5):
        stubber.add_response("describe_stacks", stack_response("UPDATE_IN_PROGRESS", updated=LATER), BY_ID)
        if poll == 4:  # resource events only on every 4th poll (Cadence.events_every)
            stubber.add_response("describe_stack_events", {"StackEvents": [{
                "StackId": ID, "EventId": "e1", "StackName": "p-s", "LogicalResourceId": "Q",
                "Timestamp": dt.datetime.now(dt.UTC),
                "ResourceStatus": "UPDATE_IN_PROGRESS"}]}, BY_ID)
    done = stack_response("UPDATE_COMPLETE", outputs={"Url": "u"}, updated=LATER)
    stubber.add_response("describe_stacks", done, BY_ID)
    with stubber:
        result = runner.deploy(stack, {})
    stubber.assert_no_pending_responses()
    assert result.outcome == "updated" and result.outputs == {"Url": "u"}
    assert result.plan.resources[0].replacement == "Conditional"
    # the first polls come 0.2 s apart (± 10 % jitter): the wait had just begun
    assert len(sleeps) == 6 and all(0.18 <= s <= 0.22 for s in sleeps)
    assert any(e.message == "Q UPDATE_IN_PROGRESS" for e in events)  # latest resource event shown


def test_a_stale_read_after_execution_is_not_the_outcome(harness) -> None:
    """DescribeStacks is eventually consistent: right after ExecuteChangeSet it can still show the stack
    before the update, status, LastUpdatedTime and outputs (aws-cdk-cli#1802, fixed by #1848)."""
    runner, stack, stubber, _, _ = harness
    stubber.add_response("describe_stacks", stack_response("UPDATE_COMPLETE", outputs={"Url": "old"}),
                         {"StackName": "p-s"})
    expect_change_set(stubber, "UPDATE")
    stubber.add_response("describe_stacks", stack_response("UPDATE_COMPLETE", outputs={"Url": "old"}), BY_ID)
    stubber.add_response("describe_stacks", stack_response("UPDATE_COMPLETE", outputs={"Url": "new"},
                                                           updated=LATER), BY_ID)
    with stubber:
        result = runner.deploy(stack, {})
    stubber.assert_no_pending_responses()
    assert result.outcome == "updated" and result.outputs == {"Url": "new"}


def test_a_stale_review_in_progress_after_a_create_is_still_starting(harness) -> None:
    runner, stack, stubber, _, _ = harness
    stubber.add_client_error("describe_stacks", *GONE, expected_params={"StackName": "p-s"})
    expect_change_set(stubber, "CREATE", [{"Type": "Resource", "ResourceChange": {
        "Action": "Add", "LogicalResourceId": "Q", "ResourceType": "AWS::SQS::Queue"}}])
    stubber.add_response("describe_stacks", stack_response("REVIEW_IN_PROGRESS"), BY_ID)
    stubber.add_response("describe_stacks", stack_response("CREATE_COMPLETE", outputs={"Url": "u"}), BY_ID)
    with stubber:
        result = runner.deploy(stack, {})
    stubber.assert_no_pending_responses()
    assert result.outcome == "created" and result.outputs == {"Url": "u"}


def test_a_throttled_or_failed_poll_is_retried_not_the_outcome(harness) -> None:
    runner, stack, stubber, sleeps, _ = harness
    stubber.add_response("describe_stacks", stack_response("UPDATE_COMPLETE"), {"StackName": "p-s"})
    expect_change_set(stubber, "UPDATE")
    stubber.add_client_error("describe_stacks", "Throttling", "Rate exceeded", 400, expected_params=BY_ID)
    stubber.add_client_error("describe_stacks", "ServiceUnavailable", "", 503, expected_params=BY_ID)
    stubber.add_response("describe_stacks", stack_response("UPDATE_COMPLETE", updated=LATER), BY_ID)
    with stubber:
        result = runner.deploy(stack, {})
    stubber.assert_no_pending_responses()
    assert result.outcome == "updated", result.error
    assert len(sleeps) == 2 and sleeps[1] <= 0.8  # backoff with jitter: ceilings 0.4 s, then 0.8 s


def test_rollback_complete_after_failed_create_is_deleted_and_recreated(harness) -> None:
    runner, stack, stubber, _, events = harness
    stubber.add_response("describe_stacks", stack_response("ROLLBACK_COMPLETE"), {"StackName": "p-s"})
    stubber.add_response("delete_stack", {}, {"StackName": ID})
    stubber.add_response("describe_stacks", stack_response("DELETE_IN_PROGRESS"), {"StackName": ID})
    stubber.add_client_error("describe_stacks", *GONE, expected_params={"StackName": ID})
    expect_change_set(stubber, "CREATE", [{"Type": "Resource", "ResourceChange": {
        "Action": "Add", "LogicalResourceId": "Q", "ResourceType": "AWS::SQS::Queue"}}])
    stubber.add_response("describe_stacks", stack_response("CREATE_COMPLETE"), BY_ID)
    with stubber:
        result = runner.deploy(stack, {})
    stubber.assert_no_pending_responses()
    assert result.outcome == "created"
    assert "ROLLBACK_COMPLETE after a failed create: deleted and re-created" in result.plan.note
    assert any("deleted and re-created" in e.message for e in events)


def test_update_rollback_failed_is_continued_then_updated(harness) -> None:
    runner, stack, stubber, _, _ = harness
    stubber.add_response("describe_stacks", stack_response("UPDATE_ROLLBACK_FAILED"), {"StackName": "p-s"})
    stubber.add_response("continue_update_rollback", {}, BY_ID)
    stubber.add_response("describe_stacks", stack_response("UPDATE_ROLLBACK_IN_PROGRESS"), BY_ID)
    stubber.add_response("describe_stacks", stack_response("UPDATE_ROLLBACK_COMPLETE"), BY_ID)
    expect_change_set(stubber, "UPDATE")
    stubber.add_response("describe_stacks", stack_response("UPDATE_COMPLETE"), BY_ID)
    with stubber:
        result = runner.deploy(stack, {})
    stubber.assert_no_pending_responses()
    assert result.outcome == "updated" and "continued the rollback" in result.plan.note


def test_failed_execution_reports_the_resource_reasons(harness) -> None:
    runner, stack, stubber, _, _ = harness
    stubber.add_response("describe_stacks", stack_response("UPDATE_COMPLETE"), {"StackName": "p-s"})
    expect_change_set(stubber, "UPDATE")
    stubber.add_response("describe_stacks", stack_response("UPDATE_ROLLBACK_COMPLETE"), BY_ID)
    # the failure reasons are this operation's events (by its token, or back to its start event),
    # never "events newer than the local clock": the clock of this machine may be off
    stubber.add_response("describe_stack_events", {"StackEvents": [
        {"StackId": ID, "EventId": "e3", "StackName": "p-s", "LogicalResourceId": "Q",
         "Timestamp": NOW - dt.timedelta(hours=1), "ResourceType": "AWS::SQS::Queue",
         "ResourceStatus": "UPDATE_FAILED", "ResourceStatusReason": "Queue name already exists"},
        {"StackId": ID, "EventId": "e2", "StackName": "p-s", "LogicalResourceId": "p-s",
         "ResourceType": "AWS::CloudFormation::Stack", "Timestamp": NOW - dt.timedelta(hours=1),
         "ResourceStatus": "UPDATE_IN_PROGRESS", "ResourceStatusReason": "User Initiated"},
        {"StackId": ID, "EventId": "e1", "StackName": "p-s", "LogicalResourceId": "Q",
         "Timestamp": NOW - dt.timedelta(hours=2), "ResourceType": "AWS::SQS::Queue",
         "ResourceStatus": "CREATE_FAILED", "ResourceStatusReason": "an older operation"}]}, BY_ID)
    with stubber:
        result = runner.deploy(stack, {})
    assert result.outcome == "failed" and result.exit_code == 1
    assert result.error == "s: UPDATE_ROLLBACK_COMPLETE: Q: Queue name already exists"


def test_dead_end_states_are_errors_with_a_hint(harness) -> None:
    runner, stack, stubber, _, _ = harness
    stubber.add_response(
        "describe_stacks", stack_response("DELETE_FAILED", "bucket not empty"), {"StackName": "p-s"}
    )
    with stubber:
        result = runner.deploy(stack, {})
    assert result.outcome == "failed"
    assert "stack is DELETE_FAILED: bucket not empty" in result.error and "formwright delete" in result.error


def test_delete_failed_is_retried_once(harness) -> None:
    runner, stack, stubber, _, _ = harness
    stubber.add_response("describe_stacks", stack_response("CREATE_COMPLETE"), {"StackName": "p-s"})
    stubber.add_response("delete_stack", {}, {"StackName": ID, "ClientRequestToken": ANY})
    stubber.add_response("describe_stacks", stack_response("DELETE_FAILED"), {"StackName": ID})
    stubber.add_response("delete_stack", {}, {"StackName": ID, "ClientRequestToken": ANY})
    stubber.add_client_error("describe_stacks", *GONE, expected_params={"StackName": ID})
    with stubber:
        result = runner.delete(stack, {})
    stubber.assert_no_pending_responses()
    assert result.outcome == "deleted"


# ---- throttling through a real HTTP proxy -------------------------------------------------------
THROTTLE = (b'<ErrorResponse><Error><Type>Sender</Type><Code>Throttling</Code>'
            b'<Message>Rate exceeded</Message></Error><RequestId>x</RequestId></ErrorResponse>')


class ThrottlingProxy:
    """Forwards to the local cloud, answering the first `throttle` requests with HTTP 400 Throttling."""

    def __init__(self, upstream: str, throttle: int) -> None:
        self.upstream, self.throttle, self.seen = upstream, throttle, 0
        proxy = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                proxy.seen += 1
                if proxy.seen <= proxy.throttle:
                    self.send_response(400)
                    self.send_header("Content-Type", "text/xml")
                    self.send_header("Content-Length", str(len(THROTTLE)))
                    self.end_headers()
                    self.wfile.write(THROTTLE)
                    return
                request = urllib.request.Request(proxy.upstream + self.path, data=body, method="POST",
                                                 headers={k: v for k, v in self.headers.items()})
                try:
                    reply = urllib.request.urlopen(request, timeout=30)
                except urllib.error.HTTPError as error_reply:  # 4xx/5xx answers are answers too
                    reply = error_reply
                with reply:
                    data = reply.read()
                    self.send_response(reply.status)
                    for key, value in reply.headers.items():
                        if key.lower() not in ("content-length", "connection", "transfer-encoding"):
                            self.send_header(key, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args) -> None:
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.endpoint = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def proxied_client(endpoint: str, attempts: int):
    config = Config(retries={"mode": "standard", "max_attempts": attempts})
    return boto3.client("cloudformation", region_name="us-east-1", aws_access_key_id="x",
                        aws_secret_access_key="x", endpoint_url=endpoint, config=config)


def test_throttling_is_retried_by_botocore_standard_mode(harness, cloud) -> None:
    runner, stack, _, _, _ = harness
    proxy = ThrottlingProxy(cloud.endpoint, throttle=2)
    try:
        client = proxied_client(proxy.endpoint, attempts=5)
        runner.cfn = CloudFormation(client, CallCounter(), sleep=lambda s: None)
        runner.target = FakeTarget(client)
        result = runner.deploy(stack, {})
    finally:
        proxy.close()
    assert result.outcome == "created", result.error
    assert proxy.seen > 2  # the throttled calls were sent again


def test_throttling_past_all_retries_is_one_line(harness, cloud) -> None:
    runner, stack, _, _, _ = harness
    proxy = ThrottlingProxy(cloud.endpoint, throttle=1000)
    try:
        client = proxied_client(proxy.endpoint, attempts=2)
        runner.cfn = CloudFormation(client, CallCounter(), sleep=lambda s: None)
        result = runner.deploy(stack, {})
    finally:
        proxy.close()
    assert result.outcome == "failed" and result.exit_code == 1
    assert "DescribeStacks was throttled after all retries: Rate exceeded" in result.error
    assert "\n" not in result.error


def test_resource_events_wait_for_their_interval(harness) -> None:
    runner, stack, stubber, _, _ = harness
    stubber.add_response("describe_stacks", stack_response("UPDATE_COMPLETE"), {"StackName": "p-s"})
    expect_change_set(stubber, "UPDATE")
    for _ in range(8):  # 8 polls in less than events_interval (2 s): no DescribeStackEvents at all
        stubber.add_response("describe_stacks", stack_response("UPDATE_IN_PROGRESS", updated=LATER), BY_ID)
    stubber.add_response("describe_stacks", stack_response("UPDATE_COMPLETE", updated=LATER), BY_ID)
    with stubber:
        result = runner.deploy(stack, {})
    stubber.assert_no_pending_responses()
    assert result.outcome == "updated", result.error


def test_the_cadence_grows_with_the_wait_and_is_capped() -> None:
    from formwright.engine.cfn import Cadence

    cadence = Cadence()
    assert 0.18 <= cadence.delay(0) <= 0.22  # a fresh wait reads every 0.2 s
    assert 0.09 <= cadence.delay(0, cadence.quick) <= 0.11  # a change set from 0.1 s
    assert 0.18 <= cadence.delay(1, cadence.quick) <= 0.22  # … growing as any wait
    # a wait whose kind of operation took ~2 s before, typically last seen going at 1.9 s: its window
    # is 1.9 s to 3 s, read every 0.02 s from its start, then half the time since its start apart (one
    # running late is not read 0.02 s apart throughout); before it the plain cadence (a long expectation
    # never delays a quick answer), up to a read at its start
    assert cadence.window(2.0, 1.9) == (1.9, 3.0)
    assert cadence.window(2.0, 0.2) == (1.0, 3.0)  # never from before half the usual time
    assert 0.18 <= cadence.expecting(1.0, 2.0, 1.9) <= 0.22
    assert abs(cadence.expecting(1.8, 2.0, 1.9) - 0.1) < 1e-9
    assert abs(cadence.expecting(1.9, 2.0, 1.9) - cadence.near) < 1e-9
    assert abs(cadence.expecting(1.93, 2.0, 1.9) - cadence.near) < 1e-9
    assert abs(cadence.expecting(1.95, 2.0, 1.9) - 0.025) < 1e-9
    assert abs(cadence.expecting(2.2, 2.0, 1.9) - 0.15) < 1e-9
    assert abs(cadence.expecting(76.0, 80.0, 75.0) - 0.5) < 1e-9  # a long one, 1 s into its window
    assert 0.54 <= cadence.expecting(3.0, 2.0, 1.9) <= 0.66  # past 1.5x: the plain cadence again
    assert cadence.expecting(0.5, 600) <= cadence.minimum * 1.1
    assert 1.8 <= cadence.delay(10) <= 2.2  # after 10 s: every 2 s (a fifth of the time waited)
    assert 4.5 <= cadence.delay(3600) <= 5.5  # a long operation: every 5 s at most
    assert all(0 < cadence.retry_delay(n) <= cadence.cap * 4 for n in range(1, 30))
