"""The reconcile loop for one CloudFormationStack, as the Flux CloudFormation controller runs it.

The reference is the controller's reconcile loop (awslabs/aws-cloudformation-controller-for-flux,
internal/controllers/cloudformationstack_controller.go): its branches per stack status, its Ready
reasons and message texts, its events, its stack tags and its change set names are kept here.

One call of `Reconciler.reconcile` moves an object one or two steps and returns when to come back:
it never sits waiting for CloudFormation (while anything is in progress it asks to be called again
after pollInterval), so a few workers can serve thousands of objects. Every decision is made from
the cloud's state and the persisted status; the change-set phase is saved *before* each write call,
so a daemon killed at any point resumes without applying anything twice.

Steps: suspended → nothing; a new generation → Ready=Unknown "Stack reconciliation in progress";
source missing or without artifact → ArtifactFailed; dependsOn not Ready → DependencyNotReady;
stack in progress → wait (pollInterval); CREATE_FAILED / DELETE_FAILED / ROLLBACK_COMPLETE /
ROLLBACK_FAILED → DeleteStack, UnrecoverableStackFailure (retryInterval); UPDATE_ROLLBACK_FAILED →
ContinueUpdateRollback, StackRollbackFailed (retryInterval); UPDATE_FAILED / UPDATE_ROLLBACK_COMPLETE /
IMPORT_ROLLBACK_COMPLETE / IMPORT_ROLLBACK_FAILED → a Warning event and a new change set; another
status → UnexpectedStatus; inputs unchanged since the last apply → Ready without a change set;
otherwise the change set `flux-<generation>-<revision>` (IncludeNestedStacks): created (CREATE when
there is no stack or it is REVIEW_IN_PROGRESS), an empty one deleted (Ready), a failed one deleted
(ChangeSetFailed, retryInterval), a good one executed and judged by the stack's final status. With a
template bucket every template is uploaded there, as the controller does; without one, templates
over 51,200 bytes go through the managed S3 bucket.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError
from botocore.parsers import ResponseParserError

from formwright import __version__
from formwright.cloud.errors import error_code, error_message, translate
from formwright.engine.cfn import CallCounter, CloudFormation, StackInfo, failure_reasons, is_no_change
from formwright.engine.results import no_progress
from formwright.engine.runner import StackRunner
from formwright.errors import FormwrightError, InputError
from formwright.sandbox import Sandbox, confined
from formwright.sync import messages as say
from formwright.sync.messages import IN_PROGRESS, SUCCEEDED
from formwright.sync.objects import GitRepository, StackObject
from formwright.sync.source import Artifact, SourceError, Sources, resolve_inside
from formwright.sync.status_store import FALSE, TRUE, UNKNOWN, Event, Status
from formwright.template import dump_json, loads, plain

CAPABILITIES = ["CAPABILITY_IAM", "CAPABILITY_NAMED_IAM", "CAPABILITY_AUTO_EXPAND"]
# internal/clients/types/stack.go: the controller's stack status classes
RECREATE = {"CREATE_FAILED", "DELETE_FAILED", "ROLLBACK_COMPLETE", "ROLLBACK_FAILED"}
RECOVERABLE = {
    "UPDATE_FAILED", "UPDATE_ROLLBACK_COMPLETE", "IMPORT_ROLLBACK_COMPLETE", "IMPORT_ROLLBACK_FAILED",
}
APPLIED = {"CREATE_COMPLETE", "UPDATE_COMPLETE", "IMPORT_COMPLETE"}
CONTROLLER_NAME = "cfn-flux-controller"  # the prefix of the controller's stack tags (main.go)
CONTROLLER_VERSION = f"formwright-{__version__}"
NORMAL, WARNING = "Normal", "Warning"
DEPENDENCY_REQUEUE = 30.0
DRIFT_UNSUPPORTED = "drift detection unsupported by target"
CORRECTION_TAG = "formwright.io/drift-correction"


def change_set_name(generation: int, revision: str) -> str:
    """`flux-<generation>-<revision>` as the controller names it (internal/clients/cloudformation/
    changeset.go): runs of non-alphanumerics as `-`, at most 128 characters."""
    return re.sub(r"[^A-Za-z0-9]+", "-", f"flux-{generation}-{revision}")[:128]


def stack_tags(obj: StackObject, extra: dict[str, str]) -> dict[str, str]:
    """The controller's tags (`cfn-flux-controller/version|name|namespace`), then `extra` (--stack-tags),
    then the object's spec.stackTags, as the controller orders them (a later key wins here)."""
    tags = {f"{CONTROLLER_NAME}/version": CONTROLLER_VERSION, f"{CONTROLLER_NAME}/name": obj.name,
            f"{CONTROLLER_NAME}/namespace": obj.namespace}
    tags.update(extra)
    tags.update((t.key, t.value) for t in obj.spec.stack_tags)
    return tags


def source_ref(obj: StackObject) -> str:
    """The sourceRef as the controller prints it: `Kind/name`, or `Kind/namespace/name`."""
    ref = obj.spec.source_ref
    return f"{ref.kind}/{ref.namespace}/{ref.name}" if ref.namespace else f"{ref.kind}/{ref.name}"


def backoff(failures: int, base: float, cap: float) -> float:
    """base, 2·base, 4·base … capped at `cap` (the object's retryInterval)."""
    return min(cap, base * (2 ** max(0, failures - 1)))


@dataclass
class Desired:
    """What the stack should be: the template body, parameters, tags and their digest."""

    body: str
    parameters: dict[str, str]
    tags: dict[str, str]
    digest: str


