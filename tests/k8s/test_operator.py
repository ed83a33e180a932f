"""The operator installed with `kubectl apply -k deploy/k8s/overlays/...` on a real kube-apiserver (RBAC on),
acting only through the install's own service account, against the local cloud.

The Flux source-controller is the one part faked: the test publishes an artifact (a tar.gz served on
127.0.0.1) and writes the GitRepository's `status.artifact` as the controller would; the operator then sees
that through a real watch. The operator's replicas are child processes started from the rendered Deployment
(tests/k8s/install.py says what differs from a pod).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from . import install
from .cluster import ApiServer
from .sources import Storage, set_artifact

CLUSTER_WIDE = install.DEPLOY / "overlays" / "cluster-wide"
NAMESPACED = install.DEPLOY / "overlays" / "namespaced"

pytestmark = [pytest.mark.k8s, pytest.mark.cloud]

FIXTURES = Path(__file__).parent / "fixtures"
STACKS = "cloudformationstacks.cloudformation.contrib.fluxcd.io"
TEMPLATE = """\
AWSTemplateFormatVersion: "2010-09-09"
Resources:
  Queue:
    Type: AWS::SQS::Queue
    Properties:
      VisibilityTimeout: {timeout}
Outputs:
  Url:
    Value: !Ref Queue
"""


def apply_yaml(server: ApiServer, docs: list[dict], token: str | None = None) -> None:
    """`kubectl apply -f -` of these objects."""
    text = yaml.safe_dump_all(docs)
    kwargs = {"token": token} if token else {}
    server.kubectl("apply", "-f", "-", stdin=text, **kwargs)


def stack_object(namespace: str, name: str, stack_name: str, **spec: object) -> dict:
    """A CloudFormationStack reading template.yaml of the GitRepository `infra`."""
    return {"apiVersion": "cloudformation.contrib.fluxcd.io/v1alpha1", "kind": "CloudFormationStack",
            "metadata": {"name": name, "namespace": namespace},
            "spec": {"stackName": stack_name, "templatePath": "template.yaml",
                     "sourceRef": {"kind": "GitRepository", "name": "infra"}, "interval": "1h",
                     "pollInterval": "1s", "retryInterval": "2s", **spec}}


def get(server: ApiServer, namespace: str, name: str) -> dict | None:
    return server.request("GET", f"/apis/cloudformation.contrib.fluxcd.io/v1alpha1/namespaces/{namespace}"
                          f"/cloudformationstacks/{name}")


def ready(obj: dict | None) -> dict:
    conditions = ((obj or {}).get("status") or {}).get("conditions") or []
    return next((c for c in conditions if c.get("type") == "Ready"), {})


@pytest.fixture(scope="module")
def installed(apiserver):
    """deploy/k8s/overlays/cluster-wide applied with `kubectl apply -k`, as a user installs it, and a
    GitRepository CRD standing in for Flux's."""
    apiserver.kubectl("apply", "-f", str(FIXTURES / "gitrepository-crd.yaml"))
    apiserver.kubectl("apply", "-k", str(CLUSTER_WIDE))
    apiserver.kubectl("wait", "--for=condition=Established", "--timeout=60s", f"crd/{STACKS}",
                      "crd/gitrepositories.source.toolkit.fluxcd.io", "crd/clusterkopfpeerings.kopf.dev")
    return apiserver


