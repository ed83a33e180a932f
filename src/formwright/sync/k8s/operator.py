"""A kopf operator for `CloudFormationStack` objects, running the same reconcile loop as `sync run`.

Handlers: create / update / resume reconcile at once, and so does a new value of the
`reconcile.fluxcd.io/requestedAt` annotation (recorded as `status.lastHandledReconcileAt`) or a new
artifact revision of the source (GitRepository, Bucket, OCIRepository), as the Flux controller's
watches do; a timer per object runs the next pass when it is due (its interval, pollInterval while in
progress, retryInterval after errors); delete (behind the controller's own finalizer
`finalizers.cloudformation.contrib.fluxcd.io`, so objects move between the two) destroys the stack only
with `destroyStackOnDeletion` and never for a suspended object. Status goes to the object's `.status`
in the Flux controller's shape and each pass's events become Kubernetes events annotated with the revision
(k8s/events.py). A wake-up that arrives during a pass runs the object again at the next tick. Sources: a Flux
source-controller artifact (`status.artifact.url` + `digest`, verified) when the source has one; a
GitRepository without one is cloned from `spec.url` by formwright itself. The status store in
FORMWRIGHT_SYNC_STATE (an emptyDir) holds the
write-ahead phase between passes; `.status` seeds it after a restart.

Run: `kopf run -m formwright.sync.k8s.operator --all-namespaces` (see deploy/k8s/README.md).
"""

from __future__ import annotations

import asyncio
import contextvars
import os
import random
import threading
import time
from collections.abc import Mapping
from concurrent.futures import Executor
from pathlib import Path
from typing import Any

import kopf

from formwright.errors import FormwrightError
from formwright.sync.k8s import events, kopf_api, permissions
from formwright.sync.naming import source_ref
from formwright.sync.objects import (
    STACK_API_GROUP,
    STACK_PLURAL,
    STACK_VERSION,
    GitRepository,
    StackObject,
    parse_document,
)
from formwright.sync.passes import Outcome
from formwright.sync.reconcile import Reconciler
from formwright.sync.source import Artifact, Sources, fetch_artifact
from formwright.sync.status_store import FALSE, Status, StatusStore

VERSION = STACK_VERSION
PLURAL = STACK_PLURAL
SOURCE_GROUP, SOURCE_VERSION, SOURCE_PLURAL = "source.toolkit.fluxcd.io", "v1", "gitrepositories"
# The controller watches Bucket and OCIRepository in source.toolkit.fluxcd.io/v1beta2
SOURCE_BETA = "v1beta2"
BUCKET_PLURAL, OCI_PLURAL = "buckets", "ocirepositories"
# The controller's finalizer (api/v1alpha1): objects the Flux controller left are adopted as they are
FINALIZER = "finalizers.cloudformation.contrib.fluxcd.io"
OLD_FINALIZER = f"{STACK_API_GROUP}/finalizer"  # formwright's before; dropped when seen
REQUESTED_AT = "reconcile.fluxcd.io/requestedAt"
TICK = float(os.environ.get("FORMWRIGHT_SYNC_TICK", "1"))
#: the thread pool of kopf's synchronous handlers (set at start-up; None, the loop's default, before it)
EXECUTOR: Executor | None = None


def plain(value: Any) -> Any:
    """kopf's read-only views as ordinary dicts and lists."""
    if isinstance(value, Mapping):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


def _artifact_revision(obj: StackObject, git_repositories: Any, buckets: Any, oci_repositories: Any) -> str:
    """The revision of the artifact the source-controller published for `obj`'s source ("" when none)."""
    index = {"GitRepository": git_repositories, "Bucket": buckets,
             "OCIRepository": oci_repositories}[obj.spec.source_ref.kind]
    entry = _first(index, tuple(obj.source_key.split("/", 1))) or {}  # type: ignore[arg-type]
    return str(((entry.get("status") or {}).get("artifact") or {}).get("revision") or "")


def _first(index: Any, key: tuple[str, str]) -> Any:
    """The first value a kopf index holds for `key` (None when it has none)."""
    if index is None:
        return None
    values = index.get(key)  # Mapping.get: a key gone between check and read is None too
    return next(iter(values), None) if values is not None else None


