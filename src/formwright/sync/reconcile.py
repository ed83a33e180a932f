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

The steps live in modules with one job each, joined here: `naming` (tags, change set names),
`passes` (Outcome, events, Ready=False), `stack_status` (the branches per stack status),
`change_sets`, `templates` (the desired template), `drift`, `inventory` (the shared listing) and
`project_sync` (projectPath objects).
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError
from botocore.parsers import ResponseParserError

from formwright.cloud.errors import translate
from formwright.engine.cfn import CallCounter, CloudFormation, StackInfo
from formwright.engine.results import no_progress
from formwright.engine.runner import StackRunner
from formwright.errors import FormwrightError
from formwright.sandbox import Sandbox, confined
from formwright.sync import messages as say
from formwright.sync.change_sets import ChangeSetSteps
from formwright.sync.inventory import StackInventory
from formwright.sync.messages import IN_PROGRESS, SUCCEEDED
from formwright.sync.naming import change_set_name, source_ref
from formwright.sync.objects import STACK_API_GROUP, STACK_PLURAL, GitRepository, StackObject
from formwright.sync.passes import NORMAL, WARNING, CallFailed, Outcome, calling
from formwright.sync.project_sync import ProjectSteps
from formwright.sync.source import Artifact, Sources
from formwright.sync.stack_status import APPLIED
from formwright.sync.status_store import FALSE, TRUE, UNKNOWN, Event, Status
from formwright.sync.templates import Desired, Named

DEPENDENCY_REQUEUE = 30.0
#: A dependsOn object's generation (None: not known) and status by `namespace/name`; None: no such object
ReadyOf = Callable[[str], "tuple[int | None, Status] | None"]