def test_the_install_is_what_kubectl_apply_k_makes_and_grants_exactly_the_operators_verbs(installed):
    deployment = json.loads(installed.kubectl("-n", "formwright-system", "get", "deployment",
                                              "formwright-sync", "-o", "json").stdout)
    assert deployment["spec"]["replicas"] == 2
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    assert container["image"] == "ghcr.io/formwright/formwright:0.1.0"
    assert container["command"][:4] == ["kopf", "run", "-m", "formwright.sync.k8s.operator"]
    # the service account may do what the operator does, and nothing beyond it
    who = "--as=system:serviceaccount:formwright-system:formwright-sync"
    for verb, resource in (("list", STACKS), ("watch", STACKS), ("patch", STACKS),
                           ("create", "events"), ("patch", "clusterkopfpeerings.kopf.dev"),
                           ("create", "clusterkopfpeerings.kopf.dev")):
        answer = installed.kubectl("auth", "can-i", verb, resource, who, "-A", check=False).stdout.strip()
        assert answer == "yes", (verb, resource)
    for verb, resource in (("create", STACKS), ("delete", STACKS), ("get", "secrets"),
                           ("patch", "gitrepositories.source.toolkit.fluxcd.io"), ("delete", "events")):
        answer = installed.kubectl("auth", "can-i", verb, resource, who, "-A", check=False).stdout.strip()
        assert answer == "no", (verb, resource)


def test_a_spec_the_crd_schema_refuses_is_refused_by_the_api_server(installed):
    bad = stack_object("default", "bad", "fw-k8s-bad")
    del bad["spec"]["interval"]  # required by the CRD's schema
    # the API server's own structural-schema validation (kubectl's client-side check, which depends on when
    # the server publishes the CRD's OpenAPI, turned off)
    proc = installed.kubectl("apply", "--validate=false", "-f", "-", stdin=json.dumps(bad), check=False)
    assert proc.returncode != 0
    assert 'CloudFormationStack "bad" is invalid: spec.interval: Required value' in proc.stderr, proc.stderr
    assert get(installed, "default", "bad") is None


def sqs_timeout(cloud, stack_name: str) -> str | None:
    """The VisibilityTimeout of the stack's queue in the local cloud (None when the stack is absent)."""
    import boto3

    cfn = boto3.client("cloudformation", endpoint_url=cloud.endpoint, region_name=cloud.region,
                       aws_access_key_id="testing", aws_secret_access_key="testing")
    try:
        outputs = cfn.describe_stacks(StackName=stack_name)["Stacks"][0].get("Outputs") or []
    except cfn.exceptions.ClientError:
        return None
    url = next((o["OutputValue"] for o in outputs if o["OutputKey"] == "Url"), None)
    if url is None:
        return None
    sqs = boto3.client("sqs", endpoint_url=cloud.endpoint, region_name=cloud.region,
                       aws_access_key_id="testing", aws_secret_access_key="testing")
    return sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["VisibilityTimeout"])["Attributes"][
        "VisibilityTimeout"]


def stack_status(cloud, stack_name: str) -> str | None:
    import boto3

    cfn = boto3.client("cloudformation", endpoint_url=cloud.endpoint, region_name=cloud.region,
                       aws_access_key_id="testing", aws_secret_access_key="testing")
    try:
        return cfn.describe_stacks(StackName=stack_name)["Stacks"][0]["StackStatus"]
    except cfn.exceptions.ClientError:
        return None


def patch_spec(server: ApiServer, namespace: str, name: str, spec: dict) -> None:
    server.request("PATCH", f"/apis/cloudformation.contrib.fluxcd.io/v1alpha1/namespaces/{namespace}"
                   f"/cloudformationstacks/{name}", {"spec": spec},
                   content_type="application/merge-patch+json")


def release(server: ApiServer, storage: Storage, namespace: str, timeout: int, commit: str) -> None:
    """Publish a revision of the source `infra` whose queue has this VisibilityTimeout."""
    files = {"template.yaml": TEMPLATE.format(timeout=timeout)}
    set_artifact(server, namespace, "infra", storage.publish(files, f"main@sha1:{commit * 40}"))


