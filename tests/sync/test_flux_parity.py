"""The reconcile loop branch by branch against the Flux CloudFormation controller
(awslabs/aws-cloudformation-controller-for-flux, internal/controllers/cloudformationstack_controller.go at
commit 6c936890f96e5e5ddbe5a1bf0576cc2e0d0c78b6): stack statuses, Ready reasons and messages, events, stack
tags, change set names, the template bucket, deletion, sources, and the CRD's fields.

Every stack status is replayed here with botocore's Stubber (a fake CloudFormation), so each branch is
pinned on its own; the ones the local cloud cannot produce (UPDATE_ROLLBACK_FAILED, ROLLBACK_FAILED,
UPDATE_FAILED, IMPORT_ROLLBACK_*, an unknown one) only here. ROLLBACK_COMPLETE, UPDATE_ROLLBACK_COMPLETE and
DELETE_FAILED also run on the local cloud (test_flux_parity_cloud.py); failed calls and change set statuses
are in test_flux_parity_calls.py. Everything else runs against the local cloud with real git repositories.
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from pathlib import Path

import boto3
import pytest
import yaml
from botocore.stub import ANY, Stubber

from formwright.engine.cfn import CloudFormation
from formwright.sync.naming import CONTROLLER_VERSION
from formwright.sync.objects import parse_document
from formwright.sync.reconcile import Reconciler
from formwright.sync.source import Artifact, Sources
from formwright.sync.status_store import FALSE, TRUE, UNKNOWN, Status, change_set_name_of

from .conftest import QUEUE, Repo, objects_yaml
from .harness import Harness

STACK_ID = "arn:aws:cloudformation:us-east-1:123456789012:stack/app/1"
CS_ARN = "arn:aws:cloudformation:us-east-1:123456789012:changeSet/flux-1-main-sha1-abc/1"
INTERVALS = {"interval": "11s", "pollInterval": "3s", "retryInterval": "7s"}


class FakeTarget:
    region = "us-east-1"
    endpoint = None

    def client(self, service):
        raise AssertionError(f"unexpected client {service}")


def stubbed(tmp_path: Path, **spec):
    """A reconciler on a stubbed CloudFormation client, one object `app` and its checkout."""
    docs = list(yaml.safe_load_all(objects_yaml("file:///unused", [{"name": "app", "stackName": "app",
                                                                     **INTERVALS, **spec}])))
    obj = parse_document(docs[1])
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    (checkout / "template.yaml").write_text(QUEUE)
    client = boto3.client("cloudformation", region_name="us-east-1", aws_access_key_id="x",
                          aws_secret_access_key="x")
    reconciler = Reconciler(FakeTarget(), Sources(tmp_path / "src"), state_dir=tmp_path,
                            cfn=CloudFormation(client), drift=False)
    return obj, Artifact("default/repo", "main@sha1:abc", checkout), Stubber(client), reconciler


def described(status: str, reason: str = "") -> dict:
    data = {"StackName": "app", "StackId": STACK_ID, "StackStatus": status,
            "CreationTime": datetime(2024, 1, 1, tzinfo=UTC)}
    if reason:
        data["StackStatusReason"] = reason
    return {"Stacks": [data]}


# ---- 1. every stack status -----------------------------------------------------------------------
@pytest.mark.parametrize("status", ["CREATE_FAILED", "DELETE_FAILED", "ROLLBACK_COMPLETE", "ROLLBACK_FAILED"])
def test_unrecoverable_statuses_delete_the_stack(tmp_path, status):
    """Fake CloudFormation: the controller's RequiresCleanup branch."""
    obj, artifact, stubber, reconciler = stubbed(tmp_path)
    stubber.add_response("describe_stacks", described(status, "boom"), {"StackName": "app"})
    stubber.add_response("delete_stack", {}, {"StackName": STACK_ID})
    with stubber:
        out = reconciler.reconcile(obj, 1, Status(), artifact=artifact)
    stubber.assert_no_pending_responses()
    msg = f"Stack 'app' is in an unrecoverable state and must be recreated: status '{status}', reason 'boom'"
    assert (out.status.ready, out.status.reason) == (FALSE, "UnrecoverableStackFailure")
    assert out.status.message == msg
    assert out.requeue == 7.0  # retryInterval
    assert [(e.type, e.message, e.revision) for e in out.events] == [("Warning", msg, "main@sha1:abc")]