class Operator:
    """The shared reconciler, sources and write-ahead store; the handlers call into it."""

    def __init__(self, target: Any, state_dir: Path, *, drift: bool = True, **options: Any) -> None:
        self.state_dir = state_dir
        self.store = StatusStore(state_dir)
        self.sources = Sources(state_dir / "sources")
        self.reconciler = Reconciler(
            target, self.sources, state_dir=state_dir, save=self.store.save, drift=drift,
            observed=self._observed, **options
        )
        #: which objects use which source (`Kind/namespace/name`), for the source watches
        self.users: dict[str, set[str]] = {}
        self.next_run: dict[str, float] = {}
        #: when each object was last woken by its source (monotonic): a wake during a pass is not lost
        self.woken: dict[str, float] = {}
        self._started: dict[str, float] = {}  # when each object's last pass began (monotonic)
        self._locks: dict[str, threading.Lock] = {}
        self._guard = threading.Lock()

    def _lock(self, key: str) -> threading.Lock:
        with self._guard:
            return self._locks.setdefault(key, threading.Lock())

    # ---- inputs -------------------------------------------------------------------------------
    @staticmethod
    def parse(body: Mapping) -> StackObject:
        """The object from its body; an invalid spec is a permanent error with the field named."""
        try:
            obj = parse_document(plain(body), file=None)
        except FormwrightError as err:
            raise kopf.PermanentError(str(err)) from None
        if not isinstance(obj, StackObject):
            kind = f"{body.get('apiVersion')} {body.get('kind')}"
            raise kopf.PermanentError(f"not a CloudFormationStack: {kind}")
        return obj

    def source(self, obj: StackObject, git_repositories: Any, buckets: Any = None,
               oci_repositories: Any = None) -> tuple[GitRepository | None, Artifact | None, str]:
        """The GitRepository, the source-controller's artifact when it published one (digest checked), and
        why there is none (the controller's ArtifactFailed messages; "" when a clone will do)."""
        namespace, name = obj.source_key.split("/", 1)
        kind = obj.spec.source_ref.kind
        indices = {"GitRepository": git_repositories, "Bucket": buckets, "OCIRepository": oci_repositories}
        index = indices[kind]
        self.users.setdefault(f"{kind}/{obj.source_key}", set()).add(obj.key)
        entry = _first(index, (namespace, name))
        if entry is None:
            return None, None, f"Source '{source_ref(obj)}' not found"
        artifact = (entry.get("status") or {}).get("artifact") or {}
        if artifact.get("url") and artifact.get("digest"):
            return None, fetch_artifact(obj.source_key, artifact["url"], artifact["digest"],
                                        artifact.get("revision", ""), self.sources.root), ""
        if kind != "GitRepository":
            return None, None, f"Source '{source_ref(obj)}' is not ready, artifact not found"
        document = {"apiVersion": f"{SOURCE_GROUP}/{SOURCE_VERSION}", "kind": "GitRepository",
                    "metadata": {"name": name, "namespace": namespace}, "spec": entry.get("spec") or {}}
        repo = parse_document(document)
        assert isinstance(repo, GitRepository)
        return repo, None, ""

    def _record(self, obj: StackObject, status: Mapping | None) -> Any:
        """The write-ahead record, seeded from `.status` when this pod has not seen the object yet."""
        fresh = self.store.get(obj.key) is None
        record = self.store.observe(obj)
        if fresh and status:
            record.status = Status.from_k8s(plain(status))
            self.store.save(obj.key, record.status)
        return record

    # ---- passes -------------------------------------------------------------------------------
    def reconcile(self, body: Mapping, patch: Any, git_repositories: Any = None,
                  cloudformation_stacks: Any = None, buckets: Any = None,
                  oci_repositories: Any = None) -> float | None:
        """One pass; the status goes into `patch.status`; returns the delay to the next pass."""
        obj = self.parse(body)
        annotations = (body.get("metadata") or {}).get("annotations") or {}
        with self._lock(obj.key):
            started = time.monotonic()
            # woken by a new revision since the last pass began: clone now, not after the GitRepository's
            # interval (the controller reads the artifact source-controller just published)
            woken = self.woken.get(obj.key)
            fetch_now = woken is not None and woken >= self._started.get(obj.key, float("-inf"))
            self._started[obj.key] = started
            record = self._record(obj, body.get("status"))
            try:
                repository, artifact, problem = self.source(obj, git_repositories, buckets, oci_repositories)
            except FormwrightError as err:  # the artifact could not be downloaded, verified or unpacked
                st = record.status
                published = _artifact_revision(obj, git_repositories, buckets, oci_repositories)
                st.last_attempted_revision = published or st.last_attempted_revision
                st.set_ready(FALSE, "ArtifactFailed", f"Failed to load template '{obj.template_path}' from "
                             f"source '{source_ref(obj)}': {err}")
                self._write(obj.key, st, obj.retry_interval, patch, started)
                return obj.retry_interval

            def ready_of(key: str) -> tuple[int | None, Status] | None:
                namespace, name = key.split("/", 1)
                found = _first(cloudformation_stacks, (namespace, name))
                if found is None:
                    return None
                return found.get("generation"), Status.from_k8s(found.get("status"))

            outcome = self.reconciler.reconcile(
                obj,
                record.generation,
                record.status,
                suspended=obj.spec.suspend,
                repository=repository,
                artifact=artifact,
                ready_of=ready_of,
                requested_at=str(annotations.get(REQUESTED_AT) or ""),
                source_problem=problem,
                force_fetch=fetch_now,
            )
            self._write(obj.key, outcome.status, outcome.requeue, patch, started)
            post_events(body, outcome)
            return outcome.requeue

    def wake_users(self, kind: str, namespace: str, name: str, revision: str) -> list[str]:
        """A source's artifact moved to `revision`: its objects that have not attempted it run now."""
        woken = []
        for key in sorted(self.users.get(f"{kind}/{namespace}/{name}", ())):
            record = self.store.get(key)
            if record is not None and record.status.last_attempted_revision == revision:
                continue
            self.next_run[key] = 0.0
            self.woken[key] = time.monotonic()
            woken.append(key)
        return woken

    @staticmethod
    def _observed(key: str, st: Status) -> None:
        """A new generation: its Ready=Unknown "Stack reconciliation in progress" goes to `.status` now, as
        the controller patches it before the pass goes on (kopf writes a handler's patch at its end)."""
        namespace, name = key.split("/", 1)
        kopf_api.patch_status(namespace, name, st.to_k8s())

    def _write(self, key: str, st: Status, requeue: float | None, patch: Any, started: float) -> None:
        st.next_run = time.time() + requeue if requeue is not None else None
        self.store.save(key, st)
        if self.woken.get(key, float("-inf")) >= started:
            self.next_run[key] = 0.0  # its source moved while this pass ran: run again at the next tick
        elif requeue is None:
            self.next_run[key] = float("inf")  # suspended: the update handler wakes it
        else:
            self.next_run[key] = time.monotonic() + requeue
        for field, value in st.to_k8s().items():
            patch.status[field] = value

    def due(self, key: str) -> bool:
        """True when the object's next pass is due (or was never planned in this process)."""
        when = self.next_run.get(key)
        return when is None or time.monotonic() >= when

    def delete(self, body: Mapping, patch: Any, git_repositories: Any = None) -> None:
        """Destroy the stack (or a projectPath's stacks) when asked to, never for a suspended object (as the
        controller); TemporaryError while under way."""
        obj = self.parse(body)
        record = self.store.get(obj.key)
        status = record.status if record else Status.from_k8s(plain(body.get("status") or {}))
        destroy = obj.spec.destroy_stack_on_deletion and not obj.spec.suspend
        if obj.spec.project_path is not None:
            outcome = self.reconciler.delete_project(obj.key, obj.spec.project_path, destroy, status,
                                                     artifact=self._fallback_artifact(obj, git_repositories))
        else:
            outcome = self.reconciler.delete(obj.key, str(obj.spec.stack_name or ""), destroy, status,
                                             poll_interval=obj.spec.poll_interval,
                                             retry_interval=obj.retry_interval)
        post_events(body, outcome)
        if outcome.requeue is not None:
            for field, value in outcome.status.to_k8s().items():
                patch.status[field] = value
            raise kopf.TemporaryError(outcome.status.message, delay=outcome.requeue)
        self.store.forget(obj.key)
        self.next_run.pop(obj.key, None)

    def _fallback_artifact(self, obj: StackObject, git_repositories: Any) -> Artifact | None:
        """The source's current checkout, for deleting a project whose deployed copy this pod lost
        (the state is an emptyDir); None when a copy is kept or the source cannot be had."""
        if obj.spec.project_path is None or not obj.spec.destroy_stack_on_deletion \
                or self.reconciler.has_project_snapshot(obj.key):
            return None
        try:
            repository, artifact, _ = self.source(obj, git_repositories)
            if artifact is None and repository is not None:
                artifact, _ = self.sources.get(repository)
        except FormwrightError:
            return None
        return artifact