def test_create_update_suspend_resume_delete_through_the_installs_own_rbac(installed, storage, cloud,
                                                                           tmp_path):
    from tests.sync.harness import wait_for

    installed.kubectl("create", "namespace", "apps", check=False)
    apply_yaml(installed, [{"apiVersion": "source.toolkit.fluxcd.io/v1", "kind": "GitRepository",
                            "metadata": {"name": "infra", "namespace": "apps"},
                            "spec": {"url": "https://example.invalid/infra.git", "interval": "1h",
                                     "ref": {"branch": "main"}}}])
    release(installed, storage, "apps", 30, "1")
    replica = install.replica(installed, CLUSTER_WIDE, "formwright-sync-system", tmp_path / "replica")
    try:
        apply_yaml(installed, [stack_object("apps", "queue", "fw-k8s-queue", destroyStackOnDeletion=True)])
        wait_for(lambda: ready(get(installed, "apps", "queue")).get("status") == "True", "Ready=True", 120)
        assert sqs_timeout(cloud, "fw-k8s-queue") == "30"
        status = get(installed, "apps", "queue")["status"]
        assert status["lastAppliedRevision"] == "main@sha1:" + "1" * 40
        assert status["observedGeneration"] == get(installed, "apps", "queue")["metadata"]["generation"]

        # a new revision published by the source: the operator hears it through its watch (no call by hand)
        release(installed, storage, "apps", 45, "2")
        wait_for(lambda: sqs_timeout(cloud, "fw-k8s-queue") == "45", "the new revision applied", 120)
        wait_for(lambda: (get(installed, "apps", "queue")["status"].get("lastAppliedRevision")
                          == "main@sha1:" + "2" * 40), "lastAppliedRevision", 60)

        # suspended: a new revision is not applied ...
        handled = replica.text().count("Updating is processed")
        patch_spec(installed, "apps", "queue", {"suspend": True})
        wait_for(lambda: replica.text().count("Updating is processed") > handled, "the suspension handled",
                 60)
        release(installed, storage, "apps", 60, "3")
        import time

        time.sleep(5)  # an absence: the operator had time to act on the new revision and must not have
        assert sqs_timeout(cloud, "fw-k8s-queue") == "45"
        # ... until resumed
        patch_spec(installed, "apps", "queue", {"suspend": False})
        wait_for(lambda: sqs_timeout(cloud, "fw-k8s-queue") == "60", "resumed and applied", 120)

        events = json.loads(installed.kubectl("-n", "apps", "get", "events", "-o", "json").stdout)["items"]
        mine = [e for e in events if e["involvedObject"].get("name") == "queue"]
        assert mine and {e["type"] for e in mine} <= {"Normal", "Warning"}
        assert any(e.get("metadata", {}).get("annotations", {}).get(
            "cloudformation.contrib.fluxcd.io/revision") for e in mine)

        # delete: the finalizer holds the object until the stack is gone from the cloud
        installed.kubectl("-n", "apps", "delete", "cloudformationstack", "queue", "--wait=true",
                          "--timeout=120s")
        assert stack_status(cloud, "fw-k8s-queue") in (None, "DELETE_COMPLETE")
        assert get(installed, "apps", "queue") is None
    finally:
        replica.stop()
    assert "Traceback" not in replica.text(), replica.text()[-3000:]


def change_sets_executed(cloud, stack_name: str) -> int:
    """How many change sets were executed on a stack (its events' UPDATE/CREATE_IN_PROGRESS of the stack)."""
    import boto3

    cfn = boto3.client("cloudformation", endpoint_url=cloud.endpoint, region_name=cloud.region,
                       aws_access_key_id="testing", aws_secret_access_key="testing")
    events = cfn.describe_stack_events(StackName=stack_name)["StackEvents"]
    return sum(1 for e in events if e["LogicalResourceId"] == stack_name
               and e["ResourceStatus"] in ("CREATE_IN_PROGRESS", "UPDATE_IN_PROGRESS"))


