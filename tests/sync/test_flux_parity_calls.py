"""Failed AWS calls and change set statuses, branch by branch as the Flux CloudFormation controller's
reconcileStack / reconcileChangeset / reconcileDelete take them (internal/controllers/
cloudformationstack_controller.go and internal/clients/types/changeset.go at commit
6c936890f96e5e5ddbe5a1bf0576cc2e0d0c78b6).

A failed call: Ready=False with the controller's fixed text for that call, the error itself only in the
Warning event "Failed to reconcile stack: <error>" (what `reconcile` emits when reconcileStack returns an
error), at retryInterval. All of it runs on botocore's Stubber (a fake CloudFormation and S3): the local
cloud does not refuse these calls on demand, nor does it hold a change set in UNAVAILABLE, DELETE_PENDING or
an unknown status, nor a stack in progress across passes.
"""

from __future__ import annotations

import boto3
import pytest
from botocore.stub import ANY, Stubber

from formwright.sync.status_store import FALSE, TRUE, UNKNOWN, Status

from .conftest import QUEUE
from .test_flux_parity import CS_ARN, STACK_ID, FakeTarget, described, stubbed

NAME = "flux-1-main-sha1-abc"
OTHER_ARN = "arn:aws:cloudformation:us-east-1:123456789012:changeSet/flux-1-main-sha1-abc/2"


def created(stubber) -> None:
    """The stack is applied, its inputs are new: an UPDATE change set is made."""
    stubber.add_response("describe_stacks", described("UPDATE_COMPLETE"), {"StackName": "app"})
    stubber.add_response("create_change_set", {"Id": CS_ARN, "StackId": STACK_ID})


def change_set(status: str, execution: str, reason: str = "") -> dict:
    data = {"ChangeSetId": CS_ARN, "ChangeSetName": NAME, "StackName": "app", "Status": status,
            "ExecutionStatus": execution}
    if reason:
        data["StatusReason"] = reason
    return data


def refused(stubber, method: str) -> None:
    stubber.add_client_error(method, "AccessDenied", "not allowed", http_status_code=403)


NO_CHANGES = "The submitted information didn't contain changes. Submit different information to create a " \
    "change set."
CALLS = {
    "Failed to describe the stack 'app'": lambda s: refused(s, "describe_stacks"),
    "Failed to continue a failed rollback for stack 'app'": lambda s: (
        s.add_response("describe_stacks", described("UPDATE_ROLLBACK_FAILED")),
        refused(s, "continue_update_rollback")),
    "Failed to delete the failed stack 'app'": lambda s: (
        s.add_response("describe_stacks", described("ROLLBACK_COMPLETE")), refused(s, "delete_stack")),
    "Failed to create a change set for stack 'app'": lambda s: (
        s.add_response("describe_stacks", described("UPDATE_COMPLETE")), refused(s, "create_change_set")),
    "Failed to describe a change set for stack 'app'": lambda s: (
        created(s), refused(s, "describe_change_set")),
    "Failed to delete an empty change set for stack 'app'": lambda s: (
        created(s), s.add_response("describe_change_set", change_set("FAILED", "UNAVAILABLE", NO_CHANGES)),
        refused(s, "delete_change_set")),
    "Failed to delete a failed change set for stack 'app'": lambda s: (
        created(s), s.add_response("describe_change_set", change_set("FAILED", "UNAVAILABLE", "boom")),
        refused(s, "delete_change_set")),
    "Failed to execute a change set for stack 'app'": lambda s: (
        created(s), s.add_response("describe_change_set", change_set("CREATE_COMPLETE", "AVAILABLE")),
        refused(s, "execute_change_set")),
}


@pytest.mark.parametrize("message", list(CALLS))
def test_a_failed_call_is_the_controllers_text_with_the_error_in_its_event(tmp_path, message):
    obj, artifact, stubber, reconciler = stubbed(tmp_path)
    CALLS[message](stubber)
    with stubber:
        out = reconciler.reconcile(obj, 1, Status(), artifact=artifact)
    stubber.assert_no_pending_responses()
    assert (out.status.ready, out.status.reason, out.status.message) == (
        FALSE, "CloudFormationApiCallFailed", message)
    assert out.requeue == 7.0  # retryInterval
    assert out.status.last_attempted_revision == "main@sha1:abc"
    failed = out.events[-1]
    assert (failed.type, failed.revision) == ("Warning", "main@sha1:abc")
    assert failed.message.startswith("Failed to reconcile stack: ") and "not allowed" in failed.message


class BucketTarget(FakeTarget):
    """A target whose only client is a stubbed S3 (the template bucket)."""

    def __init__(self, s3) -> None:
        self.s3 = s3

    def client(self, service):
        assert service == "s3"
        return self.s3

    def account_id(self) -> str:
        return "123456789012"