def test_update_rollback_failed_continues_the_rollback(tmp_path):
    """Fake CloudFormation: the controller's RequiresRollbackContinuation branch."""
    obj, artifact, stubber, reconciler = stubbed(tmp_path)
    stubber.add_response("describe_stacks", described("UPDATE_ROLLBACK_FAILED"), {"StackName": "app"})
    stubber.add_response("continue_update_rollback", {}, {"StackName": STACK_ID})
    with stubber:
        out = reconciler.reconcile(obj, 1, Status(), artifact=artifact)
    stubber.assert_no_pending_responses()
    msg = ("Stack 'app' has a previously failed rollback (status 'UPDATE_ROLLBACK_FAILED'), "
           "continuing rollback")
    assert (out.status.ready, out.status.reason, out.status.message) == (FALSE, "StackRollbackFailed", msg)
    assert out.requeue == 7.0 and [e.type for e in out.events] == ["Warning"]


@pytest.mark.parametrize("status", ["UPDATE_FAILED", "IMPORT_ROLLBACK_FAILED", "UPDATE_ROLLBACK_COMPLETE"])
def test_recoverable_failures_warn_and_make_a_new_update_change_set(tmp_path, status):
    """Fake CloudFormation: the controller's IsRecoverableFailure branch (not unrecoverable any more)."""
    obj, artifact, stubber, reconciler = stubbed(tmp_path)
    stubber.add_response("describe_stacks", described(status), {"StackName": "app"})
    stubber.add_response("create_change_set", {"Id": CS_ARN, "StackId": STACK_ID}, {
        "StackName": "app", "ChangeSetName": "flux-1-main-sha1-abc", "ChangeSetType": "UPDATE",
        "Parameters": [], "Tags": ANY, "Capabilities": ANY, "IncludeNestedStacks": True,
        "TemplateBody": QUEUE})
    stubber.add_response("describe_change_set", {"ChangeSetId": CS_ARN, "Status": "CREATE_PENDING",
                                                 "ExecutionStatus": "UNAVAILABLE"},
                         {"ChangeSetName": CS_ARN, "StackName": "app"})
    with stubber:
        out = reconciler.reconcile(obj, 1, Status(), artifact=artifact)
    stubber.assert_no_pending_responses()
    assert [(e.type, e.message) for e in out.events] == [
        ("Warning", f"Stack 'app' is in a failed state (status '{status}'), creating a new change set"),
        ("Normal", f"Update of stack 'app' in progress (change set {CS_ARN})")]
    assert out.status.ready == UNKNOWN and out.requeue == 3.0  # pollInterval
    assert out.status.message == ("Change set is in progress for stack 'app': status 'CREATE_PENDING', "
                                  "execution status 'UNAVAILABLE', reason ''")
    assert out.status.last_attempted_change_set == CS_ARN


def test_unknown_status_is_unexpected_and_api_errors_retry_at_retry_interval(tmp_path):
    """Fake CloudFormation: a status none of the controller's branches knows; then an AWS error."""
    obj, artifact, stubber, reconciler = stubbed(tmp_path)
    stubber.add_response("describe_stacks", described("SOMETHING_NEW"), {"StackName": "app"})
    stubber.add_client_error("describe_stacks", "AccessDenied", "not allowed", http_status_code=403)
    with stubber:
        out = reconciler.reconcile(obj, 1, Status(), artifact=artifact)
        assert (out.status.reason, out.status.message, out.requeue) == (
            "UnexpectedStatus", "Unexpected stack status for stack 'app': status 'SOMETHING_NEW'", 7.0)
        out = reconciler.reconcile(obj, 1, out.status, artifact=artifact)
    assert (out.status.ready, out.status.reason, out.requeue) == (FALSE, "CloudFormationApiCallFailed", 7.0)
    assert out.events[0].message.startswith("Failed to reconcile stack: ")