def post_events(body: Mapping, outcome: Outcome) -> None:
    """The pass's events as Kubernetes events on the object, annotated with the revision (k8s/events.py)."""
    if outcome.events:
        events.post_events(plain(body), outcome.events)


OPERATOR: Operator | None = None


def operator() -> Operator:
    """The process's Operator, made on first use from the environment."""
    global OPERATOR
    if OPERATOR is None:
        from formwright.cloud.session import resolve_target

        state = Path(os.environ.get("FORMWRIGHT_SYNC_STATE", "/var/lib/formwright-sync"))
        drift = os.environ.get("FORMWRIGHT_SYNC_DRIFT", "true").lower() != "false"
        tags = dict(pair.split("=", 1) for pair in os.environ.get("FORMWRIGHT_SYNC_STACK_TAGS", "").split(",")
                    if "=" in pair)
        macros = os.environ.get("FORMWRIGHT_SYNC_MACROS")
        OPERATOR = Operator(resolve_target(os.environ.get("FORMWRIGHT_TARGET", "aws")), state, drift=drift,
                            template_bucket=os.environ.get("TEMPLATE_BUCKET") or None, stack_tags=tags,
                            macros_dir=Path(macros) if macros else None,
                            no_cross_namespace_refs=os.environ.get("FORMWRIGHT_SYNC_NO_CROSS_NAMESPACE_REFS",
                                                                   "").lower() == "true")
    return OPERATOR