def test_a_template_upload_that_fails_is_template_upload_failed_with_its_event(tmp_path):
    """uploadStackTemplate failing: TemplateUploadFailed, and (an error returned) the Warning event."""

    obj, artifact, stubber, reconciler = stubbed(tmp_path)
    s3 = boto3.client("s3", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x")
    reconciler.target, reconciler.template_bucket = BucketTarget(s3), "flux-templates"
    stubber.add_response("describe_stacks", described("UPDATE_COMPLETE"), {"StackName": "app"})
    bucket = Stubber(s3)
    # the controller's upload: the caller's account must own the bucket, the owner gets full control
    bucket.add_client_error("put_object", "NoSuchBucket", "The specified bucket does not exist",
                            http_status_code=404, expected_params={
                                "Bucket": "flux-templates", "Key": ANY, "Body": QUEUE.encode(),
                                "ACL": "bucket-owner-full-control", "ExpectedBucketOwner": "123456789012"})
    with stubber, bucket:
        out = reconciler.reconcile(obj, 1, Status(), artifact=artifact)
    stubber.assert_no_pending_responses()
    bucket.assert_no_pending_responses()
    assert (out.status.ready, out.status.reason, out.status.message) == (
        FALSE, "TemplateUploadFailed", "Failed to upload template to S3 for stack 'app'")
    assert out.requeue == 7.0
    assert [(e.type, e.message.split(":")[0]) for e in out.events] == [
        ("Warning", "Failed to reconcile stack")]
    assert "The specified bucket does not exist" in out.events[0].message


def test_a_failed_call_on_the_delete_path(tmp_path):
    """reconcileDelete: DescribeStacks, then DeleteStack refused."""
    _obj, _artifact, stubber, reconciler = stubbed(tmp_path)
    refused(stubber, "describe_stacks")
    stubber.add_response("describe_stacks", described("UPDATE_COMPLETE"))
    refused(stubber, "delete_stack")
    st = Status(last_attempted_revision="main@sha1:abc")
    with stubber:
        first = reconciler.delete("default/app", "app", True, st, poll_interval=3.0, retry_interval=7.0)
        second = reconciler.delete("default/app", "app", True, st, poll_interval=3.0, retry_interval=7.0)
    stubber.assert_no_pending_responses()
    for out, message in ((first, "Failed to describe the stack 'app'"),
                         (second, "Failed to delete the stack 'app'")):
        assert (out.status.ready, out.status.reason, out.status.message, out.requeue) == (
            FALSE, "CloudFormationApiCallFailed", message, 7.0)
        assert [(e.type, e.revision) for e in out.events] == [("Warning", "main@sha1:abc")]
        assert out.events[0].message.startswith("Failed to reconcile stack: ")


# ---- change set statuses (reconcileChangeset, in its order) ----------------------------------------
def pending(**fields) -> Status:
    """An object whose change set `flux-1-main-sha1-abc` was created on an applied stack."""
    return Status(phase="created", change_set_name=NAME, change_set_id=CS_ARN,
                  last_attempted_change_set=CS_ARN, stack_id=STACK_ID, **fields)


@pytest.mark.parametrize("status, execution", [
    ("CREATE_COMPLETE", "UNAVAILABLE"), ("DELETE_PENDING", "UNAVAILABLE"),
    ("DELETE_IN_PROGRESS", "AVAILABLE"), ("CREATE_IN_PROGRESS", "UNAVAILABLE"),
])
def test_a_change_set_in_progress_is_waited_for_at_poll_interval(tmp_path, status, execution):
    """changeset.go InProgress: a status CREATE_/DELETE_PENDING|IN_PROGRESS or an execution status
    UNAVAILABLE waits (nothing deleted, nothing made again)."""
    obj, artifact, stubber, reconciler = stubbed(tmp_path)
    stubber.add_response("describe_stacks", described("UPDATE_COMPLETE"))
    stubber.add_response("describe_change_set", change_set(status, execution), {"ChangeSetName": CS_ARN,
                                                                                "StackName": "app"})
    with stubber:
        out = reconciler.reconcile(obj, 1, pending(), artifact=artifact)
    stubber.assert_no_pending_responses()
    assert (out.status.ready, out.status.reason, out.requeue) == (UNKNOWN, "Progressing", 3.0)
    assert out.status.message == (f"Change set is in progress for stack 'app': status '{status}', execution "
                                  f"status '{execution}', reason ''")
    assert out.events == []


def test_an_unknown_change_set_status_is_unexpected(tmp_path):
    obj, artifact, stubber, reconciler = stubbed(tmp_path)
    stubber.add_response("describe_stacks", described("UPDATE_COMPLETE"))
    stubber.add_response("describe_change_set", change_set("CREATE_COMPLETE", "SOMETHING_NEW"))
    with stubber:
        out = reconciler.reconcile(obj, 1, pending(), artifact=artifact)
    stubber.assert_no_pending_responses()
    msg = ("Unexpected change set status for stack 'app': status 'CREATE_COMPLETE', execution status "
           "'SOMETHING_NEW', reason ''")
    assert (out.status.ready, out.status.reason, out.status.message, out.requeue) == (
        FALSE, "UnexpectedStatus", msg, 7.0)
    assert [(e.type, e.message, e.revision) for e in out.events] == [("Warning", msg, "main@sha1:abc")]


def test_a_failed_change_set_is_deleted_and_change_set_failed(tmp_path):
    obj, artifact, stubber, reconciler = stubbed(tmp_path)
    stubber.add_response("describe_stacks", described("UPDATE_COMPLETE"))
    stubber.add_response("describe_change_set", change_set("FAILED", "UNAVAILABLE", "Template error: boom"))
    stubber.add_response("delete_change_set", {}, {"ChangeSetName": CS_ARN, "StackName": "app"})
    stubber.add_response("describe_stacks", described("UPDATE_COMPLETE"))  # no review stack to drop
    with stubber:
        out = reconciler.reconcile(obj, 1, pending(), artifact=artifact)
    stubber.assert_no_pending_responses()
    msg = ("Change set failed for stack 'app': status 'FAILED', execution status 'UNAVAILABLE', "
           "reason 'Template error: boom'")
    assert (out.status.ready, out.status.reason, out.status.message, out.requeue) == (
        FALSE, "ChangeSetFailed", msg, 7.0)
    assert out.status.last_attempted_change_set == CS_ARN
    assert [(e.type, e.message) for e in out.events] == [("Warning", msg)]


def test_an_empty_change_set_is_ready_with_it_as_the_applied_change_set(tmp_path):
    """CloudFormationStackReady(emptyErr.Arn): lastAttemptedChangeSet = lastAppliedChangeSet = the empty
    one (not the change set applied before)."""
    obj, artifact, stubber, reconciler = stubbed(tmp_path)
    stubber.add_response("describe_stacks", described("UPDATE_COMPLETE"))
    stubber.add_response("describe_change_set", change_set("FAILED", "UNAVAILABLE", NO_CHANGES))
    stubber.add_response("delete_change_set", {})
    with stubber:
        out = reconciler.reconcile(obj, 1, pending(last_applied_change_set=OTHER_ARN,
                                                   last_applied_revision="main@sha1:abc"), artifact=artifact)
    stubber.assert_no_pending_responses()
    assert (out.status.ready, out.status.message, out.requeue) == (
        TRUE, "Stack reconciliation succeeded", 11.0)
    assert out.status.last_attempted_change_set == out.status.last_applied_change_set == CS_ARN


def test_an_executed_change_set_of_an_earlier_revision_is_not_reported_as_this_ones(tmp_path):
    """A stack update for revision `old` ran while `abc` arrived: the controller's desired change set name
    differs, so it makes `flux-1-main-sha1-abc` and never reports `abc` applied before it ran."""
    obj, artifact, stubber, reconciler = stubbed(tmp_path)
    old_arn = "arn:aws:cloudformation:us-east-1:123456789012:changeSet/flux-1-main-sha1-old/1"
    st = Status(phase="executing", change_set_name="flux-1-main-sha1-old", change_set_id=old_arn,
                last_attempted_change_set=old_arn, last_attempted_revision="main@sha1:old",
                last_applied_revision="main@sha1:older", stack_id=STACK_ID, applied_digest="old")
    stubber.add_response("describe_stacks", described("UPDATE_COMPLETE"))
    stubber.add_response("create_change_set", {"Id": CS_ARN, "StackId": STACK_ID}, {
        "StackName": "app", "ChangeSetName": NAME, "ChangeSetType": "UPDATE", "Parameters": [],
        "Tags": ANY, "Capabilities": ANY,
        "IncludeNestedStacks": True, "TemplateBody": QUEUE})
    stubber.add_response("describe_change_set", change_set("CREATE_PENDING", "UNAVAILABLE"))
    with stubber:
        out = reconciler.reconcile(obj, 1, st, artifact=artifact)
    stubber.assert_no_pending_responses()
    assert out.status.ready == UNKNOWN and out.status.last_applied_revision == "main@sha1:older"
    assert out.status.last_attempted_revision == "main@sha1:abc" and out.status.phase == "created"
    assert [e.message for e in out.events] == [f"Update of stack 'app' in progress (change set {CS_ARN})"]