@dataclass
class Outcome:
    """The result of one reconcile: the new status and when to run again (None: not until woken)."""

    status: Status
    requeue: float | None
    applied: bool = False
    #: Events of this pass, as the controller records them (Kubernetes events in the operator).
    events: list[Event] = field(default_factory=list)


@dataclass
class _Named:
    """The `name` (and `region`) the runner's upload helper reads from a project and a stack."""

    name: str
    region: str | None = None


class StackInventory:
    """One DescribeStacks listing per `max_age` seconds, shared by every object (steady state only)."""

    def __init__(
        self, cfn: CloudFormation, max_age: float = 1.0, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.cfn = cfn
        self.max_age = max_age
        self.clock = clock
        self._lock = threading.Lock()
        self._stacks: dict[str, StackInfo] = {}
        self._taken = float("-inf")

    def lookup(self, stack_name: str) -> StackInfo | None:
        """The stack as listed at most `max_age` seconds ago (None when it was not listed)."""
        with self._lock:
            if self.clock() - self._taken >= self.max_age:
                stacks: dict[str, StackInfo] = {}
                token = None
                while True:
                    page = self.cfn.call("describe_stacks", **({"NextToken": token} if token else {}))
                    for data in page.get("Stacks", []):
                        if data.get("StackStatus") != "DELETE_COMPLETE":
                            stacks[data["StackName"]] = StackInfo.from_api(data)
                    token = page.get("NextToken")
                    if not token:
                        break
                self._stacks, self._taken = stacks, self.clock()
            return self._stacks.get(stack_name)


class Reconciler:
    """Reconciles CloudFormationStack objects against one target; thread-safe, holds no per-object state."""

    def __init__(self, target: Any, sources: Sources, *, state_dir: Path,
                 save: Callable[[str, Status], None] = lambda key, status: None,
                 counter: CallCounter | None = None, drift: bool = True,
                 dependency_requeue: float = DEPENDENCY_REQUEUE, cfn: CloudFormation | None = None,
                 list_stacks: bool = False, macros_dir: Path | None = None,
                 stack_tags: dict[str, str] | None = None, template_bucket: str | None = None,
                 no_cross_namespace_refs: bool = False) -> None:
        self.target = target
        #: The operator's macros folder: the only macro code a synced repository can run (formwright.sandbox).
        self.macros_dir = macros_dir
        #: --stack-tags: after the controller's own tags, before each object's spec.stackTags
        self.stack_tags = dict(stack_tags or {})
        #: --template-bucket (TEMPLATE_BUCKET): every template is uploaded there, as the controller does
        self.template_bucket = template_bucket or None
        self.no_cross_namespace_refs = no_cross_namespace_refs
        self._local = threading.local()
        self.sources = sources
        self.state_dir = state_dir
        self.save = save
        self.cfn = cfn or CloudFormation(target.client("cloudformation"), counter)
        self.counter = self.cfn.counter
        self.drift = drift
        self.dependency_requeue = dependency_requeue
        self.inventory = StackInventory(self.cfn) if list_stacks else None
        self._runner = StackRunner(_Named("formwright-sync", target.region), target, self.cfn,  # type: ignore[arg-type]
                                   None, no_progress)  # type: ignore[arg-type]
        self._drift_supported: bool | None = None
        self._probe_cfn: CloudFormation | None = None
        self._desired: OrderedDict[tuple, Desired] = OrderedDict()
        self._desired_lock = threading.Lock()

    # ---- entry points -------------------------------------------------------------------------
    def reconcile(self, obj: StackObject, generation: int, status: Status, *, suspended: bool = False,
                  repository: GitRepository | None = None,
                  ready_of: Callable[[str], Status | None] = lambda key: None,
                  artifact: Artifact | None = None, force_fetch: bool = False,
                  requested_at: str = "", source_problem: str = "") -> Outcome:
        """One pass over `obj`; never raises for cloud, source or template errors.

        `requested_at` is the object's reconcile.fluxcd.io/requestedAt (recorded as
        lastHandledReconcileAt); `source_problem` says why the source has no artifact (the operator's
        source-controller status), else a missing `repository` and `artifact` means "not found".
        """
        st = Status.from_json(status.to_json())
        st.last_reconcile = time.time()
        if suspended:
            return Outcome(st, None)
        events: list[Event] = []
        self._local.events = events
        outcome = self._reconcile(obj, generation, st, repository, ready_of, artifact, force_fetch,
                                  requested_at, source_problem)
        outcome.events = events
        return outcome

    def _reconcile(self, obj: StackObject, generation: int, st: Status, repository: GitRepository | None,
                   ready_of: Callable[[str], Status | None], artifact: Artifact | None, force_fetch: bool,
                   requested_at: str, source_problem: str) -> Outcome:
        spec = obj.spec
        if requested_at:
            st.last_handled_reconcile_at = requested_at
        st.stack_name = str(spec.stack_name or "")
        if st.observed_generation != generation:
            st.observed_generation = generation
            st.set_ready(UNKNOWN, "Progressing", IN_PROGRESS)
            self.save_status(obj.key, st)
        ref = source_ref(obj)
        try:
            namespace = obj.source_key.split("/", 1)[0]
            if self.no_cross_namespace_refs and namespace != obj.namespace:
                blocked = (f"can't access '{spec.source_ref.kind}/{obj.source_key}', "
                           "cross-namespace references have been blocked")
                return self._not_ready(st, obj, "ArtifactFailed",
                                       f"Failed to resolve source '{ref}': {blocked}")
            if artifact is None:
                if source_problem:
                    return self._not_ready(st, obj, "ArtifactFailed", source_problem)
                if spec.source_ref.kind != "GitRepository":
                    return self._not_ready(
                        st, obj, "ArtifactFailed", f"Source '{ref}': a {spec.source_ref.kind} source needs "
                        "the artifact of Flux's source-controller; `formwright sync run` fetches "
                        "GitRepository sources only (the operator, deploy/k8s, reads Bucket, OCIRepository)")
                if repository is None:
                    return self._not_ready(st, obj, "ArtifactFailed", f"Source '{ref}' not found")
                try:
                    artifact, _ = self.sources.get(repository, force=force_fetch)
                except FormwrightError as err:
                    return self._not_ready(st, obj, "ArtifactFailed",
                                           f"Source '{ref}' is not ready, artifact not found: {err}")
            waiting = [dep for dep in obj.dependencies if not _dependency_ready(ready_of(dep))]
            if waiting:
                msg = f"Dependencies do not meet ready condition (dependency '{waiting[0]}' is not ready)"
                self._event(NORMAL, msg, artifact.revision)
                st.last_attempted_revision = artifact.revision
                st.set_ready(FALSE, "DependencyNotReady", msg)
                return Outcome(st, self.dependency_requeue)
            # the repository is data: it reads nothing outside its checkout and runs no code of its own
            with confined(Sandbox(artifact.path)):
                if spec.project_path is not None:
                    return self._reconcile_project(obj, generation, st, artifact, force_fetch)
                try:
                    desired = self.desired(obj, artifact, st.correction)
                except FormwrightError as err:
                    st.last_attempted_revision = artifact.revision
                    return self._not_ready(st, obj, "ArtifactFailed", f"Failed to load template "
                                           f"'{obj.template_path}' from source '{ref}': {err}")
                return self._reconcile_template(obj, generation, st, artifact, desired)
        except (ClientError, BotoCoreError, ResponseParserError) as err:
            return self._api_failed(st, obj, str(translate(err, where=spec.stack_name)))
        except FormwrightError as err:
            return self._api_failed(st, obj, str(err))

    def _event(self, kind: str, message: str, revision: str = "") -> None:
        """Record an event of this pass (the controller's `r.event`)."""
        events = getattr(self._local, "events", None)
        if events is not None:
            events.append(Event(kind, message, revision))

    def _api_failed(self, st: Status, obj: StackObject, detail: str) -> Outcome:
        """An AWS call failed: Warning "Failed to reconcile stack: …", CloudFormationApiCallFailed."""
        self._event(WARNING, f"Failed to reconcile stack: {detail}", st.last_attempted_revision)
        return self._not_ready(st, obj, "CloudFormationApiCallFailed", detail)

    def delete(self, key: str, stack_name: str, destroy: bool, status: Status, *, suspended: bool = False,
               poll_interval: float = 5.0, retry_interval: float = 60.0) -> Outcome:
        """The object is gone: delete its stack when `destroy` (not when suspended, as the controller),
        else leave it. requeue None = finished (the finalizer may go)."""
        st = Status.from_json(status.to_json())
        events: list[Event] = []
        self._local.events = events
        outcome = self._delete(key, stack_name, destroy and not suspended, st, poll_interval, retry_interval)
        outcome.events = events
        return outcome

    def _delete(self, key: str, stack_name: str, destroy: bool, st: Status, poll_interval: float,
                retry_interval: float) -> Outcome:
        if not destroy or not stack_name:
            return Outcome(st, None)
        revision = st.last_attempted_revision
        try:
            info = self.cfn.describe(stack_name)
            if info is None or info.status == "REVIEW_IN_PROGRESS":
                st.set_ready(TRUE, "Succeeded", SUCCEEDED)
                return Outcome(st, None)
            if info.in_progress:
                st.set_ready(UNKNOWN, "Progressing", say.deletion_waits(stack_name, info.status))
                return Outcome(st, poll_interval)
            if info.status == "DELETE_FAILED":
                self._event(WARNING, f"Stack '{stack_name}' failed to delete, retrying", revision)
            st.phase = "deleting"
            self.save_status(key, st)
            self.cfn.call("delete_stack", StackName=info.stack_id)
            message = f"Started deletion of stack '{stack_name}'"
            self._event(NORMAL, message, revision)
            after = self.cfn.describe(info.stack_id)
            if after is None:
                st.set_ready(TRUE, "Succeeded", SUCCEEDED)
                return Outcome(st, None)
            st.set_ready(UNKNOWN, "Progressing", message)
            return Outcome(st, poll_interval)
        except (ClientError, BotoCoreError, ResponseParserError) as err:
            detail = str(translate(err, where=stack_name))
            self._event(WARNING, f"Failed to reconcile stack: {detail}", revision)
            st.failures += 1
            st.set_ready(FALSE, "CloudFormationApiCallFailed",
                         f"Failed to delete the stack '{stack_name}': {detail}")
            return Outcome(st, retry_interval)

    def save_status(self, key: str, st: Status) -> None:
        """Persist an intermediate status (before a write call)."""
        self.save(key, st)

    # ---- desired state ------------------------------------------------------------------------
    def desired(self, obj: StackObject, artifact: Artifact, correction: str = "") -> Desired:
        """The template body (macros expanded), parameters and tags for this revision (cached)."""
        parameters = {p.key: p.value for p in obj.spec.stack_parameters}
        tags = stack_tags(obj, self.stack_tags)
        if correction:
            tags[CORRECTION_TAG] = correction
        cache_key = (str(artifact.path), obj.template_path, tuple(sorted(parameters.items())),
                     tuple(sorted(tags.items())), obj.spec.stack_name)
        with self._desired_lock:
            hit = self._desired.get(cache_key)
            if hit is not None:
                self._desired.move_to_end(cache_key)
                return hit
        path = resolve_inside(
            artifact.path, obj.template_path, what="templatePath", revision=artifact.revision
        )
        if not path.is_file():
            raise SourceError(f"templatePath '{obj.template_path}' is not a file")
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as err:
            raise SourceError(f"cannot read templatePath '{obj.template_path}': {err}") from None
        where = f"{obj.template_path}@{artifact.revision.rsplit(':', 1)[-1][:12]}"
        template = loads(text, file=where)
        if not isinstance(template, dict):
            raise InputError("a template must be a mapping with Resources", file=where, line=1)
        body = self._expand(template, parameters, path.parent, where) or text
        digest = hashlib.sha256(json.dumps([body, sorted(parameters.items()), sorted(tags.items()),
                                            obj.spec.stack_name]).encode()).hexdigest()
        desired = Desired(body, parameters, tags, digest)
        with self._desired_lock:
            self._desired[cache_key] = desired
            while len(self._desired) > 4096:
                self._desired.popitem(last=False)
        return desired

    def _expand(self, template: dict, parameters: dict[str, str], base_dir: Path, where: str) -> str | None:
        """The body with macros run locally (formwright.macros); None when there are none or no engine."""
        try:
            from formwright.macros import MacroRegistry, expand, needs_auto_expand
        except ImportError:
            return None  # passed through as written; CloudFormation expands it (CAPABILITY_AUTO_EXPAND)
        if not needs_auto_expand(template):
            return None
        registry = MacroRegistry.build(base_dir=base_dir, macros_dir=self.macros_dir)
        registry.register_template_macros(template, base_dir)
        expanded = expand(template, registry=registry, parameter_values=parameters, region=self.target.region,
                          file=where, base_dir=base_dir)
        return dump_json(plain(expanded), indent=None)

    # ---- one template -------------------------------------------------------------------------
    def _reconcile_template(self, obj: StackObject, generation: int, st: Status, artifact: Artifact,
                            desired: Desired) -> Outcome:
        spec = obj.spec
        stack_name = str(spec.stack_name)
        revision = artifact.revision
        name = change_set_name(generation, revision) + (f"-c{st.correction}" if st.correction else "")
        name = name[:128]
        info = self._current(stack_name, st, desired, obj)
        if info is not None and info.in_progress:
            st.last_attempted_revision = revision
            st.set_ready(UNKNOWN, "Progressing", say.stack_in_progress(stack_name, info.status))
            return Outcome(st, spec.poll_interval)
        if st.phase == "executing":
            return self._after_execute(obj, generation, st, artifact, desired, info)
        if info is not None and info.status not in APPLIED and info.status != "REVIEW_IN_PROGRESS":
            failed = self._failed_stack(obj, st, info, revision)
            if failed is not None:
                return failed
        if info is not None and info.status in APPLIED and st.applied_digest == desired.digest \
                and st.stack_id == info.stack_id:
            return self._up_to_date(obj, generation, st, revision, info)
        if st.phase == "created" and st.change_set_name == name:
            return self._advance(obj, generation, st, artifact, desired, info, name)
        return self._create(obj, generation, st, artifact, desired, info, name)

    def _failed_stack(self, obj: StackObject, st: Status, info: StackInfo, revision: str) -> Outcome | None:
        """A stack in a failed or unknown status, as the controller treats it; None: go on to a change set
        (a recoverable failure, after its Warning event)."""
        stack_name = str(obj.spec.stack_name)
        st.last_attempted_revision = revision
        if info.status == "UPDATE_ROLLBACK_FAILED":
            try:
                self.cfn.call("continue_update_rollback", StackName=info.stack_id)
            except ClientError as err:
                return self._api_failed(st, obj, f"Failed to continue a failed rollback for stack "
                                        f"'{stack_name}': {error_message(err)}")
            msg = say.rollback_continued(stack_name, info.status)
            self._event(WARNING, msg, revision)
            return self._not_ready(st, obj, "StackRollbackFailed", msg)
        if info.status in RECREATE:
            try:
                self.cfn.call("delete_stack", StackName=info.stack_id)
            except ClientError as err:
                return self._api_failed(st, obj, f"Failed to delete the failed stack '{stack_name}': "
                                        f"{error_message(err)}")
            msg = say.unrecoverable(stack_name, info.status, info.reason)
            self._event(WARNING, msg, revision)
            st.applied_digest = ""
            return self._not_ready(st, obj, "UnrecoverableStackFailure", msg)
        if info.status in RECOVERABLE:
            self._event(WARNING, say.recoverable(stack_name, info.status, info.reason), revision)
            st.applied_digest = ""
            return None
        msg = say.unexpected(stack_name, info.status, info.reason)
        self._event(WARNING, msg, revision)
        return self._not_ready(st, obj, "UnexpectedStatus", msg)

    def _current(self, stack_name: str, st: Status, desired: Desired, obj: StackObject) -> StackInfo | None:
        """The stack: from the shared listing in the steady state, else one DescribeStacks."""
        if (
            self.inventory is not None
            and not st.phase
            and st.applied_digest == desired.digest
            and st.stack_id
        ):
            listed = self.inventory.lookup(stack_name)
            if listed is not None and listed.stack_id == st.stack_id and listed.settled_ok:
                return listed
        return self.cfn.describe(stack_name)

    def _up_to_date(self, obj: StackObject, generation: int, st: Status, revision: str,
                    info: StackInfo) -> Outcome:
        """Nothing to apply: record the revision, look for drift, stay Ready."""
        noted = revision != st.last_applied_revision
        st.observed_generation = generation
        st.last_attempted_revision = st.last_applied_revision = revision
        st.phase, st.failures = "", 0
        requeue = obj.spec.interval
        if self.drift:
            requeue = self._check_drift(obj, st, info) or requeue
            if st.phase == "correcting":
                st.phase = ""
                st.applied_digest = ""  # re-apply with the correction tag on the next pass
                st.set_ready(UNKNOWN, "Progressing", f"correcting drift: {st.drift}")
                return Outcome(st, 0.0)
        if noted:
            st.last_applied_change_set = st.last_attempted_change_set
        st.set_ready(TRUE, "Succeeded", SUCCEEDED)
        return Outcome(st, requeue)

    def _create(self, obj: StackObject, generation: int, st: Status, artifact: Artifact, desired: Desired,
                info: StackInfo | None, name: str) -> Outcome:
        spec = obj.spec
        stack_name = str(spec.stack_name)
        create = info is None or info.status == "REVIEW_IN_PROGRESS"
        if st.change_set_name == name and info is not None:
            self._delete_change_set(stack_name, self._ref(st, name))  # a failed attempt of the same name
        try:
            argument = self._template_argument(obj, desired.body)
        except (ClientError, BotoCoreError, ResponseParserError, FormwrightError) as err:
            st.last_attempted_revision = artifact.revision
            return self._not_ready(st, obj, "TemplateUploadFailed", f"Failed to upload template to S3 for "
                                   f"stack '{stack_name}': {translate(err, where=stack_name)}")
        st.phase, st.change_set_name, st.last_attempted_revision = "created", name, artifact.revision
        # the previous change set's ARN goes with the write-ahead: kept, a restart would take that (executed)
        # change set for this one and report this revision applied without applying it
        st.change_set_id = ""
        self.save_status(obj.key, st)  # write-ahead: a restart finds this change set by name
        try:
            st.change_set_id = self.cfn.create_change_set(
                StackName=stack_name,
                ChangeSetName=name,
                ChangeSetType="CREATE" if create else "UPDATE",
                Parameters=[
                    {"ParameterKey": k, "ParameterValue": v} for k, v in sorted(desired.parameters.items())
                ],
                Tags=[{"Key": k, "Value": v} for k, v in desired.tags.items()],
                Capabilities=CAPABILITIES,
                IncludeNestedStacks=True,
                **argument,
            )
        except ClientError as err:
            if error_code(err) != "AlreadyExistsException":
                st.phase = ""
                return self._api_failed(st, obj, f"Failed to create a change set for stack '{stack_name}': "
                                        f"{error_message(err)}")
        if st.change_set_id:
            st.last_attempted_change_set = st.change_set_id
            msg = say.change_set_created(stack_name, st.change_set_id, create)
            self._event(NORMAL, msg, artifact.revision)
            st.set_ready(UNKNOWN, "Progressing", msg)
        self.save_status(obj.key, st)  # its ARN: change set names are per stack, ARNs are global
        return self._advance(obj, generation, st, artifact, desired, info, name)

    def _template_argument(self, obj: StackObject, body: str) -> dict[str, str]:
        """TemplateURL of a copy in --template-bucket (every template, as the controller), else TemplateBody
        or, over 51,200 bytes, TemplateURL in the managed bucket."""
        if self.template_bucket is None:
            return self._runner.template_argument(_Named(obj.key.replace("/", "-")), body)  # type: ignore[arg-type]
        key = f"flux-{obj.spec.stack_name}-{uuid.uuid4()}.template"  # the controller's object key
        self.target.client("s3").put_object(Bucket=self.template_bucket, Key=key, Body=body.encode("utf-8"))
        self.counter.add("put_object")
        return {"TemplateURL": f"https://s3.{self.target.region}.amazonaws.com/{self.template_bucket}/{key}"}

    def _advance(self, obj: StackObject, generation: int, st: Status, artifact: Artifact, desired: Desired,
                 info: StackInfo | None, name: str) -> Outcome:
        """Move an existing change set on: wait, drop when empty or failed, execute when ready."""
        spec = obj.spec
        stack_name = str(spec.stack_name)
        ref = self._ref(st, name)
        desc = self._describe_change_set(stack_name, ref, name)
        if desc is None:
            st.phase = ""
            st.change_set_name = ""  # not there: nothing to delete before creating it
            return self._create(obj, generation, st, artifact, desired, info, name)
        arn = desc.get("ChangeSetId") or st.change_set_id
        st.last_attempted_change_set = st.change_set_id = arn
        status, execution = desc.get("Status", ""), desc.get("ExecutionStatus", "")
        if status in ("CREATE_PENDING", "CREATE_IN_PROGRESS"):
            st.set_ready(UNKNOWN, "Progressing", say.change_set_in_progress(stack_name, desc))
            return Outcome(st, spec.poll_interval)
        if is_no_change(desc):
            self._delete_change_set(stack_name, ref)
            current = info or self.cfn.describe(stack_name)
            st.applied_digest, st.stack_id = desired.digest, current.stack_id if current else ""
            st.phase = ""
            return self._up_to_date(obj, generation, st, artifact.revision, current) if current else \
                Outcome(st, spec.poll_interval)
        if status != "CREATE_COMPLETE" or execution in ("EXECUTE_FAILED", "OBSOLETE"):
            self._delete_change_set(stack_name, ref)
            self._drop_review_stack(stack_name)
            st.phase = ""
            return self._change_set_failed(st, obj, say.change_set_failed(stack_name, desc))
        if execution == "AVAILABLE":
            st.phase = "executing"
            self.save_status(obj.key, st)  # write-ahead: judged by the stack's status after a restart
            try:
                self.cfn.call("execute_change_set", ChangeSetName=ref, StackName=stack_name)
            except ClientError as err:
                if error_code(err) != "ValidationError":
                    raise
                self._delete_change_set(stack_name, ref)  # refused at execution (the local cloud does this)
                self._drop_review_stack(stack_name)
                st.phase = ""
                refused = {**desc, "ExecutionStatus": "EXECUTE_FAILED", "StatusReason": error_message(err)}
                return self._change_set_failed(st, obj, say.change_set_failed(stack_name, refused))
            msg = say.execution_started(stack_name, arn)
            self._event(NORMAL, msg, artifact.revision)
            after = self.cfn.describe(stack_name)
            if after is not None and not after.in_progress:
                return self._after_execute(obj, generation, st, artifact, desired, after)
            st.set_ready(UNKNOWN, "Progressing", msg)
            return Outcome(st, spec.poll_interval)
        if execution in ("EXECUTE_IN_PROGRESS", "EXECUTE_COMPLETE"):
            st.phase = "executing"
            return self._after_execute(obj, generation, st, artifact, desired, info)
        self._delete_change_set(stack_name, ref)  # UNAVAILABLE: make it again
        st.phase = ""
        st.set_ready(UNKNOWN, "Progressing", say.change_set_in_progress(stack_name, desc))
        return Outcome(st, spec.poll_interval)

    def _change_set_failed(self, st: Status, obj: StackObject, message: str) -> Outcome:
        """ChangeSetFailed with a Warning event, retried at retryInterval."""
        self._event(WARNING, message, st.last_attempted_revision)
        return self._not_ready(st, obj, "ChangeSetFailed", message)

    def _after_execute(
        self,
        obj: StackObject,
        generation: int,
        st: Status,
        artifact: Artifact,
        desired: Desired,
        info: StackInfo | None,
    ) -> Outcome:
        """Judge an executed change set by where the stack ended."""
        spec = obj.spec
        stack_name = str(spec.stack_name)
        name = st.change_set_name
        if info is not None and info.in_progress:
            st.set_ready(UNKNOWN, "Progressing", say.stack_in_progress(stack_name, info.status))
            return Outcome(st, spec.poll_interval)
        desc = self._describe_change_set(stack_name, self._ref(st, name), name) if info is not None else None
        if (
            desc is not None
            and desc.get("Status") == "CREATE_COMPLETE"
            and desc.get("ExecutionStatus") == "AVAILABLE"
        ):
            st.phase = "created"  # stopped between the write-ahead and the call: execute it now
            return self._advance(obj, generation, st, artifact, desired, info, name)
        if info is not None and info.status in APPLIED:
            st.phase, st.failures = "", 0
            st.applied_digest, st.stack_id = desired.digest, info.stack_id
            st.observed_generation = generation
            st.last_attempted_revision = st.last_applied_revision = artifact.revision
            st.last_applied_change_set = st.last_attempted_change_set = st.change_set_id or name
            st.set_ready(TRUE, "Succeeded", SUCCEEDED)
            return Outcome(st, spec.interval, applied=True)
        st.phase = ""
        if info is None:
            return self._change_set_failed(st, obj,
                                           f"Change set failed for stack '{stack_name}': the stack is gone")
        # the controller judges the stack first: an unrecoverable one is deleted, a recoverable one
        # reported with its change set
        reasons = failure_reasons(self.cfn.events_since(stack_name, None, limit_pages=1))
        if info.status in RECOVERABLE:
            self._event(WARNING, say.recoverable(stack_name, info.status, info.reason), artifact.revision)
            detail = "; ".join(reasons[:3])
            return self._change_set_failed(st, obj, say.change_set_failed(stack_name, desc or {})
                                           + (f" ({detail})" if detail else ""))
        failed = self._failed_stack(obj, st, info, artifact.revision)
        if failed is not None and reasons:
            failed.status.message += f" ({'; '.join(reasons[:3])})"
        return failed or Outcome(st, spec.poll_interval)

    @staticmethod
    def _ref(st: Status, name: str) -> str:
        """The change set's ARN when we created it (names are only unique per stack), else its name."""
        return st.change_set_id if st.change_set_id and st.change_set_name == name else name

    def _describe_change_set(
        self, stack_name: str, ref: str, name: str | None = None
    ) -> dict[str, Any] | None:
        """The change set by ARN or by name on this stack; None when there is none (or, looked up by an ARN,
        it is another change set than `name`)."""
        try:
            desc: dict[str, Any] = self.cfn.call(
                "describe_change_set", ChangeSetName=ref, StackName=stack_name
            )
        except ClientError as err:
            if error_code(err) in ("ChangeSetNotFound", "ChangeSetNotFoundException") or \
                    "does not exist" in error_message(err):
                return None
            raise
        if desc.get("StackName") not in (None, stack_name):
            return None  # the local cloud looks names up across stacks
        if name is not None and desc.get("ChangeSetName") not in (None, name):
            return None
        return desc

    def _drop_review_stack(self, stack_name: str) -> None:
        """Delete the empty REVIEW_IN_PROGRESS stack a failed CREATE change set leaves behind."""
        info = self.cfn.describe(stack_name)
        if info is not None and info.status == "REVIEW_IN_PROGRESS":
            self.cfn.call("delete_stack", StackName=info.stack_id)

    def _delete_change_set(self, stack_name: str, name: str) -> None:
        try:
            self.cfn.call("delete_change_set", ChangeSetName=name, StackName=stack_name)
        except ClientError as err:
            if error_code(err) not in ("ChangeSetNotFound", "ChangeSetNotFoundException", "ValidationError"):
                raise

    def _not_ready(self, st: Status, obj: StackObject, reason: str, message: str) -> Outcome:
        """Ready=False with the controller's reason, retried at retryInterval (as the controller)."""
        st.failures += 1
        st.set_ready(FALSE, reason, message)
        return Outcome(st, obj.retry_interval)

    # ---- drift --------------------------------------------------------------------------------
    def _probe(self) -> CloudFormation:
        """CloudFormation without retries until drift detection is known to work (moto answers 500)."""
        if self._drift_supported:
            return self.cfn
        with self._desired_lock:
            if self._probe_cfn is None:
                from botocore.config import Config

                client = self.target.session().client("cloudformation", endpoint_url=self.target.endpoint,
                                                      config=Config(retries={"max_attempts": 1}))
                self._probe_cfn = CloudFormation(client, self.counter)
            return self._probe_cfn

    def _check_drift(self, obj: StackObject, st: Status, info: StackInfo) -> float | None:
        """Start or read a drift detection; report it; ask for correction when driftCorrection is on."""
        if self._drift_supported is False:
            st.drift = DRIFT_UNSUPPORTED
            return None
        stack_name = str(obj.spec.stack_name)
        try:
            if not st.drift_detection_id:
                st.drift_detection_id = self._probe().call("detect_stack_drift", StackName=stack_name)[
                    "StackDriftDetectionId"]
                self._drift_supported = True
                return obj.spec.poll_interval
            result = self.cfn.call("describe_stack_drift_detection_status",
                                   StackDriftDetectionId=st.drift_detection_id)
        except (ClientError, BotoCoreError, ResponseParserError) as err:
            if self._drift_supported is None and _unsupported(err):
                self._drift_supported = False
                st.drift, st.drift_detection_id = DRIFT_UNSUPPORTED, ""
                return None
            st.drift, st.drift_detection_id = f"drift detection failed: {translate(err)}", ""
            return None
        if result.get("DetectionStatus") == "DETECTION_IN_PROGRESS":
            return obj.spec.poll_interval
        st.drift_detection_id = ""
        if result.get("DetectionStatus") == "DETECTION_FAILED":
            st.drift = f"drift detection failed: {result.get('DetectionStatusReason', '')}".rstrip(": ")
            return None
        if result.get("StackDriftStatus") != "DRIFTED":
            st.drift = "IN_SYNC"
            return None
        drifts = self.cfn.call("describe_stack_resource_drifts", StackName=stack_name,
                               StackResourceDriftStatusFilters=["MODIFIED", "DELETED"]).get(
                                   "StackResourceDrifts", [])
        items = ", ".join(f"{d.get('LogicalResourceId')} {d.get('StackResourceDriftStatus')}" for d in drifts)
        st.drift = f"DRIFTED: {items or 'resources differ from the template'}"
        if obj.spec.drift_correction:
            st.correction = result.get("StackDriftDetectionId", str(int(time.time())))[-12:]
            st.phase = "correcting"
        return None

    # ---- a whole project ----------------------------------------------------------------------
    def _reconcile_project(self, obj: StackObject, generation: int, st: Status, artifact: Artifact,
                           force: bool) -> Outcome:
        """projectPath: deploy the formwright project at this revision through StackGroup."""
        from formwright.engine.group import StackGroup
        from formwright.engine.stack import prepare_stacks
        from formwright.model.project import load_project

        spec = obj.spec
        if not force and st.is_ready and st.last_applied_revision == artifact.revision \
                and st.observed_generation == generation:
            return Outcome(st, spec.interval)
        try:
            folder = resolve_inside(artifact.path, str(spec.project_path), what="projectPath",
                                    revision=artifact.revision)
            self._link_state(obj, folder)
            project = load_project(folder)
        except FormwrightError as err:
            st.last_attempted_revision = artifact.revision
            return self._not_ready(st, obj, "ArtifactFailed", str(err))
        target = self._project_target(project)
        st.last_attempted_revision = artifact.revision
        try:
            stacks = prepare_stacks(project, target=target, macros_dir=self.macros_dir)
            group = StackGroup(project, stacks, target, max_concurrency=4, counter=self.counter)
        except FormwrightError as err:
            return self._not_ready(st, obj, "ArtifactFailed", str(err))
        # what deletion will delete: this revision's project, kept before anything of it is applied
        self._keep_project(obj.key, artifact, str(spec.project_path))
        results = group.deploy()
        failed = [r for r in results.values() if not r.ok]
        summary = ", ".join(f"{n} {r.outcome}" for n, r in sorted(results.items()))
        if failed:
            return self._change_set_failed(st, obj, "; ".join(r.error or r.name for r in failed))
        st.failures, st.phase = 0, ""
        st.observed_generation = generation
        st.last_applied_revision = artifact.revision
        st.set_ready(TRUE, "Succeeded", f"Applied revision: {artifact.revision} ({summary})")
        applied = any(r.outcome in ("created", "updated") for r in results.values())
        return Outcome(st, spec.interval, applied=applied)

    def _project_target(self, project: Any) -> Any:
        """The reconciler's target, in the project's own region when it names one."""
        target = self.target
        if project.region and project.region != target.region:
            target = type(target)(target.kind, project.region, target.endpoint)
        return target

    def _project_state(self, key: str) -> Path:
        """The project's `.formwright/` (applied cache, build, generated secrets), kept across revisions."""
        return self.state_dir / "projects" / _safe(key)

    def _project_snapshot(self, key: str) -> Path:
        """A copy of the checkout last deployed for `key`: what deletion deletes once the object is gone."""
        return self.state_dir / "project-snapshots" / _safe(key)

    def _link_state(self, obj: StackObject, folder: Path) -> None:
        """The project's `.formwright/` points at a folder kept across revisions (its applied cache)."""
        _link(folder, self._project_state(obj.key))

    def _keep_project(self, key: str, artifact: Artifact, project_path: str) -> None:
        """Copy this revision's checkout aside (once per revision) for deletion to load later."""
        snapshot = self._project_snapshot(key)
        meta = snapshot / "snapshot.json"
        try:
            if json.loads(meta.read_text())["revision"] == artifact.revision:
                return
        except (OSError, ValueError, KeyError):
            pass
        tmp = snapshot.with_name(snapshot.name + ".tmp")
        shutil.rmtree(tmp, ignore_errors=True)
        tmp.mkdir(parents=True)
        shutil.copytree(artifact.path, tmp / "checkout", symlinks=True,
                        ignore=shutil.ignore_patterns(".formwright"))
        (tmp / "snapshot.json").write_text(json.dumps({"revision": artifact.revision,
                                                       "projectPath": project_path}))
        old = snapshot.with_name(snapshot.name + ".old")
        shutil.rmtree(old, ignore_errors=True)
        if snapshot.exists():
            snapshot.rename(old)
        tmp.rename(snapshot)
        shutil.rmtree(old, ignore_errors=True)

    def delete_project(self, key: str, project_path: str, destroy: bool, status: Status, *,
                       artifact: Artifact | None = None) -> Outcome:
        """A projectPath object is gone: with `destroy`, delete its project's stacks through
        StackGroup.delete() (reverse dependency order), from the copy of the revision last deployed;
        else leave them.

        `artifact` (the source's current checkout) is used only when no copy was kept (say, state lost).
        Blocks until the stacks are deleted, as the project's deploy does. requeue None = finished.
        """
        from formwright.engine.group import StackGroup
        from formwright.engine.stack import prepare_stacks
        from formwright.model.project import load_project

        st = Status.from_json(status.to_json())
        snapshot = self._project_snapshot(key)
        if not destroy:
            self._forget_project(key)
            return Outcome(st, None)
        try:
            meta = json.loads((snapshot / "snapshot.json").read_text())
            root, project_path, revision = (
                snapshot / "checkout",
                str(meta.get("projectPath") or project_path),
                str(meta.get("revision", "")),
            )
        except (OSError, ValueError):
            if artifact is None:
                if not st.last_applied_revision and st.phase != "deleting":
                    # no copy is kept before the first deploy starts: nothing of it reached the cloud
                    st.set_ready(TRUE, "Succeeded", "nothing was deployed")
                    return Outcome(st, None)
                st.failures += 1
                st.set_ready(FALSE, "ArtifactFailed", f"cannot delete the stacks of {key}: the project "
                             f"deployed at {st.last_applied_revision or st.last_attempted_revision} was not "
                             "kept here and its source is unavailable")
                return Outcome(st, backoff(st.failures, 1.0, 60.0))
            root, revision = artifact.path, artifact.revision
        st.phase = "deleting"
        self.save_status(key, st)
        try:
            with confined(Sandbox(root)):
                folder = resolve_inside(root, project_path, what="projectPath", revision=revision)
                _link(folder, self._project_state(key))
                project = load_project(folder)
                target = self._project_target(project)
                stacks = prepare_stacks(project, target=target, macros_dir=self.macros_dir)
                group = StackGroup(project, stacks, target, max_concurrency=4, counter=self.counter)
                results = group.delete()
        except FormwrightError as err:
            st.failures += 1
            st.set_ready(FALSE, "ArtifactFailed", f"cannot delete the stacks of {key}: {err}")
            return Outcome(st, backoff(st.failures, 1.0, 60.0))
        except (ClientError, BotoCoreError, ResponseParserError) as err:
            st.failures += 1
            st.set_ready(FALSE, "CloudFormationApiCallFailed", str(translate(err)))
            return Outcome(st, backoff(st.failures, 1.0, 60.0))
        failed = [r for r in results.values() if not r.ok]
        if failed:
            st.failures += 1
            st.set_ready(FALSE, "CloudFormationApiCallFailed",
                         "; ".join(r.error or f"{r.name} {r.outcome}" for r in failed))
            return Outcome(st, backoff(st.failures, 1.0, 60.0))
        st.phase = ""
        summary = ", ".join(f"{r.stack_name} {r.outcome}" for _, r in sorted(results.items()))
        st.set_ready(TRUE, "Succeeded", f"stacks deleted: {summary}")
        self._forget_project(key)
        return Outcome(st, None)

    def has_project_snapshot(self, key: str) -> bool:
        """True when a copy of the project last deployed for `key` is kept."""
        return (self._project_snapshot(key) / "snapshot.json").is_file()

    def _forget_project(self, key: str) -> None:
        """Drop what was kept for a deleted projectPath object."""
        shutil.rmtree(self._project_snapshot(key), ignore_errors=True)
        shutil.rmtree(self._project_state(key), ignore_errors=True)


def _safe(key: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", key)


def _link(folder: Path, keep: Path) -> None:
    """`folder/.formwright` as a symlink to `keep`."""
    keep.mkdir(parents=True, exist_ok=True)
    link = folder / ".formwright"
    if link.is_symlink() or not link.exists():
        link.unlink(missing_ok=True)
        link.symlink_to(keep, target_is_directory=True)


def _dependency_ready(status: Status | None) -> bool:
    """A dependency is ready when Ready=True and it is not in the middle of applying a new revision."""
    return status is not None and status.is_ready and not status.phase and \
        status.last_applied_revision == status.last_attempted_revision


def _unsupported(err: Exception) -> bool:
    """True when the target does not implement the call (moto answers HTTP 500 or NotImplemented)."""
    if isinstance(err, ClientError):
        return error_code(err) in ("NotImplemented", "InternalFailure", "InternalError", "501", "500",
                                   "UnknownOperationException", "InvalidAction")
    return (
        "Internal Server Error" in str(err) or "invalid XML" in str(err) or "not yet implemented" in str(err)
    )
