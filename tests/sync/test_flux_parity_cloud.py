"""The failed stack statuses the local cloud can produce, through the reconciler with real git repositories,
as the Flux CloudFormation controller takes them (internal/controllers/cloudformationstack_controller.go,
reconcileStack and reconcileDelete; internal/clients/types/stack.go at commit
6c936890f96e5e5ddbe5a1bf0576cc2e0d0c78b6):

- ROLLBACK_COMPLETE (a creation that failed): DeleteStack, UnrecoverableStackFailure, retryInterval; the
  next pass creates it again;
- UPDATE_ROLLBACK_COMPLETE (an update that failed): a Warning event and a new change set (which fails again
  here: ChangeSetFailed, retryInterval);
- DELETE_FAILED (an export still imported): deleted again, with the Warning "failed to delete, retrying" on
  the delete path and UnrecoverableStackFailure on the reconcile path.

The statuses it cannot produce (UPDATE_ROLLBACK_FAILED, ROLLBACK_FAILED, UPDATE_FAILED, IMPORT_ROLLBACK_*, an
unknown one) are in test_flux_parity.py on a fake CloudFormation.
"""

from __future__ import annotations

import json

import pytest

from formwright.sync.status_store import FALSE

from .conftest import QUEUE, Repo
from .test_flux_parity import harness

pytestmark = pytest.mark.cloud
INTERVALS = {"interval": "11s", "pollInterval": "3s", "retryInterval": "7s"}
BAD_SUBNET = json.dumps({"Resources": {"S": {"Type": "AWS::EC2::Subnet", "Properties": {
    "VpcId": "vpc-doesnotexist", "CidrBlock": "10.0.0.0/24"}}}})
EXPORTER = json.dumps({"Resources": {"Q": {"Type": "AWS::SQS::Queue"}},
                       "Outputs": {"Url": {"Value": {"Ref": "Q"}, "Export": {"Name": "sync-shared-url"}}}})
IMPORTER = json.dumps({"Resources": {"P": {"Type": "AWS::SSM::Parameter", "Properties": {
    "Type": "String", "Name": {"Fn::Sub": "/${AWS::StackName}/url"},
    "Value": {"Fn::ImportValue": "sync-shared-url"}}}}})


def test_a_failed_creation_is_deleted_as_unrecoverable_then_created_again(tmp_path, repo: Repo, cloud):
    revision = f"main@sha1:{repo.commit({'template.yaml': BAD_SUBNET})}"
    h = harness(tmp_path, repo, cloud, [{"name": "app", **INTERVALS}])
    out = h.once("app")
    assert (out.status.ready, out.status.reason, out.requeue) == (FALSE, "UnrecoverableStackFailure", 7.0)
    assert out.status.message.startswith(
        "Stack 'sync-app' is in an unrecoverable state and must be recreated: status 'ROLLBACK_COMPLETE'")
    assert "vpc-doesnotexist" in out.status.message  # the failed resource's reason (formwright appends it)
    assert (out.events[-1].type, out.events[-1].revision) == ("Warning", revision)
    assert out.events[-1].message.startswith("Stack 'sync-app' is in an unrecoverable state")
    assert h.cfn.describe("sync-app") is None  # DeleteStack

    again = h.once("app")  # the next pass makes the stack again (and it fails again)
    created = [e.message for e in again.events if e.type == "Normal"]
    assert created[0].startswith("Creation of stack 'sync-app' in progress (change set arn:")
    assert again.status.reason == "UnrecoverableStackFailure"

    sha = repo.commit({"template.yaml": QUEUE}, "fixed")
    st = h.settle("app")
    assert st.is_ready and st.last_applied_revision == f"main@sha1:{sha}"


def test_a_failed_update_warns_and_makes_a_new_change_set(tmp_path, repo: Repo, cloud):
    repo.commit({"template.yaml": QUEUE})
    h = harness(tmp_path, repo, cloud, [{"name": "app", **INTERVALS}])
    assert h.settle("app").is_ready
    # a subnet in a VPC that does not exist: the update fails and rolls back
    subnet = ("  S:\n    Type: AWS::EC2::Subnet\n    Properties:\n      VpcId: vpc-doesnotexist\n"
              "      CidrBlock: 10.0.0.0/24\nOutputs:")
    repo.commit({"template.yaml": QUEUE.replace("Outputs:", subnet)}, "a bad subnet")
    out = h.once("app")
    assert h.cfn.describe("sync-app").status == "UPDATE_ROLLBACK_COMPLETE"
    assert (out.status.ready, out.status.reason, out.requeue) == (FALSE, "ChangeSetFailed", 7.0)
    assert out.status.message.startswith("Change set failed for stack 'sync-app': status 'CREATE_COMPLETE'")
    warnings = [e.message for e in out.events if e.type == "Warning"]
    assert warnings[0].startswith("Stack 'sync-app' is in a failed state (status 'UPDATE_ROLLBACK_COMPLETE'")
    assert warnings[0].endswith("), creating a new change set")

    retry = h.once("app")  # the controller's next pass: the Warning again, then a new UPDATE change set
    assert [e.type for e in retry.events][:2] == ["Warning", "Normal"]
    assert retry.events[1].message.startswith("Update of stack 'sync-app' in progress (change set arn:")
    assert retry.status.reason == "ChangeSetFailed"


def test_a_stack_that_fails_to_delete_is_deleted_again(tmp_path, repo: Repo, cloud):
    repo.commit({"template.yaml": EXPORTER})
    h = harness(tmp_path, repo, cloud, [{"name": "app", "destroyStackOnDeletion": True, **INTERVALS}])
    assert h.settle("app").is_ready
    client = cloud.client("cloudformation")
    client.create_stack(StackName="outsider", TemplateBody=IMPORTER)  # keeps the export in use
    st = h.status("app")

    first = h.reconciler.delete("default/app", "sync-app", True, st, poll_interval=3.0, retry_interval=7.0)
    assert h.cfn.describe("sync-app").status == "DELETE_FAILED"
    assert [(e.type, e.message) for e in first.events] == [("Normal", "Started deletion of stack 'sync-app'")]
    assert first.requeue == 3.0  # pollInterval: the delete path polls
    second = h.reconciler.delete("default/app", "sync-app", True, first.status, poll_interval=3.0,
                                 retry_interval=7.0)
    assert [(e.type, e.message) for e in second.events] == [
        ("Warning", "Stack 'sync-app' failed to delete, retrying"),
        ("Normal", "Started deletion of stack 'sync-app'")]
    assert second.requeue == 3.0

    out = h.once("app")  # the reconcile path: DELETE_FAILED is one of the controller's unrecoverable statuses
    assert (out.status.reason, out.requeue) == ("UnrecoverableStackFailure", 7.0)
    assert out.status.message.startswith(
        "Stack 'sync-app' is in an unrecoverable state and must be recreated: status 'DELETE_FAILED'")

    client.delete_stack(StackName="outsider")
    gone = h.reconciler.delete("default/app", "sync-app", True, out.status, poll_interval=3.0,
                               retry_interval=7.0)
    assert gone.requeue is None and h.cfn.describe("sync-app") is None