# ---- kopf handlers ------------------------------------------------------------------------------
@kopf.on.startup()
def configure(settings: kopf.OperatorSettings, **_: Any) -> None:
    """Our finalizer name; peering so that one replica per shard acts (the oldest: see `peering_priority`);
    the shard's label selector; and the permissions checked before anything is watched."""
    global EXECUTOR
    settings.persistence.finalizer = FINALIZER
    EXECUTOR = settings.execution.executor
    if os.environ.get("FORMWRIGHT_SYNC_PEERING"):
        settings.peering.name = os.environ["FORMWRIGHT_SYNC_PEERING"]
    elif settings.peering.name == "default":
        settings.peering.name = "formwright-sync"
    settings.peering.mandatory = False
    settings.peering.priority = peering_priority()
    if os.environ.get("FORMWRIGHT_SYNC_PEERING_LIFETIME"):
        settings.peering.lifetime = int(os.environ["FORMWRIGHT_SYNC_PEERING_LIFETIME"])
    if os.environ.get("FORMWRIGHT_SYNC_WATCH_TIMEOUT"):
        # the server ends each watch after this many seconds and kopf resumes it from the last resourceVersion
        # (a 410 Gone, when that version was compacted meanwhile, makes kopf list again)
        settings.watching.server_timeout = int(os.environ["FORMWRIGHT_SYNC_WATCH_TIMEOUT"])
    selector = os.environ.get("FORMWRIGHT_SYNC_LABEL_SELECTOR", "").strip()
    if selector:
        # server-side filtering (labelSelector on the list and the watch): this shard never sees the others
        settings.watching.label_selectors[STACK_API_GROUP, PLURAL] = selector
    if os.environ.get("FORMWRIGHT_SYNC_CHECK_PERMISSIONS", "true").lower() != "false":
        try:
            conn = permissions.connection(settings)
            permissions.ensure_peering(conn, settings.peering.name, permissions.check(conn))
        except PermissionError as err:
            raise kopf.PermanentError(str(err)) from None
        settings.peering.mandatory = True
    operator()


def peering_priority(now: float | None = None) -> int:
    """A replica's kopf peering priority: higher for a replica started earlier, so the one already acting
    keeps acting when another (re)starts, and a tie (the same second) is broken at random. kopf pauses every
    replica that sees a peer of higher or equal priority, so equal priorities would pause them all."""
    started = int(time.time() if now is None else now)
    return (2**31 - started) * 1000 + random.randrange(1000)  # noqa: S311 - a tie-breaker, not a secret


def _source_entry(namespace: str | None, name: str, spec: Mapping, status: Mapping) -> dict:
    return {(namespace, name): {"spec": plain(spec), "status": plain(status or {})}}


@kopf.index(SOURCE_GROUP, SOURCE_VERSION, SOURCE_PLURAL)
def git_repositories(namespace: str | None, name: str, spec: Mapping, status: Mapping, **_: Any) -> dict:
    """GitRepositories by (namespace, name): their spec and the source-controller's artifact."""
    return _source_entry(namespace, name, spec, status)


@kopf.index(SOURCE_GROUP, SOURCE_BETA, BUCKET_PLURAL)
def buckets(namespace: str | None, name: str, spec: Mapping, status: Mapping, **_: Any) -> dict:
    """Flux Buckets by (namespace, name): the source-controller's artifact."""
    return _source_entry(namespace, name, spec, status)