def test_in_progress_waits_at_poll_interval_and_delete_path_requeues_at_poll_interval(tmp_path):
    """Fake CloudFormation: stack actions in progress, on the reconcile and on the delete path."""
    obj, artifact, stubber, reconciler = stubbed(tmp_path)
    stubber.add_response("describe_stacks", described("UPDATE_IN_PROGRESS"), {"StackName": "app"})
    stubber.add_response("describe_stacks", described("UPDATE_IN_PROGRESS"), {"StackName": "app"})
    stubber.add_response("describe_stacks", described("UPDATE_COMPLETE"), {"StackName": "app"})
    stubber.add_response("delete_stack", {}, {"StackName": STACK_ID})
    stubber.add_response("describe_stacks", described("DELETE_IN_PROGRESS"), {"StackName": STACK_ID})
    with stubber:
        out = reconciler.reconcile(obj, 1, Status(), artifact=artifact)
        assert out.requeue == 3.0 and out.status.message == (
            "Stack action for stack 'app' is in progress (status: 'UPDATE_IN_PROGRESS'), waiting for stack "
            "action to complete")
        gone = reconciler.delete("default/app", "app", True, out.status, poll_interval=3.0,
                                 retry_interval=7.0)
        assert gone.requeue == 3.0 and "marked for deletion 'app'" in gone.status.message
        gone = reconciler.delete("default/app", "app", True, out.status, poll_interval=3.0,
                                 retry_interval=7.0)
    stubber.assert_no_pending_responses()
    assert gone.requeue == 3.0 and gone.status.message == "Started deletion of stack 'app'"
    assert [(e.type, e.message) for e in gone.events] == [("Normal", "Started deletion of stack 'app'")]


def test_a_suspended_object_is_never_deleted(tmp_path):
    """Fake CloudFormation (no call expected): reconcileDelete skips a suspended object's stack."""
    _obj, _artifact, stubber, reconciler = stubbed(tmp_path)
    with stubber:
        out = reconciler.delete("default/app", "app", True, Status(), suspended=True)
    assert out.requeue is None and reconciler.counter.total == 0


# ---- 2-4. conditions, events, tags, change sets, template bucket: the local cloud ------------------
def harness(tmp_path: Path, repo: Repo, cloud, stacks: list[dict], **options) -> Harness:
    folder = tmp_path / "objects"
    folder.mkdir(exist_ok=True)
    (folder / "stacks.yaml").write_text(objects_yaml(repo.url, stacks))
    h = Harness(folder, cloud, tmp_path / "state")
    for name, value in options.items():
        setattr(h.reconciler, name, value)
    return h


@pytest.mark.cloud
def test_create_reports_the_controllers_conditions_events_tags_and_change_set(tmp_path, repo, cloud):
    sha = repo.commit({"template.yaml": QUEUE})
    h = harness(tmp_path, repo, cloud, [{"name": "app", "stackTags": [{"key": "team", "value": "spec"},
                                                                      {"key": "env", "value": "spec"}]}],
                stack_tags={"env": "flag", "owner": "flag"})
    first = h.once("app")
    revision = f"main@sha1:{sha}"
    assert [(e.type, e.revision) for e in first.events] == [("Normal", revision)] * 2
    arn = first.status.last_attempted_change_set
    assert arn.startswith("arn:aws:cloudformation:") and change_set_name_of(arn) == f"flux-1-main-sha1-{sha}"
    assert first.events[0].message == f"Creation of stack 'sync-app' in progress (change set {arn})"
    assert first.events[1].message == f"Change set execution started for stack 'sync-app' (change set {arn})"
    st = h.settle("app")
    assert (st.ready, st.reason, st.message) == (TRUE, "Succeeded", "Stack reconciliation succeeded")
    assert st.last_applied_change_set == arn and st.stack_name == "sync-app"
    assert st.to_k8s()["stackName"] == "sync-app"
    data = h.cfn.client.describe_stacks(StackName="sync-app")["Stacks"][0]
    # the controller's three, then --stack-tags, then spec.stackTags (a later key wins)
    assert {t["Key"]: t["Value"] for t in data["Tags"]} == {
        "cfn-flux-controller/version": CONTROLLER_VERSION, "cfn-flux-controller/name": "app",
        "cfn-flux-controller/namespace": "default", "owner": "flag", "env": "spec", "team": "spec"}


@pytest.mark.cloud
def test_a_new_generation_is_progressing_before_anything_else(tmp_path, repo, cloud):
    repo.commit({"template.yaml": QUEUE})
    h = harness(tmp_path, repo, cloud, [{"name": "app"}])
    h.settle("app")
    seen = []
    h.reconciler.save = lambda key, st: seen.append((st.ready, st.message, st.observed_generation))
    changed = objects_yaml(repo.url, [{"name": "app", "stackParameters": {"Suffix": "b"}}])
    h.folder.joinpath("stacks.yaml").write_text(changed)
    assert h.settle("app").is_ready
    assert seen[0] == (UNKNOWN, "Stack reconciliation in progress", 2)


