"""The operator woken as the Flux controller's watches wake it: by `reconcile.fluxcd.io/requestedAt` and by a
new artifact revision of its source; its events posted as Kubernetes events.

Both wake-ups run for real: the operator under kopf (kopf.testing.KopfRunner: discovery, watch streams,
indices, timers, status patches) against kmock's Kubernetes API emulation on 127.0.0.1 (see
test_k8s_kmock.py), with the local cloud and real git repositories. What is faked: the API server (kmock)
and Flux's source-controller, whose only part here is the GitRepository's `status.artifact.revision`, which
the test PATCHes through the status subresource as source-controller does. The objects' interval is an
hour: only a wake-up explains a pass. A revision bump through a real watch on a real API server is in
tests/k8s/test_operator.py; this file keeps the requestedAt annotation and the event bodies, read from
kmock's record of the requests it served.
"""

from __future__ import annotations

import logging

import kopf
import pytest

from formwright.engine.cfn import CloudFormation
from formwright.sync.k8s import operator as op
from tests.k8s.sources import tarball

from .conftest import QUEUE
from .harness import wait_for
from .test_k8s_artifacts import storage  # noqa: F401 - a fixture
from .test_k8s_kmock import (  # noqa: F401 - fixtures
    SOURCES,
    STACKS,
    add_objects,
    cluster,
    operator,
    ready_of,
    registry,
    run_operator,
)
from .test_reconcile import TWO_QUEUES

pytestmark = pytest.mark.cloud
MERGE = "application/merge-patch+json"


def test_requested_at_wakes_the_operator_and_its_events_are_posted(
    cluster, registry, operator, repo, cloud  # noqa: F811 - fixtures
):
    sha = repo.commit({"template.yaml": QUEUE})
    add_objects(cluster, repo.url, "app", stackName="sync-app", interval="1h")
    with run_operator(registry) as runner:
        wait_for(lambda: ready_of(cluster.get("app")).get("status") == "True", "Ready=True")
        # the controller's event(): the revision in the annotation `<group>/revision`, not in the message;
        # the reason is Flux's severity (internal/controllers/util.go, fluxcd/pkg/runtime AnnotatedEventf)
        events = (cluster.request("GET", "/api/v1/namespaces/default/events") or {}).get("items", [])
        created = [e for e in events if e.get("message", "").startswith(
            "Creation of stack 'sync-app' in progress (change set arn:")]
        assert len(created) == 1, [e.get("message") for e in events]
        assert created[0]["metadata"]["annotations"] == {
            "cloudformation.contrib.fluxcd.io/revision": f"main@sha1:{sha}"}
        assert created[0]["type"] == "Normal" and created[0]["reason"] == "info"
        assert created[0]["message"].endswith(")") and "revision" not in created[0]["message"]
        assert created[0]["involvedObject"]["kind"] == "CloudFormationStack"
        assert created[0]["involvedObject"]["name"] == "app"
        assert any(e["message"].startswith("Change set execution started for stack 'sync-app'")
                   for e in events)
        passes = operator.store.get("default/app").status.last_reconcile

        # `flux reconcile`: the annotation is handled at once and recorded
        cluster.request("PATCH", f"{STACKS}/app", {"metadata": {"annotations": {
            "reconcile.fluxcd.io/requestedAt": "2026-11-22T12:00:00Z"}}}, MERGE)
        wait_for(lambda: (cluster.get("app")["status"] or {}).get("lastHandledReconcileAt")
                 == "2026-11-22T12:00:00Z", "lastHandledReconcileAt set")
        assert operator.store.get("default/app").status.last_reconcile > passes
    assert runner.exit_code == 0, runner.output


def test_a_new_git_repository_revision_wakes_the_operator_through_its_watch(
    cluster, registry, operator, repo, cloud  # noqa: F811 - fixtures
):
    sha = repo.commit({"template.yaml": QUEUE})
    add_objects(cluster, repo.url, "app", stackName="sync-app", interval="1h")
    cfn = CloudFormation(cloud.client("cloudformation"))
    with run_operator(registry) as runner:
        wait_for(lambda: ready_of(cluster.get("app")).get("status") == "True", "Ready=True")
        assert cluster.get("app")["status"]["lastAppliedRevision"] == f"main@sha1:{sha}"

        # a new commit, and source-controller publishing it as the GitRepository's artifact revision
        sha2 = repo.commit({"template.yaml": TWO_QUEUES}, "second queue")
        cluster.request("PATCH", f"{SOURCES}/repo/status", {"status": {"artifact": {
            "revision": f"main@sha1:{sha2}"}}}, MERGE)
        wait_for(lambda: (cluster.get("app")["status"] or {}).get("lastAppliedRevision")
                 == f"main@sha1:{sha2}", "the new revision applied long before the object's interval (1h)")
        resources = cfn.client.describe_stack_resources(StackName="sync-app")["StackResources"]
        assert {r["LogicalResourceId"] for r in resources} == {"Queue", "Second"}
    assert runner.exit_code == 0, runner.output
    assert f"GitRepository default/repo is at main@sha1:{sha2}: reconciling default/app" in runner.output


