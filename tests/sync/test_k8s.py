"""The kopf operator's handlers called directly (as kopf would), on the local cloud with real git."""

from __future__ import annotations

import asyncio
import hashlib
import subprocess
from pathlib import Path

import kopf
import pytest
import yaml

from formwright.engine.cfn import CloudFormation
from formwright.sync.k8s import operator as op
from formwright.sync.status_store import change_set_name_of

from .conftest import QUEUE, objects_yaml
from .test_reconcile import TWO_QUEUES

pytestmark = pytest.mark.cloud
DEPLOY = Path(__file__).resolve().parents[2] / "deploy" / "k8s"


@pytest.fixture
def operator(cloud, tmp_path, monkeypatch):
    instance = op.Operator(cloud, tmp_path / "state", drift=False)
    monkeypatch.setattr(op, "OPERATOR", instance)
    return instance


def body_for(url: str, generation: int = 1, **spec) -> dict:
    docs = list(yaml.safe_load_all(objects_yaml(url, [{"name": "app", **spec}])))
    body = docs[1]
    body["metadata"]["generation"] = generation
    return body


def index(url: str, artifact: dict | None = None) -> dict:
    return {("default", "repo"): [{"spec": {"url": url, "ref": {"branch": "main"}, "interval": "1s"},
                                   "status": {"artifact": artifact} if artifact else {}}]}


def ready(patch: kopf.Patch) -> dict:
    return patch["status"]["conditions"][0]


def test_create_update_timer_and_delete_with_destroy(operator, repo, cloud):
    sha = repo.commit({"template.yaml": QUEUE})
    body = body_for(repo.url, destroyStackOnDeletion=True)
    patch = kopf.Patch()
    op.apply(body=body, patch=patch, git_repositories=index(repo.url), cloudformation_stacks={})
    assert ready(patch)["status"] == "True" and patch["status"]["lastAppliedRevision"] == f"main@sha1:{sha}"
    assert change_set_name_of(patch["status"]["lastAppliedChangeSet"]) == f"flux-1-main-sha1-{sha}"
    cfn = CloudFormation(cloud.client("cloudformation"))
    assert cfn.describe("sync-app").status == "CREATE_COMPLETE"

    quiet = kopf.Patch()
    asyncio.run(op.tick(body=body, meta=body["metadata"], patch=quiet, git_repositories=index(repo.url)))
    assert not quiet  # not due yet: the timer does nothing

    body["metadata"]["generation"] = 2
    body["spec"]["stackParameters"] = [{"key": "Suffix", "value": "z"}]
    body["status"] = patch["status"]
    patch = kopf.Patch()
    op.apply(body=body, patch=patch, git_repositories=index(repo.url))
    assert change_set_name_of(patch["status"]["lastAppliedChangeSet"]) == f"flux-2-main-sha1-{sha}"
    assert patch["status"]["observedGeneration"] == 2
    assert cfn.describe("sync-app").parameters["Suffix"] == "z"

    op.delete(body=body, patch=kopf.Patch())
    assert cfn.describe("sync-app") is None


def test_delete_without_destroy_leaves_the_stack(operator, repo, cloud):
    repo.commit({"template.yaml": QUEUE})
    body = body_for(repo.url)
    op.apply(body=body, patch=kopf.Patch(), git_repositories=index(repo.url))
    op.delete(body=body, patch=kopf.Patch())
    assert CloudFormation(cloud.client("cloudformation")).describe("sync-app") is not None


def test_a_suspended_object_with_destroy_leaves_its_stack_when_deleted(operator, repo, cloud):
    """reconcileDelete skips a suspended object's stack even with destroyStackOnDeletion (and the
    finalizer goes: the handler finishes without a retry)."""
    repo.commit({"template.yaml": QUEUE})
    body = body_for(repo.url, destroyStackOnDeletion=True)
    op.apply(body=body, patch=kopf.Patch(), git_repositories=index(repo.url))
    body["spec"]["suspend"] = True
    op.delete(body=body, patch=kopf.Patch())
    assert CloudFormation(cloud.client("cloudformation")).describe("sync-app").status == "CREATE_COMPLETE"
    assert operator.store.get("default/app") is None


def test_source_controller_artifact_is_used_and_its_digest_verified(operator, repo, cloud, tmp_path):
    repo.commit({"template.yaml": QUEUE})
    sha = repo.commit({"template.yaml": TWO_QUEUES})
    tarball = tmp_path / "artifact.tar.gz"
    subprocess.run(
        ["git", "archive", "--format=tar.gz", "-o", str(tarball), "HEAD"], cwd=repo.path, check=True
    )
    digest = "sha256:" + hashlib.sha256(tarball.read_bytes()).hexdigest()
    artifact = {"url": tarball.as_uri(), "digest": digest, "revision": f"main@sha1:{sha}"}
    bad = kopf.Patch()
    op.apply(
        body=body_for("https://unreachable.invalid/x.git"),
        patch=bad,
        git_repositories=index(
            "https://unreachable.invalid/x.git", dict(artifact, digest="sha256:" + "0" * 64)
        ),
    )
    assert ready(bad)["status"] == "False" and ready(bad)["reason"] == "ArtifactFailed"
    assert "digest mismatch" in ready(bad)["message"]
    patch = kopf.Patch()
    op.apply(body=body_for("https://unreachable.invalid/x.git"), patch=patch,
             git_repositories=index("https://unreachable.invalid/x.git", artifact))
    assert ready(patch)["status"] == "True" and patch["status"]["lastAppliedRevision"] == f"main@sha1:{sha}"
    resources = cloud.client("cloudformation").describe_stack_resources(StackName="sync-app")[
        "StackResources"
    ]
    assert {r["LogicalResourceId"] for r in resources} == {"Queue", "Second"}