@pytest.mark.cloud
def test_template_bucket_takes_every_template(tmp_path, repo, cloud):
    s3 = cloud.client("s3")
    s3.create_bucket(Bucket="flux-templates")
    repo.commit({"template.yaml": QUEUE})
    h = harness(tmp_path, repo, cloud, [{"name": "app"}], template_bucket="flux-templates")
    assert h.settle("app").is_ready
    keys = [o["Key"] for o in s3.list_objects_v2(Bucket="flux-templates").get("Contents", [])]
    assert len(keys) == 1 and keys[0].startswith("flux-sync-app-") and keys[0].endswith(".template")


# ---- 5. sources ------------------------------------------------------------------------------------
@pytest.mark.cloud
def test_a_missing_source_fails_only_its_object(tmp_path, repo, cloud):
    repo.commit({"template.yaml": QUEUE})
    h = harness(tmp_path, repo, cloud, [
        {"name": "good"},
        {"name": "orphan", "sourceRef": {"kind": "GitRepository", "name": "nope"}},
        {"name": "bucket", "sourceRef": {"kind": "Bucket", "name": "repo"}},
        {"name": "foreign", "sourceRef": {"kind": "GitRepository", "name": "repo", "namespace": "other"}},
    ], no_cross_namespace_refs=True)
    st = h.settle("orphan")
    assert (st.reason, st.message) == ("ArtifactFailed", "Source 'GitRepository/nope' not found")
    st = h.settle("bucket")
    assert st.reason == "ArtifactFailed" and "fetches GitRepository sources only" in st.message
    st = h.settle("foreign")
    assert st.reason == "ArtifactFailed" and "cross-namespace references have been blocked" in st.message
    assert h.settle("good").is_ready


# ---- 7. CRD parity -----------------------------------------------------------------------------------
# The controller's CRD fields and constraints (config/crd/bases/cloudformation.contrib.fluxcd.io_
# cloudformationstacks.yaml at commit 6c936890f96e5e5ddbe5a1bf0576cc2e0d0c78b6), derived once from it.
RE_REASON = "^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$"
RE_TYPE = ("^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
           "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$")
STR, BOOL, ARR, OBJ = {"type": "string"}, {"type": "boolean"}, {"type": "array"}, {"type": "object"}
CONTROLLER_FIELDS = {
    "apiVersion": STR, "kind": STR, "metadata": OBJ,
    "spec": {**OBJ, "required": ["interval", "sourceRef"]},
    "spec.dependsOn": ARR, "spec.dependsOn[]": {**OBJ, "required": ["name"]},
    "spec.dependsOn[].name": STR, "spec.dependsOn[].namespace": STR,
    "spec.destroyStackOnDeletion": {**BOOL, "default": False}, "spec.suspend": {**BOOL, "default": False},
    "spec.interval": STR, "spec.pollInterval": {**STR, "default": "5s"}, "spec.retryInterval": STR,
    "spec.sourceRef": {**OBJ, "required": ["kind", "name"]}, "spec.sourceRef.apiVersion": STR,
    "spec.sourceRef.kind": {**STR, "enum": ["GitRepository", "Bucket", "OCIRepository"]},
    "spec.sourceRef.name": {**STR, "minLength": 1, "maxLength": 253},
    "spec.sourceRef.namespace": {**STR, "minLength": 1, "maxLength": 63},
    "spec.stackName": {**STR, "minLength": 1, "maxLength": 128},
    "spec.stackParameters": ARR, "spec.stackParameters[]": {**OBJ, "required": ["key", "value"]},
    "spec.stackParameters[].key": STR, "spec.stackParameters[].value": STR,
    "spec.stackTags": ARR, "spec.stackTags[]": {**OBJ, "required": ["key", "value"]},
    "spec.stackTags[].key": STR, "spec.stackTags[].value": STR,
    "spec.templatePath": {**STR, "default": "template.yaml"},
    "status": OBJ, "status.conditions": ARR,
    "status.conditions[]": {**OBJ, "required": ["lastTransitionTime", "message", "reason", "status", "type"]},
    "status.conditions[].lastTransitionTime": {**STR, "format": "date-time"},
    "status.conditions[].message": {**STR, "maxLength": 32768},
    "status.conditions[].observedGeneration": {"type": "integer", "format": "int64", "minimum": 0},
    "status.conditions[].reason": {**STR, "minLength": 1, "maxLength": 1024, "pattern": RE_REASON},
    "status.conditions[].status": {**STR, "enum": ["True", "False", "Unknown"]},
    "status.conditions[].type": {**STR, "maxLength": 316, "pattern": RE_TYPE},
    "status.lastAppliedChangeSet": STR, "status.lastAppliedRevision": STR,
    "status.lastAttemptedChangeSet": STR, "status.lastAttemptedRevision": STR,
    "status.lastHandledReconcileAt": STR,
    "status.observedGeneration": {"type": "integer", "format": "int64"}, "status.stackName": STR,
}
EXTENSIONS = {"spec.projectPath", "spec.driftCorrection", "spec.allowCommands", "status.formwright"}
CONSTRAINTS = ("type", "enum", "default", "minLength", "maxLength", "format", "minimum", "pattern",
               "required")