def test_two_replicas_only_one_acts_and_the_other_takes_over_when_it_is_killed(installed, storage, cloud,
                                                                               tmp_path):
    from tests.sync.harness import wait_for

    installed.kubectl("create", "namespace", "peers", check=False)
    apply_yaml(installed, [{"apiVersion": "source.toolkit.fluxcd.io/v1", "kind": "GitRepository",
                            "metadata": {"name": "infra", "namespace": "peers"},
                            "spec": {"url": "https://example.invalid/infra.git", "interval": "1h"}}])
    release(installed, storage, "peers", 31, "a")
    overlay = CLUSTER_WIDE
    lifetime = {"FORMWRIGHT_SYNC_PEERING_LIFETIME": "6"}  # kopf's default is 60 s; short for the test
    first = install.replica(installed, overlay, "formwright-sync-system", tmp_path / "first", env=lifetime,
                            name="first")
    # kopf starts every replica paused and resumes it once its peering record shows no stronger peer
    wait_for(lambda: "Resuming operations" in first.text(), "the first replica acting", 60)
    second = install.replica(installed, overlay, "formwright-sync-system", tmp_path / "second", env=lifetime,
                             name="second")
    try:
        wait_for(lambda: "Initial authentication has finished" in second.text(), "the second replica up", 60)
        apply_yaml(installed, [stack_object("peers", f"q{i}", f"fw-k8s-peers-{i}") for i in range(3)])
        for i in range(3):
            wait_for(lambda i=i: ready(get(installed, "peers", f"q{i}")).get("status") == "True",
                     f"q{i} Ready", 120)
        # the younger replica stayed paused: it never resumed and handled no object
        assert "Resuming operations" not in second.text() and "[peers/q" not in second.text()

        first.stop(kill=True)  # a crashed node: no goodbye in the peering record
        wait_for(lambda: "Resuming operations" in second.text(), "the second replica took over", 60)
        apply_yaml(installed, [stack_object("peers", "q3", "fw-k8s-peers-3")])
        wait_for(lambda: ready(get(installed, "peers", "q3")).get("status") == "True", "q3 Ready", 120)
        for i in range(4):  # no stack was deployed twice by the two replicas
            assert change_sets_executed(cloud, f"fw-k8s-peers-{i}") == 1
    finally:
        first.stop()
        second.stop()


def test_missing_verbs_stop_the_operator_at_start_naming_them(installed, tmp_path):
    from tests.sync.harness import wait_for

    # an install whose role lacks the status patch (as a hand-trimmed ClusterRole would)
    installed.kubectl("create", "namespace", "trimmed", check=False)
    role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
            "metadata": {"name": "trimmed", "namespace": "trimmed"},
            "rules": [{"apiGroups": ["cloudformation.contrib.fluxcd.io"],
                       "resources": ["cloudformationstacks"], "verbs": ["list", "watch", "patch"]}]}
    binding = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
               "metadata": {"name": "trimmed", "namespace": "trimmed"},
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "trimmed"},
               "subjects": [{"kind": "ServiceAccount", "name": "formwright-sync", "namespace": "trimmed"}]}
    apply_yaml(installed, [role, binding])
    replica = install.replica(installed, NAMESPACED, "formwright-sync-trimmed",
                              tmp_path / "trimmed", env={"KOPF_SCOPE": "--namespace=trimmed"})
    try:
        wait_for(lambda: replica.process.poll() is not None, "the operator to stop", 90)
    finally:
        replica.stop()
    assert replica.process.returncode != 0
    text = replica.text()
    assert "patch cloudformationstacks/status (cloudformation.contrib.fluxcd.io) in namespace trimmed" in text
    assert "create events in namespace trimmed" in text


def user_overlay(folder: Path, base: Path, namespace: str | None, literals: list[str]) -> Path:
    """A user's own kustomization on top of one of ours (how a second shard is installed)."""
    import os

    folder.mkdir(parents=True, exist_ok=True)
    lines = ["apiVersion: kustomize.config.k8s.io/v1beta1", "kind: Kustomization"]
    if namespace:
        lines.append(f"namespace: {namespace}")
    lines += ["bases:", f"  - {os.path.relpath(base, folder)}", "configMapGenerator:",
              "  - name: formwright-sync-flags", "    behavior: merge", "    literals:"]
    lines += [f"      - {literal}" for literal in literals]
    (folder / "kustomization.yaml").write_text("\n".join(lines) + "\n")
    return folder


