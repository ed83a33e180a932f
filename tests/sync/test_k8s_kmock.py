"""The kopf operator run for real (kopf.testing.KopfRunner: discovery, watch streams, finalizers, status
patches, timers, indices) against kmock's Kubernetes API emulation on 127.0.0.1, with the local cloud and
real git repositories.

kmock's emulator keeps objects as plain JSON: it never sets `metadata.resourceVersion`, `generation` or
`uid`. kopf removes its finalizer with a JSON patch guarded by a `test` of `/metadata/resourceVersion`, so
the objects are created here with a fixed resourceVersion (the emulator never changes it, so the guard holds).
Each object gets its own `uid` here, as the API server gives it: kopf keeps its per-object memory (the body a
timer sees) by uid, so objects without one are one object to kopf (a CloudFormationStack's timer then ran on
the GitRepository's body). The test also sets `metadata.generation` itself when it changes the spec, as the
API server would.

Why these stay beside tests/k8s (the operator on a real kube-apiserver, RBAC on): kmock records every request
it served, so a test can assert the whole sequence of status patches of a pass (the Ready=Unknown
"reconciliation in progress" written mid-pass before the final state), which a real server keeps only as
the object's latest state; and kmock starts in milliseconds, so the many handler paths run here cheaply.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import threading
import urllib.error
import urllib.request
from pathlib import Path

import pytest

kmock = pytest.importorskip("kmock", reason="kmock is not installed: `pip install kmock` (its pytest plugin "
                                            "needs pytest-asyncio)")
import kopf.testing  # noqa: E402

from formwright.engine.cfn import CloudFormation  # noqa: E402
from formwright.sync.k8s import operator as op  # noqa: E402
from formwright.sync.status_store import change_set_name_of  # noqa: E402

from .conftest import QUEUE  # noqa: E402
from .harness import wait_for  # noqa: E402
from .test_reconcile import PROJECT  # noqa: E402

pytestmark = pytest.mark.cloud

STACKS = f"/apis/{op.STACK_API_GROUP}/{op.VERSION}/namespaces/default/{op.PLURAL}"
SOURCES = f"/apis/{op.SOURCE_GROUP}/{op.SOURCE_VERSION}/namespaces/default/{op.SOURCE_PLURAL}"


class Cluster:
    """kmock's Kubernetes emulator served on 127.0.0.1 from an event loop in its own thread."""

    def __init__(self) -> None:
        self.url = ""
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="kmock", daemon=True)

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        try:
            self._loop.run_until_complete(self._serve())
        except BaseException as err:  # noqa: BLE001 - reported to the test thread
            self._error = err
            self._ready.set()
        finally:
            self._loop.close()

    async def _serve(self) -> None:
        self._stopping = asyncio.Event()
        async with kmock.KubernetesEmulator() as emulator, kmock.Server(emulator) as server:
            emulator.resources[f"{op.STACK_API_GROUP}/{op.VERSION}/{op.PLURAL}"] = kmock.ResourceInfo(
                kind="CloudFormationStack",
                singular="cloudformationstack",
                namespaced=True,
                verbs={"list", "watch", "get", "patch", "create", "delete", "update"},
                subresources={"status"},
            )
            emulator.resources[f"{op.SOURCE_GROUP}/{op.SOURCE_VERSION}/{op.SOURCE_PLURAL}"] = (
                kmock.ResourceInfo(
                    kind="GitRepository",
                    singular="gitrepository",
                    namespaced=True,
                    verbs={"list", "watch", "get", "patch", "create", "delete", "update"},
                    subresources={"status"},
                )
            )
            for plural, kind in ((op.BUCKET_PLURAL, "Bucket"), (op.OCI_PLURAL, "OCIRepository")):
                emulator.resources[f"{op.SOURCE_GROUP}/{op.SOURCE_BETA}/{plural}"] = kmock.ResourceInfo(
                    kind=kind, singular=kind.lower(), namespaced=True,
                    verbs={"list", "watch", "get", "patch", "create", "delete", "update"},
                    subresources={"status"})
            emulator.resources["v1/events"] = kmock.ResourceInfo(kind="Event", namespaced=True,
                                                                 verbs={"create", "list"})
            # kopf's observers wait for these two to be discoverable before they start any watch; namespaces
            # are never listed (kmock 0.8 parses `/api/v1/namespaces` as a namespace prefix and answers 500),
            # hence `--all-namespaces` below, as deploy/k8s runs it
            emulator.resources["v1/namespaces"] = kmock.ResourceInfo(kind="Namespace", namespaced=False,
                                                                     verbs={"list", "watch", "get"})
            emulator.resources["apiextensions.k8s.io/v1/customresourcedefinitions"] = kmock.ResourceInfo(
                kind="CustomResourceDefinition", namespaced=False, verbs={"list", "watch", "get"})
            self.emulator = emulator
            self.url = str(server.url).rstrip("/")
            self._ready.set()
            await self._stopping.wait()

    def start(self) -> None:
        self._thread.start()
        self._ready.wait(30)
        if self._error is not None or not self.url:
            raise RuntimeError(f"kmock did not start: {self._error!r}")

    def stop(self) -> None:
        if self._thread.is_alive():
            self._loop.call_soon_threadsafe(self._stopping.set)
            self._thread.join(30)

    # ---- a tiny client (what kubectl would do) -------------------------------------------------
    def request(self, method: str, path: str, body: object = None,
                content_type: str = "application/json") -> dict | None:
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.url + path, data=data, method=method,
                                     headers={"Content-Type": content_type})
        try:
            with urllib.request.urlopen(req, timeout=10) as reply:  # noqa: S310 - 127.0.0.1 only
                return json.loads(reply.read() or b"null")
        except urllib.error.HTTPError as err:
            if err.code == 404:
                return None
            raise

    def get(self, name: str) -> dict | None:
        return self.request("GET", f"{STACKS}/{name}")

    def status_patches(self, name: str) -> list[dict]:
        """Every `.status` an operator patched on the CloudFormationStack `name`, in order (kmock keeps the
        requests it served)."""
        path = f"{STACKS}/{name}/status"
        return [(r.data or {}).get("status") or {} for r in list(self.emulator)
                if str(r.method).upper().endswith("PATCH") and r.url.path == path]


