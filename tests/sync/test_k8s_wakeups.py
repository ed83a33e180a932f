"""The operator woken as the Flux controller's watches wake it: by `reconcile.fluxcd.io/requestedAt` and by a
new artifact revision of its source; its events posted as Kubernetes events.

The annotation and the events run for real under kopf against kmock's Kubernetes API emulation (see
test_k8s_kmock.py), with the local cloud and real git repositories. The source watch is driven by calling
its handler as kopf does: kmock 0.8 delivers a PATCHed GitRepository into the CloudFormationStack watch
stream too (kopf then runs the stack timer on a GitRepository body), so a source change cannot be made
through it faithfully. The objects' interval is an hour: only a wake-up explains a pass.
"""

from __future__ import annotations

import logging
import time

import kopf
import pytest

from formwright.engine.cfn import CloudFormation

from .conftest import QUEUE
from .harness import wait_for
from .test_k8s_kmock import (  # noqa: F401 - fixtures
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
        events = cluster.request("GET", "/api/v1/namespaces/default/events") or {}
        messages = [e.get("message", "") for e in events.get("items", [])]
        assert any(m.startswith("Creation of stack 'sync-app' in progress (change set arn:")
                   and m.endswith(f"(revision main@sha1:{sha})") for m in messages), messages
        passes = operator.store.get("default/app").status.last_reconcile

        # `flux reconcile`: the annotation is handled at once and recorded
        cluster.request("PATCH", f"{STACKS}/app", {"metadata": {"annotations": {
            "reconcile.fluxcd.io/requestedAt": "2026-11-22T12:00:00Z"}}}, MERGE)
        wait_for(lambda: (cluster.get("app")["status"] or {}).get("lastHandledReconcileAt")
                 == "2026-11-22T12:00:00Z", "lastHandledReconcileAt set")
        assert operator.store.get("default/app").status.last_reconcile > passes
    assert runner.exit_code == 0, runner.output


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
    time.sleep(1.1)  # the GitRepository's own interval (1s) before formwright fetches it again
    patch = kopf.Patch()
    instance.reconcile(body, patch, index(repo.url))
    assert patch["status"]["lastAppliedRevision"] == f"main@sha1:{sha2}"
    resources = CloudFormation(cloud.client("cloudformation")).client.describe_stack_resources(
        StackName="sync-app")["StackResources"]
    assert {r["LogicalResourceId"] for r in resources} == {"Queue", "Second"}