@pytest.mark.parametrize("kind, plural", [("Bucket", "buckets"), ("OCIRepository", "ocirepositories")])
def test_a_new_bucket_or_oci_artifact_wakes_the_operator_through_its_watch(
    cluster, registry, operator, cloud, storage, kind, plural  # noqa: F811 - fixtures
):
    """The controller's Bucket / OCIRepository watches (source.toolkit.fluxcd.io/v1beta2, SourceRevision-
    ChangePredicate): source-controller publishing a new artifact wakes the objects using it."""
    sources = f"/apis/{op.SOURCE_GROUP}/{op.SOURCE_BETA}/namespaces/default/{plural}"
    first = storage.store("one.tar.gz", tarball({"template.yaml": QUEUE}), "sha256:" + "1" * 64)
    cluster.request("POST", sources, {
        "apiVersion": f"{op.SOURCE_GROUP}/{op.SOURCE_BETA}", "kind": kind,
        "metadata": {"name": "src", "namespace": "default", "resourceVersion": "1", "uid": "uid-src"},
        "spec": {"interval": "1m"}, "status": {"artifact": first}})
    cluster.request("POST", STACKS, {
        "apiVersion": f"{op.STACK_API_GROUP}/{op.VERSION}", "kind": "CloudFormationStack",
        "metadata": {"name": "app", "namespace": "default", "generation": 1, "resourceVersion": "1",
                     "uid": "uid-app"},
        "spec": {"stackName": "sync-app", "sourceRef": {"kind": kind, "name": "src"}, "interval": "1h",
                 "pollInterval": "1s", "retryInterval": "1s"}})
    def applied() -> str:
        return ((cluster.get("app") or {}).get("status") or {}).get("lastAppliedRevision") or ""

    with run_operator(registry) as runner:
        wait_for(lambda: applied() == first["revision"], "the first artifact applied")
        second = storage.store("two.tar.gz", tarball({"template.yaml": TWO_QUEUES}), "sha256:" + "2" * 64)
        cluster.request("PATCH", f"{sources}/src/status", {"status": {"artifact": second}}, MERGE)
        wait_for(lambda: applied() == second["revision"],
                 "the new artifact applied long before the object's interval (1h)")
        resources = cloud.client("cloudformation").describe_stack_resources(StackName="sync-app")
        assert {r["LogicalResourceId"] for r in resources["StackResources"]} == {"Queue", "Second"}
    assert runner.exit_code == 0, runner.output
    assert f"{kind} default/src is at {second['revision']}: reconciling default/app" in runner.output


def test_a_new_source_revision_wakes_only_the_objects_that_have_not_attempted_it(repo, cloud, tmp_path,
                                                                                 monkeypatch):
    from formwright.sync.k8s import operator as op

    from .test_k8s import body_for, index

    instance = op.Operator(cloud, tmp_path / "state", drift=False)
    monkeypatch.setattr(op, "OPERATOR", instance)
    sha = repo.commit({"template.yaml": QUEUE})
    body = body_for(repo.url, stackName="sync-app", interval="1h")
    patch = kopf.Patch()
    assert instance.reconcile(body, patch, index(repo.url)) == 3600  # Ready: next pass in an hour
    assert not instance.due("default/app")
    logger = logging.getLogger("test")
    source = {"status": {"artifact": {"revision": f"main@sha1:{sha}"}}}
    op.git_revision(body=source, namespace="default", name="repo", logger=logger)
    assert not instance.due("default/app")  # the revision it attempted: not woken
    sha2 = repo.commit({"template.yaml": TWO_QUEUES}, "second queue")
    source = {"status": {"artifact": {"revision": f"main@sha1:{sha2}"}}}
    op.git_revision(body=source, namespace="default", name="repo", logger=logger)
    assert instance.due("default/app")
    patch = kopf.Patch()  # woken: cloned now, not after the GitRepository's interval
    instance.reconcile(body, patch, index(repo.url))
    assert patch["status"]["lastAppliedRevision"] == f"main@sha1:{sha2}"
    resources = CloudFormation(cloud.client("cloudformation")).client.describe_stack_resources(
        StackName="sync-app")["StackResources"]
    assert {r["LogicalResourceId"] for r in resources} == {"Queue", "Second"}


def test_an_event_body_carries_the_revision_as_the_controller_annotates_it():
    from formwright.sync.k8s.events import event_body
    from formwright.sync.status_store import Event

    body = {"apiVersion": "cloudformation.contrib.fluxcd.io/v1alpha1", "kind": "CloudFormationStack",
            "metadata": {"name": "app", "namespace": "team", "uid": "u1"}}
    failed = Event("Warning", "Stack 'x' is in a failed state", "main@sha1:abc")
    warning = event_body(body, failed, "formwright")
    assert warning["type"] == "Warning" and warning["reason"] == "error"
    assert warning["metadata"]["annotations"] == {
        "cloudformation.contrib.fluxcd.io/revision": "main@sha1:abc"}
    assert warning["metadata"]["namespace"] == "team" and warning["metadata"]["name"].startswith("app.")
    assert warning["involvedObject"] == {"apiVersion": body["apiVersion"], "kind": "CloudFormationStack",
                                         "name": "app", "namespace": "team", "uid": "u1"}
    normal = event_body(body, Event("Normal", "Started deletion of stack 'x'"), "formwright")
    assert normal["reason"] == "info" and "annotations" not in normal["metadata"]  # no revision, none