@pytest.fixture
def cluster(tmp_path, monkeypatch):
    found = Cluster()
    found.start()
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        json.dumps(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "current-context": "kmock",
                "clusters": [{"name": "kmock", "cluster": {"server": found.url}}],
                "users": [{"name": "kmock", "user": {"token": "test"}}],
                "contexts": [
                    {
                        "name": "kmock",
                        "context": {"cluster": "kmock", "user": "kmock", "namespace": "default"},
                    }
                ],
            }
        )
    )
    monkeypatch.setenv("KUBECONFIG", str(kubeconfig))
    # kmock has no authorization API (SelfSubjectAccessReview): the start-up permission check is tested
    # against the real API server in tests/k8s
    monkeypatch.setenv("FORMWRIGHT_SYNC_CHECK_PERMISSIONS", "false")
    yield found
    found.stop()


@pytest.fixture
def registry(cluster):
    """A registry holding the operator module's own handlers (its decorators, re-run by a reload) and
    kopf's kubeconfig login, which kopf's default registry only gets when KUBECONFIG is set at import."""
    old = kopf.get_default_registry()
    fresh = kopf.OperatorRegistry()
    kopf.set_default_registry(fresh)
    try:
        importlib.reload(op)
    finally:
        kopf.set_default_registry(old)
    kopf.on.login(registry=fresh)(kopf.login_with_kubeconfig)
    return fresh


@pytest.fixture
def operator(registry, cloud, tmp_path, monkeypatch):
    instance = op.Operator(cloud, tmp_path / "state", drift=False)
    monkeypatch.setattr(op, "OPERATOR", instance)
    return instance



def ready_of(obj: dict | None) -> dict:
    conditions = ((obj or {}).get("status") or {}).get("conditions") or [{}]
    return conditions[0]


def add_objects(cluster: Cluster, url: str, name: str, **spec) -> None:
    cluster.request("POST", SOURCES, {
        "apiVersion": f"{op.SOURCE_GROUP}/{op.SOURCE_VERSION}", "kind": "GitRepository",
        "metadata": {"name": "repo", "namespace": "default", "resourceVersion": "1", "uid": "uid-repo"},
        "spec": {"url": url, "ref": {"branch": "main"}, "interval": "1s"}})
    cluster.request("POST", STACKS, {
        "apiVersion": f"{op.STACK_API_GROUP}/{op.VERSION}", "kind": "CloudFormationStack",
        "metadata": {"name": name, "namespace": "default", "generation": 1, "resourceVersion": "1",
                     "uid": f"uid-{name}"},
        "spec": {"sourceRef": {"kind": "GitRepository", "name": "repo"}, "interval": "1s",
                 "pollInterval": "1s", "retryInterval": "1s", **spec}})