def test_suspended_and_dependency_and_bad_spec(operator, repo, cloud):
    repo.commit({"template.yaml": QUEUE})
    patch = kopf.Patch()
    op.apply(body=body_for(repo.url, suspend=True), patch=patch, git_repositories=index(repo.url))
    assert CloudFormation(cloud.client("cloudformation")).describe("sync-app") is None
    assert not operator.due("default/app")
    # dependsOn as checkDependencies reads it (internal/controllers/util.go): the object must exist, have
    # observed its current generation and be Ready=True; the index is built by the operator's own handler
    def dependency(generation: int, observed: int, ready_status: str) -> dict:
        status = {"observedGeneration": observed, "conditions": [{"type": "Ready", "status": ready_status}]}
        found = op.cloudformation_stacks(namespace="default", name="db", meta={"generation": generation},
                                         status=status)
        return {key: [value] for key, value in found.items()}

    waiting = "Dependencies do not meet ready condition "
    for stacks, why in (
        ({}, "(unable to get 'default/db' dependency: cloudformationstacks.cloudformation.contrib.fluxcd.io "
             '"db" not found)'),
        (dependency(1, 1, "False"), "(dependency 'default/db' is not ready)"),
        (dependency(2, 1, "True"), "(dependency 'default/db' is not ready)"),  # a new spec not yet seen
    ):
        patch = kopf.Patch()
        op.apply(body=body_for(repo.url, dependsOn=[{"name": "db"}]), patch=patch,
                 git_repositories=index(repo.url), cloudformation_stacks=stacks)
        assert (ready(patch)["reason"], ready(patch)["message"]) == ("DependencyNotReady", waiting + why)
    patch = kopf.Patch()
    op.apply(body=body_for(repo.url, dependsOn=[{"name": "db"}]), patch=patch,
             git_repositories=index(repo.url), cloudformation_stacks=dependency(2, 2, "True"))
    assert ready(patch)["reason"] == "Succeeded"
    broken = body_for(repo.url)
    broken["spec"]["interval"] = "often"
    with pytest.raises(kopf.PermanentError, match=r"spec\.interval"):
        op.apply(body=broken, patch=kopf.Patch())


def test_manifests_carry_the_flux_schema():
    documents = [d for f in sorted(DEPLOY.glob("**/*.yaml")) for d in yaml.safe_load_all(f.read_text()) if d]
    kinds = {d["kind"] for d in documents}
    assert {"CustomResourceDefinition", "ServiceAccount", "ClusterRole", "ClusterRoleBinding",
            "Deployment"} <= kinds
    crd = next(d for d in documents if d["kind"] == "CustomResourceDefinition")
    assert crd["spec"]["group"] == "cloudformation.contrib.fluxcd.io"
    version = crd["spec"]["versions"][0]
    assert version["name"] == "v1alpha1" and version["subresources"] == {"status": {}}
    spec = version["schema"]["openAPIV3Schema"]["properties"]["spec"]
    assert {"stackName", "templatePath", "sourceRef", "interval", "pollInterval", "retryInterval",
            "stackParameters", "stackTags", "suspend", "destroyStackOnDeletion", "dependsOn",
            "projectPath", "driftCorrection"} <= set(spec["properties"])


def test_project_path_delete_handler_destroys_the_project_even_after_losing_its_copy(operator, repo, cloud):
    """The delete handler of a projectPath object deletes its project's stacks; when this pod lost the copy
    of the deployed revision (a new emptyDir), the GitRepository's current revision is loaded instead."""
    import shutil

    from .test_reconcile import PROJECT

    repo.commit({"infra/formwright.yaml": PROJECT, "infra/templates/queue.yaml": QUEUE})
    body = body_for(repo.url, projectPath="infra", destroyStackOnDeletion=True)
    del body["spec"]["stackName"]
    patch = kopf.Patch()
    op.apply(body=body, patch=patch, git_repositories=index(repo.url))
    assert ready(patch)["status"] == "True", ready(patch)["message"]
    cfn = CloudFormation(cloud.client("cloudformation"))
    assert cfn.describe("synced-queue") is not None and cfn.describe("synced-app") is not None
    body["status"] = patch["status"]
    shutil.rmtree(operator.state_dir)  # the pod restarted on a fresh emptyDir
    op.OPERATOR = restarted = op.Operator(cloud, operator.state_dir, drift=False)  # restored by monkeypatch
    assert not restarted.reconciler.has_project_snapshot("default/app")
    op.delete(body=body, patch=kopf.Patch(), git_repositories=index(repo.url))
    assert cfn.describe("synced-queue") is None and cfn.describe("synced-app") is None