def sources_in(server: ApiServer, storage: Storage, namespace: str, timeout: int) -> None:
    apply_yaml(server, [{"apiVersion": "source.toolkit.fluxcd.io/v1", "kind": "GitRepository",
                         "metadata": {"name": "infra", "namespace": namespace},
                         "spec": {"url": "https://example.invalid/infra.git", "interval": "1h"}}])
    release(server, storage, namespace, timeout, "c")


def test_sharding_by_namespace_two_namespaced_installs_each_reconcile_only_their_own(installed, storage,
                                                                                     cloud, tmp_path):
    from tests.sync.harness import wait_for

    replicas = []
    try:
        for shard in ("shard-a", "shard-b"):
            overlay = user_overlay(tmp_path / shard, NAMESPACED, shard,
                                   [f"KOPF_SCOPE=--namespace={shard}"])
            # kustomize 2.0.3 (kubectl 1.20) does not rename the overlay's Namespace object: made first, as
            # the README's namespaced-install note says
            installed.kubectl("create", "namespace", shard, check=False)
            installed.kubectl("apply", "-k", str(overlay))
            sources_in(installed, storage, shard, 32)
            replicas.append(install.replica(installed, overlay, f"formwright-sync-{shard}",
                                            tmp_path / f"r-{shard}", name=shard))
        apply_yaml(installed, [stack_object(shard, f"q-{shard}", f"fw-k8s-{shard}") for shard in ("shard-a",
                                                                                                   "shard-b")])
        for shard in ("shard-a", "shard-b"):
            wait_for(lambda shard=shard: ready(get(installed, shard, f"q-{shard}")).get("status") == "True",
                     f"{shard} Ready", 120)
        a, b = (r.text() for r in replicas)  # kopf prefixes each object's log lines with [namespace/name]
        assert "[shard-a/q-shard-a]" in a and "[shard-a/" not in b
        assert "[shard-b/q-shard-b]" in b and "[shard-b/" not in a
    finally:
        for r in replicas:
            r.stop()


def test_sharding_by_label_selector_each_object_reconciled_by_exactly_one_operator(installed, storage, cloud,
                                                                                    tmp_path):
    from tests.sync.harness import wait_for

    installed.kubectl("create", "namespace", "labels", check=False)
    sources_in(installed, storage, "labels", 33)
    overlay = CLUSTER_WIDE
    replicas = [install.replica(installed, overlay, "formwright-sync-system", tmp_path / f"r-{shard}",
                                name=shard, env={"FORMWRIGHT_SYNC_LABEL_SELECTOR": f"shard={shard}",
                                     "FORMWRIGHT_SYNC_PEERING": f"formwright-sync-{shard}"})
                for shard in ("a", "b")]
    try:
        objects = []
        for i, shard in enumerate("abab"):
            obj = stack_object("labels", f"l{i}", f"fw-k8s-labels-{i}")
            obj["metadata"]["labels"] = {"shard": shard}
            objects.append(obj)
        apply_yaml(installed, objects)
        for i in range(4):
            wait_for(lambda i=i: ready(get(installed, "labels", f"l{i}")).get("status") == "True",
                     f"l{i} Ready", 120)
        a, b = (r.text() for r in replicas)
        for i, shard in enumerate("abab"):
            mine, other = (a, b) if shard == "a" else (b, a)
            assert f"[labels/l{i}]" in mine and f"[labels/l{i}]" not in other
            assert change_sets_executed(cloud, f"fw-k8s-labels-{i}") == 1
    finally:
        for r in replicas:
            r.stop()
