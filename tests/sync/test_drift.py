"""Drift detection. The logic is tested against botocore's Stubber, which replays the exact responses
CloudFormation documents (drift correction included); the local cloud, which answers DetectStackDrift
for the types it can read (docs/local-cloud.md), proves the whole loop on a real endpoint."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import boto3
import pytest
from botocore.stub import ANY, Stubber

from formwright.engine.cfn import CloudFormation
from formwright.sync.naming import CORRECTION_TAG, stack_tags
from formwright.sync.objects import parse_document
from formwright.sync.reconcile import Reconciler
from formwright.sync.source import Artifact, Sources
from formwright.sync.status_store import TRUE, Status

from .conftest import QUEUE, objects_yaml
from .harness import Harness

STACK_ID = "arn:aws:cloudformation:us-east-1:123456789012:stack/drifty/1"


class FakeTarget:
    region = "us-east-1"
    endpoint = None

    def client(self, service):  # only the S3 upload of big templates would ask; this test has none
        raise AssertionError(f"unexpected client {service}")


def stack(status: str = "CREATE_COMPLETE") -> dict:
    return {"Stacks": [{"StackName": "drifty", "StackId": STACK_ID, "StackStatus": status,
                        "CreationTime": datetime(2024, 1, 1, tzinfo=UTC)}]}


def make(tmp_path: Path, correction: bool):
    import yaml

    docs = list(yaml.safe_load_all(objects_yaml("file:///unused", [
        {"name": "drifty", "stackName": "drifty", "driftCorrection": correction}])))
    obj = parse_document(docs[1])
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    (checkout / "template.yaml").write_text(QUEUE)
    artifact = Artifact("default/repo", "main@sha1:abc", checkout)
    client = boto3.client("cloudformation", region_name="us-east-1", aws_access_key_id="x",
                          aws_secret_access_key="x")
    stubber = Stubber(client)
    reconciler = Reconciler(FakeTarget(), Sources(tmp_path / "src"), state_dir=tmp_path,
                            cfn=CloudFormation(client), drift=True)
    reconciler._drift_supported = True  # the stubbed client is the probe too
    desired = reconciler.desired(obj, artifact)
    status = Status(ready=TRUE, reason="Succeeded", applied_digest=desired.digest, stack_id=STACK_ID,
                    observed_generation=1, last_applied_revision=artifact.revision,
                    last_attempted_revision=artifact.revision)
    return obj, artifact, stubber, reconciler, status


def detect_drifted(stubber: Stubber) -> None:
    stubber.add_response("describe_stacks", stack(), {"StackName": "drifty"})
    stubber.add_response(
        "detect_stack_drift", {"StackDriftDetectionId": "det-123456789"}, {"StackName": "drifty"}
    )
    stubber.add_response("describe_stacks", stack(), {"StackName": "drifty"})
    stubber.add_response("describe_stack_drift_detection_status", {
        "StackId": STACK_ID, "StackDriftDetectionId": "det-123456789", "StackDriftStatus": "DRIFTED",
        "DetectionStatus": "DETECTION_COMPLETE", "Timestamp": datetime(2024, 1, 1, tzinfo=UTC)},
        {"StackDriftDetectionId": "det-123456789"})
    stubber.add_response("describe_stack_resource_drifts", {"StackResourceDrifts": [{
        "StackId": STACK_ID, "LogicalResourceId": "Queue", "ResourceType": "AWS::SQS::Queue",
        "StackResourceDriftStatus": "MODIFIED", "Timestamp": datetime(2024, 1, 1, tzinfo=UTC)}]},
        {"StackName": "drifty", "StackResourceDriftStatusFilters": ["MODIFIED", "DELETED"]})


def test_drift_is_reported_not_corrected_by_default(tmp_path):
    obj, artifact, stubber, reconciler, status = make(tmp_path, correction=False)
    detect_drifted(stubber)
    with stubber:
        first = reconciler.reconcile(obj, 1, status, artifact=artifact)
        assert first.status.drift_detection_id == "det-123456789" and first.requeue == obj.spec.poll_interval
        second = reconciler.reconcile(obj, 1, first.status, artifact=artifact)
    stubber.assert_no_pending_responses()
    assert second.status.ready == TRUE and second.status.drift == "DRIFTED: Queue MODIFIED"
    assert second.requeue == obj.spec.interval
    assert reconciler.counter.writes == 0


def test_drift_correction_reapplies_with_a_correction_tag(tmp_path):
    obj, artifact, stubber, reconciler, status = make(tmp_path, correction=True)
    detect_drifted(stubber)
    stubber.add_response("describe_stacks", stack(), {"StackName": "drifty"})
    # the controller's tags (cfn-flux-controller/version|name|namespace), then the correction tag
    tags = [{"Key": k, "Value": v} for k, v in stack_tags(obj, {}).items()]
    tags.append({"Key": CORRECTION_TAG, "Value": "det-123456789"[-12:]})
    stubber.add_response("create_change_set", {"Id": "cs-1", "StackId": STACK_ID}, {
        "StackName": "drifty", "ChangeSetName": ANY, "ChangeSetType": "UPDATE", "Parameters": [],
        "Tags": tags, "Capabilities": ANY, "IncludeNestedStacks": True, "TemplateBody": QUEUE})
    stubber.add_response(
        "describe_change_set",
        {"Status": "CREATE_COMPLETE", "ExecutionStatus": "AVAILABLE", "Changes": []},
        {"ChangeSetName": ANY, "StackName": "drifty"},
    )
    stubber.add_response("execute_change_set", {}, {"ChangeSetName": ANY, "StackName": "drifty"})
    stubber.add_response("describe_stacks", stack("UPDATE_COMPLETE"), {"StackName": "drifty"})
    stubber.add_response(
        "describe_change_set",
        {"Status": "CREATE_COMPLETE", "ExecutionStatus": "EXECUTE_COMPLETE", "Changes": []},
        {"ChangeSetName": ANY, "StackName": "drifty"},
    )
    with stubber:
        first = reconciler.reconcile(obj, 1, status, artifact=artifact)
        second = reconciler.reconcile(obj, 1, first.status, artifact=artifact)
        assert second.status.reason == "Progressing" and second.requeue == 0.0
        third = reconciler.reconcile(obj, 1, second.status, artifact=artifact)
    stubber.assert_no_pending_responses()
    assert third.status.ready == TRUE and third.applied
    assert third.status.last_applied_change_set == "cs-1"  # the ARN CreateChangeSet answered
    assert third.status.change_set_name.endswith("-c" + "det-123456789"[-12:])


@pytest.mark.cloud
def test_local_cloud_detects_drift(tmp_path, repo, cloud):
    # the local cloud answers DetectStackDrift (docs/local-cloud.md): a stack just applied is IN_SYNC
    repo.commit({"template.yaml": QUEUE})
    folder = tmp_path / "objects"
    folder.mkdir()
    (folder / "stacks.yaml").write_text(objects_yaml(repo.url, [{"name": "app"}]))
    h = Harness(folder, cloud, tmp_path / "state", drift=True)
    h.settle("app")
    h.once("app")  # starts the detection; the next pass reads it
    st = h.once("app").status
    assert st.ready == TRUE and st.drift == "IN_SYNC"