def schema_fields(schema: dict, path: str = "") -> dict[str, dict]:
    """Every field path of an OpenAPI schema with its constraints (`[]` for array items)."""
    found = {}
    for name, sub in (schema.get("properties") or {}).items():
        here = f"{path}.{name}" if path else name
        found[here] = {k: sub[k] for k in CONSTRAINTS if k in sub}
        if sub.get("type") == "array" and "items" in sub:
            found.update(schema_fields(sub["items"], here + "[]"))
            if sub["items"].get("required"):
                found[here + "[]"] = {k: sub["items"][k] for k in CONSTRAINTS if k in sub["items"]}
        else:
            found.update(schema_fields(sub, here))
    return found


# the same CRD's names, scope, version and printer columns (kubectl get cfnstack)
CONTROLLER_NAMES = {"kind": "CloudFormationStack", "listKind": "CloudFormationStackList",
                    "plural": "cloudformationstacks", "shortNames": ["cfnstack"],
                    "singular": "cloudformationstack"}
READY = '.status.conditions[?(@.type=="Ready")]'
CONTROLLER_COLUMNS = [{"jsonPath": f"{READY}.status", "name": "Ready", "type": "string"},
                      {"jsonPath": f"{READY}.message", "name": "Status", "type": "string"},
                      {"jsonPath": ".metadata.creationTimestamp", "name": "Age", "type": "date"}]
EXTRA_COLUMNS = [{"jsonPath": ".spec.stackName", "name": "Stack", "type": "string"}]


def test_crd_matches_the_controllers_field_by_field():
    crd = yaml.safe_load((Path(__file__).parents[2] / "deploy" / "k8s" / "base" / "crd.yaml").read_text())
    assert crd["metadata"]["name"] == "cloudformationstacks.cloudformation.contrib.fluxcd.io"
    assert (crd["spec"]["group"], crd["spec"]["scope"], crd["spec"]["names"]) == (
        "cloudformation.contrib.fluxcd.io", "Namespaced", CONTROLLER_NAMES)
    version = crd["spec"]["versions"][0]
    assert (version["name"], version["served"], version["storage"], version["subresources"]) == (
        "v1alpha1", True, True, {"status": {}})
    assert version["additionalPrinterColumns"] == EXTRA_COLUMNS + CONTROLLER_COLUMNS
    ours = schema_fields(version["schema"]["openAPIV3Schema"])
    for field, constraints in CONTROLLER_FIELDS.items():
        assert ours.get(field) == constraints, field
    assert set(ours) - set(CONTROLLER_FIELDS) == EXTENSIONS
    # the objects' model reads every spec field the CRD declares
    from formwright.sync.objects import StackSpec

    aliases = {f.alias or name for name, f in StackSpec.model_fields.items()}
    assert {f.split(".")[1].removesuffix("[]") for f in ours if f.startswith("spec.")} <= aliases