@kopf.index(SOURCE_GROUP, SOURCE_BETA, OCI_PLURAL)
def oci_repositories(namespace: str | None, name: str, spec: Mapping, status: Mapping, **_: Any) -> dict:
    """Flux OCIRepositories by (namespace, name): the source-controller's artifact."""
    return _source_entry(namespace, name, spec, status)


@kopf.index(STACK_API_GROUP, VERSION, PLURAL)
def cloudformation_stacks(namespace: str | None, name: str, meta: Mapping, status: Mapping, **_: Any) -> dict:
    """CloudFormationStacks' generation and status by (namespace, name), for dependsOn."""
    return {(namespace, name): {"generation": meta.get("generation"), "status": plain(status or {})}}


def _pass(body: Mapping, patch: Any, indices: dict[str, Any]) -> None:
    operator().reconcile(body, patch, indices.get("git_repositories"), indices.get("cloudformation_stacks"),
                         indices.get("buckets"), indices.get("oci_repositories"))


@kopf.on.resume(STACK_API_GROUP, VERSION, PLURAL)
@kopf.on.create(STACK_API_GROUP, VERSION, PLURAL)
@kopf.on.update(STACK_API_GROUP, VERSION, PLURAL, field="spec")
@kopf.on.update(STACK_API_GROUP, VERSION, PLURAL, field=("metadata", "annotations", REQUESTED_AT))
def apply(body: Mapping, patch: Any, **kwargs: Any) -> None:
    """Created, changed, asked for (`reconcile.fluxcd.io/requestedAt`) or found after a restart:
    reconcile now."""
    finalizers = list((body.get("metadata") or {}).get("finalizers") or [])
    if OLD_FINALIZER in finalizers:  # formwright's old name: nothing would remove it any more
        patch.metadata["finalizers"] = [f for f in finalizers if f != OLD_FINALIZER] + \
            ([FINALIZER] if FINALIZER not in finalizers else [])
    _pass(body, patch, kwargs)


@kopf.timer(STACK_API_GROUP, VERSION, PLURAL, interval=TICK, initial_delay=TICK)
async def tick(body: Mapping, meta: Mapping, patch: Any, **kwargs: Any) -> None:
    """The object's timer: run the next pass when it is due. Asynchronous, so the check of every object
    each second stays on the event loop; only a due pass goes to a worker thread (a synchronous timer
    would hand each of 1,000 objects' ticks to kopf's thread pool every second)."""
    key = f"{meta.get('namespace', 'default')}/{meta.get('name')}"
    if operator().due(key):
        # in kopf's own thread pool, as its synchronous handlers run (no second pool of threads)
        context = contextvars.copy_context()
        await asyncio.get_running_loop().run_in_executor(EXECUTOR, context.run, _pass, body, patch, kwargs)


def _revision_seen(kind: str, namespace: str | None, name: str, body: Mapping, logger: Any) -> None:
    """The controller's source watches: objects using this source that have not attempted its artifact
    revision run at their next tick. An event watcher, so kopf puts no finalizer on users' sources."""
    revision = ((body.get("status") or {}).get("artifact") or {}).get("revision")
    if revision:
        woken = operator().wake_users(kind, namespace or "default", name, str(revision))
        if woken:
            logger.info(f"{kind} {namespace}/{name} is at {revision}: reconciling {', '.join(woken)}")


@kopf.on.event(SOURCE_GROUP, SOURCE_VERSION, SOURCE_PLURAL)
def git_revision(body: Mapping, namespace: str | None, name: str, logger: Any, **_: Any) -> None:
    """A GitRepository changed."""
    _revision_seen("GitRepository", namespace, name, body, logger)


@kopf.on.event(SOURCE_GROUP, SOURCE_BETA, BUCKET_PLURAL)
def bucket_revision(body: Mapping, namespace: str | None, name: str, logger: Any, **_: Any) -> None:
    """A Bucket changed."""
    _revision_seen("Bucket", namespace, name, body, logger)


@kopf.on.event(SOURCE_GROUP, SOURCE_BETA, OCI_PLURAL)
def oci_revision(body: Mapping, namespace: str | None, name: str, logger: Any, **_: Any) -> None:
    """An OCIRepository changed."""
    _revision_seen("OCIRepository", namespace, name, body, logger)


@kopf.on.delete(STACK_API_GROUP, VERSION, PLURAL)
def delete(body: Mapping, patch: Any, git_repositories: Any = None, **_: Any) -> None:
    """The object is being deleted: destroy its stack (or project's stacks) only with destroyStackOnDeletion
    and not when suspended."""
    operator().delete(body, patch, git_repositories)
