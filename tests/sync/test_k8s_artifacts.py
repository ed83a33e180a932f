"""Bucket and OCIRepository sources in the operator: the Flux source-controller's artifact downloaded from
`status.artifact.url` (a tar.gz served by a real HTTP server on 127.0.0.1), its `status.artifact.digest`
verified, extracted inside the state folder. A bad digest, a source without an artifact or an archive that
tries to leave its folder fails only its own object (ArtifactFailed); the others are applied.

The handlers are called directly, as kopf calls them (kopf's index entries are passed in), on the local
cloud. What is faked: the source-controller itself (the test writes the status it would publish).
Behaviour from the controller (internal/controllers/cloudformationstack_controller.go, util.go): a source
without an artifact is "Source '<ref>' is not ready, artifact not found"; an artifact that cannot be
fetched or verified is "Failed to load template '<path>' from source '<ref>'"; both ArtifactFailed.
"""

from __future__ import annotations

import hashlib

import kopf
import pytest

from formwright.engine.cfn import CloudFormation
from formwright.sync.k8s import operator as op
from tests.k8s.sources import Storage, tarball

from .conftest import QUEUE
from .test_k8s import (
    body_for,
    operator,  # noqa: F401 - a fixture
    ready,
)

pytestmark = pytest.mark.cloud


@pytest.fixture
def storage(tmp_path):
    """The source-controller's artifact storage, served on 127.0.0.1 (tests/k8s/sources.py)."""
    found = Storage(tmp_path / "storage")
    yield found
    found.close()


def source(artifact: dict | None) -> list[dict]:
    """A kopf index entry of a Bucket or OCIRepository (spec unused: formwright never reads the bucket)."""
    status = {"artifact": artifact} if artifact else {
        "conditions": [{"type": "Ready", "status": "False", "reason": "Progressing"}]}
    return [{"spec": {}, "status": status}]


def stack(name: str, kind: str, source_name: str) -> dict:
    body = body_for("https://unused.invalid/x.git", stackName=f"sync-{name}")
    body["metadata"]["name"] = name
    body["spec"]["sourceRef"] = {"kind": kind, "name": source_name}
    return body


def test_bucket_and_oci_artifacts_are_fetched_verified_and_applied_and_broken_ones_fail_alone(
    operator, cloud, storage  # noqa: F811 - fixtures
):
    good = tarball({"template.yaml": QUEUE})
    bucket_rev = "sha256:" + hashlib.sha256(b"bucket listing").hexdigest()  # a Bucket's revision
    oci_rev = "latest@sha256:" + "b" * 64  # an OCIRepository's `<tag>@<digest>`
    buckets = {
        ("default", "bucket"): source(storage.store("bucket.tar.gz", good, bucket_rev)),
        ("default", "tampered"): source(dict(storage.store("tampered.tar.gz", good, "sha256:" + "c" * 64),
                                             digest="sha256:" + "0" * 64)),
    }
    escaping = tarball({"../../outside.yaml": QUEUE, "template.yaml/../../x": "no"})
    oci = {
        ("default", "oci"): source(storage.store("oci.tar.gz", good, oci_rev)),
        ("default", "pending"): source(None),
        ("default", "escaping"): source(storage.store("escaping.tar.gz", escaping, "v1@sha256:" + "e" * 9)),
    }
    outcome = {}
    # the broken ones first: the good ones after them are applied all the same
    for name, kind, source_name in [
        ("bad-digest", "Bucket", "tampered"), ("not-ready", "OCIRepository", "pending"),
        ("escapes", "OCIRepository", "escaping"), ("from-bucket", "Bucket", "bucket"),
        ("from-oci", "OCIRepository", "oci"),
    ]:
        patch = kopf.Patch()
        op.apply(body=stack(name, kind, source_name), patch=patch, git_repositories={},
                 buckets=buckets, oci_repositories=oci, cloudformation_stacks={})
        outcome[name] = patch

    cfn = CloudFormation(cloud.client("cloudformation"))
    for name, revision in [("from-bucket", bucket_rev), ("from-oci", oci_rev)]:
        assert ready(outcome[name])["status"] == "True", outcome[name]
        assert outcome[name]["status"]["lastAppliedRevision"] == revision
        assert cfn.describe(f"sync-{name}").status == "CREATE_COMPLETE"

    for name in ("bad-digest", "not-ready", "escapes"):
        assert (ready(outcome[name])["status"], ready(outcome[name])["reason"]) == ("False", "ArtifactFailed")
        assert cfn.describe(f"sync-{name}") is None
    assert ready(outcome["bad-digest"])["message"].startswith(
        "Failed to load template 'template.yaml' from source 'Bucket/tampered': artifact digest mismatch")
    assert outcome["bad-digest"]["status"]["lastAttemptedRevision"] == "sha256:" + "c" * 64
    assert ready(outcome["not-ready"])["message"] == \
        "Source 'OCIRepository/pending' is not ready, artifact not found"
    assert "Failed to load template 'template.yaml' from source 'OCIRepository/escaping'" in \
        ready(outcome["escapes"])["message"]
    state = operator.state_dir
    assert not list(state.parent.rglob("outside.yaml"))  # nothing unpacked outside its folder