def run_operator(registry) -> kopf.testing.KopfRunner:
    """`kopf run --standalone --all-namespaces` in a thread, with the operator module's handlers."""
    return kopf.testing.KopfRunner(["run", "--standalone", "--all-namespaces", "--verbose"],
                                   registry=registry, timeout=60)


def test_operator_on_kmock_creates_updates_and_deletes_through_the_finalizer(
    cluster, registry, operator, repo, cloud
):
    sha = repo.commit({"template.yaml": QUEUE})
    add_objects(cluster, repo.url, "app", stackName="sync-app", destroyStackOnDeletion=True)
    cfn = CloudFormation(cloud.client("cloudformation"))
    with run_operator(registry) as runner:
        obj = wait_for(lambda: (o := cluster.get("app")) and ready_of(o).get("status") == "True" and o,
                       "Ready=True written to .status")
        status = obj["status"]
        assert status["lastAppliedRevision"] == f"main@sha1:{sha}"
        assert change_set_name_of(status["lastAppliedChangeSet"]) == f"flux-1-main-sha1-{sha}"
        assert ready_of(obj)["reason"] == "Succeeded" and status["observedGeneration"] == 1
        assert op.FINALIZER in obj["metadata"]["finalizers"]  # kopf added ours before the first pass
        assert cfn.describe("sync-app").status == "CREATE_COMPLETE"

        # a spec change (the API server would bump the generation): the update handler applies it
        cluster.request("PATCH", f"{STACKS}/app", {"metadata": {"generation": 2}, "spec": {
            "stackParameters": [{"key": "Suffix", "value": "z"}]}}, "application/merge-patch+json")
        wait_for(lambda: (cluster.get("app")["status"] or {}).get("observedGeneration") == 2
                 and ready_of(cluster.get("app")).get("status") == "True", "generation 2 applied")
        applied = cluster.get("app")["status"]["lastAppliedChangeSet"]
        assert change_set_name_of(applied) == f"flux-2-main-sha1-{sha}"
        # the controller patches a new generation's Ready=Unknown before the pass goes on (reconcile: "Observe
        # CloudFormationStack generation"), so it reached the API server ahead of the pass's own status
        seen = [(p.get("observedGeneration"), (p.get("conditions") or [{}])[0].get("status"),
                 (p.get("conditions") or [{}])[0].get("message")) for p in cluster.status_patches("app")]
        progressing = seen.index((2, "Unknown", "Stack reconciliation in progress"))
        assert (2, "True", "Stack reconciliation succeeded") in seen[progressing + 1:], seen
        assert cfn.describe("sync-app").parameters["Suffix"] == "z"

        # deletion: kmock marks it (finalizer present), the delete handler destroys the stack, kopf
        # removes the finalizer and the object goes
        cluster.request("DELETE", f"{STACKS}/app")
        wait_for(lambda: cluster.get("app") is None, "the object released by the finalizer and gone")
        assert cfn.describe("sync-app") is None
        assert operator.store.get("default/app") is None
    assert runner.exit_code == 0, runner.output