class Reconciler(ChangeSetSteps, ProjectSteps):
    """Reconciles CloudFormationStack objects against one target; thread-safe, holds no per-object state."""

    def __init__(self, target: Any, sources: Sources, *, state_dir: Path,
                 save: Callable[[str, Status], None] = lambda key, status: None,
                 counter: CallCounter | None = None, drift: bool = True,
                 dependency_requeue: float = DEPENDENCY_REQUEUE, cfn: CloudFormation | None = None,
                 list_stacks: bool = False, macros_dir: Path | None = None,
                 stack_tags: dict[str, str] | None = None, template_bucket: str | None = None,
                 no_cross_namespace_refs: bool = False,
                 observed: Callable[[str, Status], None] = lambda key, status: None) -> None:
        self.target = target
        #: shown the status of a newly seen generation (Ready=Unknown), which the controller patches at once
        self.observed = observed
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
        self._runner = StackRunner(Named("formwright-sync", target.region), target, self.cfn,  # type: ignore[arg-type]
                                   None, no_progress)  # type: ignore[arg-type]
        self._drift_supported: bool | None = None
        self._probe_cfn: CloudFormation | None = None
        self._desired: OrderedDict[tuple, Desired] = OrderedDict()
        self._desired_lock = threading.Lock()

    # ---- entry points -------------------------------------------------------------------------
    def reconcile(self, obj: StackObject, generation: int, status: Status, *, suspended: bool = False,
                  repository: GitRepository | None = None,
                  ready_of: ReadyOf = lambda key: None,
                  artifact: Artifact | None = None, force_fetch: bool = False,
                  requested_at: str = "", source_problem: str = "") -> Outcome:
        """One pass over `obj`; never raises for cloud, source or template errors.

        `ready_of` gives each dependsOn object's generation and status. `requested_at` is the object's
        reconcile.fluxcd.io/requestedAt (recorded as
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
                   ready_of: ReadyOf, artifact: Artifact | None, force_fetch: bool,
                   requested_at: str, source_problem: str) -> Outcome:
        spec = obj.spec
        if requested_at:
            st.last_handled_reconcile_at = requested_at
        st.stack_name = str(spec.stack_name or "")
        if st.observed_generation != generation:
            st.observed_generation = generation
            st.set_ready(UNKNOWN, "Progressing", IN_PROGRESS)
            self.save_status(obj.key, st)
            self.observed(obj.key, st)
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
            problems = (_dependency_problem(dep, ready_of(dep)) for dep in obj.dependencies)
            waiting = next((why for why in problems if why), None)
            if waiting:
                msg = f"Dependencies do not meet ready condition ({waiting})"
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
        except CallFailed as failed:
            return self._api_failed(st, obj, failed)
        except (ClientError, BotoCoreError, ResponseParserError) as err:  # a call no step labelled
            detail = str(translate(err, where=spec.stack_name))
            return self._api_failed(st, obj, CallFailed(detail, detail))
        except FormwrightError as err:
            return self._api_failed(st, obj, CallFailed(str(err), str(err)))

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
            with calling(say.describe_stack_failed(stack_name), stack_name):
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
            with calling(say.delete_stack_failed(stack_name), stack_name):
                self.cfn.call("delete_stack", StackName=info.stack_id)
            message = f"Started deletion of stack '{stack_name}'"
            self._event(NORMAL, message, revision)
            with calling(say.describe_stack_failed(stack_name), stack_name):
                after = self.cfn.describe(info.stack_id)
            if after is None:
                st.set_ready(TRUE, "Succeeded", SUCCEEDED)
                return Outcome(st, None)
            st.set_ready(UNKNOWN, "Progressing", message)
            return Outcome(st, poll_interval)
        except CallFailed as failed:  # reconcileDelete: the error in the event, the call's text in Ready
            self._event(WARNING, say.reconcile_failed(failed.detail), revision)
            st.failures += 1
            st.set_ready(FALSE, failed.reason, failed.message)
            return Outcome(st, retry_interval)

    # ---- one template -------------------------------------------------------------------------
    def _reconcile_template(self, obj: StackObject, generation: int, st: Status, artifact: Artifact,
                            desired: Desired) -> Outcome:
        spec = obj.spec
        stack_name = str(spec.stack_name)
        revision = artifact.revision
        name = change_set_name(generation, revision) + (f"-c{st.correction}" if st.correction else "")
        name = name[:128]
        st.last_attempted_revision = revision  # reconcileStack's every branch records it (SourceRevision)
        with calling(say.describe_stack_failed(stack_name), stack_name):
            info = self._current(stack_name, st, desired, obj)
        if info is not None and info.in_progress:
            st.set_ready(UNKNOWN, "Progressing", say.stack_in_progress(stack_name, info.status))
            return Outcome(st, spec.poll_interval)
        if st.phase == "executing":
            if st.change_set_name == name:
                return self._after_execute(obj, generation, st, artifact, desired, info)
            # the change set of an earlier generation or revision has run: the controller goes on to the
            # current one (reconcileStack: the desired name differs) and never reports the earlier one
            # applied, so neither is it recorded here as this revision's
            st.phase, st.applied_digest = "", ""
        if info is not None and info.status not in APPLIED and info.status != "REVIEW_IN_PROGRESS":
            failed = self._failed_stack(obj, st, info, revision)
            if failed is not None:
                return failed
        if info is not None and info.status in APPLIED and st.applied_digest == desired.digest \
                and st.stack_id == info.stack_id:
            return self._up_to_date(obj, generation, st, revision, info)
        if st.change_set_name == name and info is not None:
            # reconcileStack: the desired change set is the last attempted one: described (by its ARN) and
            # taken from where it is (an executed one is Ready, a deleted one is made again), not made anew.
            # A stack that is gone took its change sets with it.
            return self._advance(obj, generation, st, artifact, desired, info, name)
        return self._create(obj, generation, st, artifact, desired, info, name)

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


def _dependency_problem(key: str, found: tuple[int | None, Status] | None) -> str | None:
    """Why the dependency `key` (its generation and status, None when there is no such object) is not ready,
    in the controller's words (checkDependencies); None when it is ready: Ready=True for its current
    generation, and (formwright) not in the middle of applying a new revision."""
    if found is None:
        name = key.split("/", 1)[-1]
        return f"unable to get '{key}' dependency: {STACK_PLURAL}.{STACK_API_GROUP} \"{name}\" not found"
    generation, status = found
    current = generation is None or generation == status.observed_generation
    settled = not status.phase and status.last_applied_revision == status.last_attempted_revision
    return None if current and status.is_ready and settled else f"dependency '{key}' is not ready"