def test_a_status_the_flux_controller_wrote_is_adopted(tmp_path):
    """An object the Flux controller left: its `.status` (ARNs, no formwright fields) seeds the state, and
    the next pass, as the controller's would, describes that change set by its ARN (the desired name is the
    last attempted one): executed, so Ready with no new change set. Fake CloudFormation: the applied stack
    and the controller's executed change set."""
    written = {"observedGeneration": 1, "lastAttemptedRevision": "main@sha1:abc",
               "lastAppliedRevision": "main@sha1:abc", "lastAttemptedChangeSet": CS_ARN,
               "lastAppliedChangeSet": CS_ARN, "stackName": "app",
               "conditions": [{"type": "Ready", "status": "True", "reason": "Succeeded",
                               "message": "Stack reconciliation succeeded"}]}
    st = Status.from_k8s(written)
    assert (st.change_set_name, st.change_set_id, st.phase) == ("flux-1-main-sha1-abc", CS_ARN, "")
    obj, artifact, stubber, reconciler = stubbed(tmp_path)
    executed = {"ChangeSetId": CS_ARN, "ChangeSetName": "flux-1-main-sha1-abc", "StackName": "app",
                "Status": "CREATE_COMPLETE", "ExecutionStatus": "EXECUTE_COMPLETE"}
    stubber.add_response("describe_stacks", described("UPDATE_COMPLETE"), {"StackName": "app"})
    for _ in range(2):  # read, then read again to judge it against the stack
        stubber.add_response("describe_change_set", executed, {"ChangeSetName": CS_ARN, "StackName": "app"})
    with stubber:
        out = reconciler.reconcile(obj, 1, st, artifact=artifact)
    stubber.assert_no_pending_responses()  # and nothing else: no CreateChangeSet, no DeleteChangeSet
    assert (out.status.ready, out.status.message) == (TRUE, "Stack reconciliation succeeded")
    assert out.status.last_applied_change_set == out.status.last_attempted_change_set == CS_ARN
    assert out.events == []


# ---- 3, 5. the controller's flags: `sync reconcile` (a child process) and the operator's environment -------
@pytest.mark.cloud
def test_the_controllers_flags_reach_the_stack_through_the_cli(tmp_path, repo, cloud):
    """main.go's --stack-tags (repeatable k=v,k=v), --template-bucket / TEMPLATE_BUCKET and
    --no-cross-namespace-refs, as `formwright sync reconcile` flags."""
    from .test_daemon import cli

    repo.commit({"template.yaml": QUEUE})
    folder = tmp_path / "objects"
    folder.mkdir()
    (folder / "stacks.yaml").write_text(objects_yaml(repo.url, [
        {"name": "app"},
        {"name": "foreign", "sourceRef": {"kind": "GitRepository", "name": "repo", "namespace": "other"}}]))
    cloud.client("s3").create_bucket(Bucket="flux-templates")
    env = dict(os.environ, FORMWRIGHT_TARGET="local", TEMPLATE_BUCKET="flux-templates")
    done = cli("sync", "reconcile", "app", str(folder), "--stack-tags", "team=a,env=dev", "--stack-tags",
               "owner=me", "--output", "json", env=env)
    assert json.loads(done.stdout)["ready"] == "True"
    data = cloud.client("cloudformation").describe_stacks(StackName="sync-app")["Stacks"][0]
    assert {t["Key"]: t["Value"] for t in data["Tags"]} == {
        "cfn-flux-controller/version": CONTROLLER_VERSION, "cfn-flux-controller/name": "app",
        "cfn-flux-controller/namespace": "default", "team": "a", "env": "dev", "owner": "me"}
    listed = cloud.client("s3").list_objects_v2(Bucket="flux-templates").get("Contents", [])
    assert [o["Key"].startswith("flux-sync-app-") for o in listed] == [True]  # from TEMPLATE_BUCKET

    blocked = cli("sync", "reconcile", "foreign", str(folder), "--no-cross-namespace-refs", env=env,
                  check=False)
    assert blocked.returncode == 1 and "cross-namespace references have been blocked" in blocked.stdout
    bad = cli("sync", "reconcile", "app", str(folder), "--stack-tags", "team", env=env, check=False)
    assert bad.returncode == 2 and "--stack-tags: 'team' is not KEY=VALUE" in bad.stderr
    assert "Traceback" not in bad.stderr and len(bad.stderr.strip().splitlines()) <= 2


def test_the_operators_environment_carries_the_controllers_flags(monkeypatch, tmp_path, cloud):
    from formwright.sync.k8s import operator as op

    monkeypatch.setattr(op, "OPERATOR", None)
    monkeypatch.setenv("FORMWRIGHT_TARGET", "local")
    monkeypatch.setenv("FORMWRIGHT_SYNC_STATE", str(tmp_path / "state"))
    monkeypatch.setenv("TEMPLATE_BUCKET", "flux-templates")
    monkeypatch.setenv("FORMWRIGHT_SYNC_STACK_TAGS", "team=a,env=dev")
    monkeypatch.setenv("FORMWRIGHT_SYNC_NO_CROSS_NAMESPACE_REFS", "true")
    reconciler = op.operator().reconciler
    assert (reconciler.template_bucket, reconciler.stack_tags, reconciler.no_cross_namespace_refs) == (
        "flux-templates", {"team": "a", "env": "dev"}, True)