def test_an_object_the_flux_controller_left_is_adopted_and_released(cluster, registry, operator, repo, cloud):
    """The Flux controller's own finalizer and status (api/v1alpha1: CloudFormationStackFinalizer), its stack
    and executed change set `flux-1-<revision>`: the operator takes the object over without a new change set
    (the controller would describe that change set and find it executed), drops formwright's former
    finalizer, and releases the object on deletion."""
    sha = repo.commit({"template.yaml": QUEUE})
    client = cloud.client("cloudformation")
    controller_tags = [{"Key": "cfn-flux-controller/version", "Value": "v0.2.9"},
                       {"Key": "cfn-flux-controller/name", "Value": "app"},
                       {"Key": "cfn-flux-controller/namespace", "Value": "default"}]
    arn = client.create_change_set(StackName="sync-app", ChangeSetName=f"flux-1-main-sha1-{sha}",
                                   ChangeSetType="CREATE", TemplateBody=QUEUE, Tags=controller_tags,
                                   IncludeNestedStacks=True)["Id"]
    client.execute_change_set(ChangeSetName=arn, StackName="sync-app")
    cfn = CloudFormation(client)
    wait_for(lambda: cfn.describe("sync-app").status == "CREATE_COMPLETE", "the controller's stack")
    revision = f"main@sha1:{sha}"
    add_objects(cluster, repo.url, "other", stackName="sync-other")  # the GitRepository (and a neighbour)
    cluster.request("POST", STACKS, {
        "apiVersion": f"{op.STACK_API_GROUP}/{op.VERSION}", "kind": "CloudFormationStack",
        "metadata": {"name": "app", "namespace": "default", "generation": 1, "resourceVersion": "1",
                     "uid": "uid-app", "finalizers": [op.OLD_FINALIZER, op.FINALIZER]},
        "spec": {"stackName": "sync-app", "sourceRef": {"kind": "GitRepository", "name": "repo"},
                 "interval": "1h", "pollInterval": "1s", "retryInterval": "1s",
                 "destroyStackOnDeletion": True},
        "status": {"observedGeneration": 1, "lastAttemptedRevision": revision,
                   "lastAppliedRevision": revision, "lastAttemptedChangeSet": arn,
                   "lastAppliedChangeSet": arn, "stackName": "sync-app",
                   "conditions": [{"type": "Ready", "status": "True", "reason": "Succeeded",
                                   "message": "Stack reconciliation succeeded",
                                   "lastTransitionTime": "2024-01-01T00:00:00Z", "observedGeneration": 1}]}})
    with run_operator(registry) as runner:
        wait_for(lambda: operator.store.get("default/app") is not None
                 and operator.store.get("default/app").status.last_reconcile > 0, "a pass over the object")
        wait_for(lambda: cluster.get("app")["metadata"]["finalizers"] == [op.FINALIZER],
                 "formwright's former finalizer dropped, the controller's kept")
        obj = cluster.get("app")
        assert ready_of(obj)["status"] == "True"
        assert obj["status"]["lastAppliedChangeSet"] == obj["status"]["lastAttemptedChangeSet"] == arn
        stack = client.describe_stacks(StackName="sync-app")["Stacks"][0]
        tags = {t["Key"]: t["Value"] for t in stack["Tags"]}
        assert tags["cfn-flux-controller/version"] == "v0.2.9"  # no change set of formwright's ran

        cluster.request("DELETE", f"{STACKS}/app")
        wait_for(lambda: cluster.get("app") is None, "the object released by the controller's finalizer")
        assert cfn.describe("sync-app") is None
    assert runner.exit_code == 0, runner.output


def test_operator_on_kmock_deletes_a_project_path_objects_stacks(cluster, registry, operator, repo, cloud):
    repo.commit({"infra/formwright.yaml": PROJECT, "infra/templates/queue.yaml": QUEUE})
    add_objects(cluster, repo.url, "proj", projectPath="infra", destroyStackOnDeletion=True)
    cfn = CloudFormation(cloud.client("cloudformation"))
    with run_operator(registry) as runner:
        obj = wait_for(lambda: (o := cluster.get("proj")) and ready_of(o).get("status") == "True" and o,
                       "Ready=True written to .status")
        assert "app created" in ready_of(obj)["message"] or "app" in ready_of(obj)["message"]
        assert cfn.describe("synced-queue") is not None and cfn.describe("synced-app") is not None
        cluster.request("DELETE", f"{STACKS}/proj")
        wait_for(lambda: cluster.get("proj") is None, "the object released by the finalizer and gone")
        assert cfn.describe("synced-queue") is None and cfn.describe("synced-app") is None
    assert runner.exit_code == 0, runner.output


def test_deploy_manifests_name_what_the_operator_serves():
    """The CRD in deploy/k8s is the resource the handlers above were registered for."""
    import yaml

    crd = next(
        d
        for d in yaml.safe_load_all(
            (Path(__file__).resolve().parents[2] / "deploy" / "k8s" / "base" / "crd.yaml").read_text()
        )
        if d and d["kind"] == "CustomResourceDefinition"
    )
    assert crd["spec"]["names"]["plural"] == op.PLURAL and crd["spec"]["group"] == op.STACK_API_GROUP
