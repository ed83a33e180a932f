"""The sync daemon: every object in a folder, reconciled on a schedule by a pool of workers.

One heap ordered by next-run time holds two kinds of task: `source` (fetch a GitRepository once per
its interval and, when the revision moved, wake every object that uses it) and `object` (one
reconcile pass). Workers sleep on a condition variable until the head of the heap is due; nothing
polls. The main thread re-reads the folder every `reload_interval` seconds (cheap: file sizes and
mtimes; a change is read once the files held still for SETTLE seconds and through the read, so a file
rewritten in place is never read half-written), takes the CLI's requests from the status store and is
woken early by SIGUSR1. SIGTERM and Ctrl-C stop it cleanly: workers finish the pass they are in, the
state is closed.
"""

from __future__ import annotations

import heapq
import itertools
import os
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from formwright.engine.cfn import CallCounter
from formwright.errors import FormwrightError
from formwright.state.lock import WriterLock
from formwright.sync.objects import ObjectSet, StackObject, load_objects, object_files
from formwright.sync.passes import Outcome
from formwright.sync.reconcile import DEPENDENCY_REQUEUE, Reconciler
from formwright.sync.source import Sources
from formwright.sync.status_store import Record, Status, StatusStore

SOURCE, OBJECT, DELETE = "source", "object", "delete"
SETTLE = 0.1  # seconds the folder's files must hold still before `reload` reads them
LIST_STACKS_FROM = 20  # objects; from here on the steady state shares one DescribeStacks listing


def sync_lock(state_dir: Path, what: str) -> WriterLock:
    """The writer lock of a sync state folder (held by a daemon or an in-process reconcile)."""
    return WriterLock(state_dir / "locks" / "sync.lock", what)


def default_state_dir(directory: Path) -> Path:
    """`<DIR>/.formwright/sync` (or next to the file when DIR is a file)."""
    base = directory if directory.is_dir() else directory.parent
    return base / ".formwright" / "sync"


@dataclass
class Stats:
    """Counters a benchmark or test can read."""

    passes: int = 0
    applied: int = 0
    passes_by_key: dict[str, int] = field(default_factory=dict)


class Daemon:
    """Reconciles the objects of one folder until stopped."""

    def __init__(self, directory: Path, target: Any, *, state_dir: Path | None = None, workers: int = 4,
                 drift: bool = True, dependency_requeue: float = DEPENDENCY_REQUEUE,
                 reload_interval: float = 2.0, list_stacks: bool | None = None,
                 counter: CallCounter | None = None, log: Callable[[str], None] = lambda line: None,
                 macros_dir: Path | None = None, stack_tags: dict[str, str] | None = None,
                 template_bucket: str | None = None, no_cross_namespace_refs: bool = False) -> None:
        if workers < 1:
            raise FormwrightError("--workers must be at least 1")
        self.directory = directory
        self._lock: WriterLock | None = None
        self.state_dir = state_dir or default_state_dir(directory)
        self.workers = workers
        self.reload_interval = reload_interval
        self.log = log
        self.objects = load_objects(directory)
        self.store = StatusStore(self.state_dir)
        self.sources = Sources(self.state_dir / "sources")
        if list_stacks is None:
            list_stacks = len(self.objects.stacks) >= LIST_STACKS_FROM
        self.reconciler = Reconciler(target, self.sources, state_dir=self.state_dir, save=self.store.save,
                                     counter=counter, drift=drift, dependency_requeue=dependency_requeue,
                                     list_stacks=list_stacks, macros_dir=macros_dir, stack_tags=stack_tags,
                                     template_bucket=template_bucket,
                                     no_cross_namespace_refs=no_cross_namespace_refs)
        self.stats = Stats()
        self._records: dict[str, Record] = self.store.all()
        self._heap: list[tuple[float, int, str, str]] = []
        self._due: dict[tuple[str, str], float] = {}
        self._seq = itertools.count()
        self._running: set[tuple[str, str]] = set()
        self._again: set[tuple[str, str]] = set()
        self._forced: dict[str, str] = {}  # key → the requestedAt token of `sync reconcile` (or "")
        self._cond = threading.Condition()
        self._stopping = threading.Event()
        self._wake = threading.Event()
        self._threads: list[threading.Thread] = []
        self._fingerprint = self._files_fingerprint()
        self._dependents = self._dependents_of(self.objects)
        self._deleted_keys: set[str] = set()
        self._pause: Callable[[float], None] = time.sleep  # the settle wait of `reload`

    # ---- scheduling ---------------------------------------------------------------------------
    def schedule(self, kind: str, key: str, delay: float = 0.0, *, earlier_only: bool = False) -> None:
        """Run (kind, key) after `delay` seconds; with `earlier_only` a sooner run already planned stays."""
        when = time.monotonic() + max(0.0, delay)
        with self._cond:
            current = self._due.get((kind, key))
            if earlier_only and current is not None and current <= when:
                return
            self._due[(kind, key)] = when
            heapq.heappush(self._heap, (when, next(self._seq), kind, key))
            self._cond.notify()

    def _next_task(self) -> tuple[str, str] | None:
        """Block until a task is due (or we stop); stale heap entries are skipped."""
        with self._cond:
            while not self._stopping.is_set():
                now = time.monotonic()
                while self._heap:
                    when, _, kind, key = self._heap[0]
                    if self._due.get((kind, key)) != when:
                        heapq.heappop(self._heap)  # superseded by a later schedule() call
                        continue
                    break
                if self._heap and self._heap[0][0] <= now:
                    _, _, kind, key = heapq.heappop(self._heap)
                    del self._due[(kind, key)]
                    if (kind, key) in self._running or (kind != SOURCE and self._running & {(OBJECT, key),
                                                                                            (DELETE, key)}):
                        # the pass under way runs once more when it ends; an object's deploy and its
                        # deletion never overlap (a projectPath deploy can take a worker for minutes)
                        self._again.add((kind, key))
                        continue
                    self._running.add((kind, key))
                    return kind, key
                self._cond.wait(self._heap[0][0] - now if self._heap else None)
        return None

    def _finished(self, kind: str, key: str) -> None:
        with self._cond:
            self._running.discard((kind, key))
            kinds = (kind,) if kind == SOURCE else (OBJECT, DELETE)
            again = [k for k in kinds if (k, key) in self._again]
            self._again.difference_update((k, key) for k in again)
        for k in again:
            self.schedule(k, key, earlier_only=True)

    def _worker(self) -> None:
        while True:
            task = self._next_task()
            if task is None:
                return
            kind, key = task
            try:
                if kind == SOURCE:
                    self._run_source(key)
                elif kind == OBJECT:
                    self._run_object(key)
                else:
                    self._run_delete(key)
            except Exception as err:  # noqa: BLE001 - a bug in one pass must not kill the worker
                self.log(f"{key}: internal error in {kind} task: {type(err).__name__}: {err}")
                self.schedule(kind, key, 30.0, earlier_only=True)
            finally:
                self._finished(kind, key)

    # ---- tasks --------------------------------------------------------------------------------
    def _run_source(self, key: str) -> None:
        repo = self.objects.sources.get(key)
        if repo is None:
            return
        try:
            artifact, changed = self.sources.get(repo)
        except FormwrightError as err:
            self.log(f"source {key}: {err}")
            self.schedule(SOURCE, key, repo.interval)
            for obj in self._users_of(key):
                self.schedule(OBJECT, obj.key, earlier_only=True)
            return
        if changed:
            self.log(f"source {key}: {artifact.revision}")
            for obj in self._users_of(key):
                self.schedule(OBJECT, obj.key, earlier_only=True)
        self.schedule(SOURCE, key, repo.interval)

    def _users_of(self, source_key: str) -> list[StackObject]:
        return [o for o in self.objects.stacks.values()
                if o.source_key == source_key and o.spec.source_ref.kind == "GitRepository"]

    def _run_object(self, key: str) -> None:
        obj = self.objects.stacks.get(key)
        if obj is None:
            return
        record = self._records.get(key) or self.store.observe(obj)
        self._records[key] = record
        suspended = record.suspended if record.suspended is not None else obj.spec.suspend
        forced = key in self._forced
        requested_at = self._forced.pop(key, "")
        repository = self.objects.sources.get(obj.source_key) if obj.spec.source_ref.kind == "GitRepository" \
            else None
        outcome = self.reconciler.reconcile(
            obj, record.generation, record.status, suspended=suspended, repository=repository,
            ready_of=self._dependency, force_fetch=forced, requested_at=requested_at)
        self._record_outcome(key, record, outcome)
        if outcome.requeue is not None:
            self.schedule(OBJECT, key, outcome.requeue, earlier_only=True)
        if outcome.status.is_ready and outcome.status.last_applied_revision:
            for dependent in self._dependents.get(key, ()):
                dep_status = self._status_of(dependent)
                if dep_status is None or dep_status.reason == "DependencyNotReady":
                    self.schedule(OBJECT, dependent, earlier_only=True)

    def _record_outcome(self, key: str, record: Record, outcome: Outcome) -> None:
        before = record.status
        after = outcome.status
        after.next_run = time.time() + outcome.requeue if outcome.requeue is not None else None
        self.store.save(key, after)
        record.status = after
        self.stats.passes += 1
        self.stats.passes_by_key[key] = self.stats.passes_by_key.get(key, 0) + 1
        if outcome.applied:
            self.stats.applied += 1
        self.store.add_events(key, outcome.events)
        for event in outcome.events:
            revision = f" (revision {event.revision})" if event.revision else ""
            self.log(f"{key}: event {event.type}: {event.message}{revision}")
        if (before.ready, before.reason, before.message) != (after.ready, after.reason, after.message):
            self.log(f"{key}: Ready={after.ready} {after.reason}: {after.message}")

    def _run_delete(self, key: str) -> None:
        record = self._records.get(key) or self.store.get(key)
        if record is None:
            return
        spec = record.spec
        stack_name = spec.get("stackName") or ""
        project_path = spec.get("projectPath")
        # the controller never deletes the stack of a suspended object
        suspended = record.suspended if record.suspended is not None else bool(spec.get("suspend"))
        destroy = bool(spec.get("destroyStackOnDeletion")) and not suspended
        if project_path:
            # a whole project: StackGroup.delete() in reverse dependency order (blocks this worker only)
            # from the copy of the last deployed revision kept in this state folder
            outcome = self.reconciler.delete_project(key, str(project_path), destroy, record.status)
            what = "project's stacks"
        else:
            destroy = destroy and bool(stack_name)
            poll = _seconds(spec.get("pollInterval"), 5.0)
            retry = _seconds(spec.get("retryInterval") or spec.get("interval"), 60.0)
            outcome = self.reconciler.delete(key, stack_name, destroy, record.status, poll_interval=poll,
                                             retry_interval=retry)
            what = f"stack {stack_name}"
        if outcome.requeue is None:
            self.store.forget(key)
            self._records.pop(key, None)
            left = " (suspended)" if suspended else ""
            self.log(f"{key}: object deleted; {what} " + ("deleted" if destroy else f"left in place{left}"))
            return
        self._record_outcome(key, record, outcome)
        self.schedule(DELETE, key, outcome.requeue)

    def _dependency(self, key: str) -> tuple[int | None, Status] | None:
        """A dependsOn object's generation and status; None when the folder has no such object."""
        record = self._records.get(key)
        if key not in self.objects.stacks or record is None:
            return None
        return record.generation, record.status

    def _status_of(self, key: str) -> Status | None:
        record = self._records.get(key)
        return record.status if record is not None else None

    # ---- the folder ---------------------------------------------------------------------------
    def _files_fingerprint(self) -> tuple:
        try:
            files = object_files(self.directory)
        except FormwrightError:
            return ()
        result = []
        for path in files:
            try:
                stat = path.stat()
            except OSError:
                continue
            result.append((str(path), stat.st_mtime_ns, stat.st_size))
        return tuple(result)

    @staticmethod
    def _dependents_of(objects: ObjectSet) -> dict[str, list[str]]:
        result: dict[str, list[str]] = {}
        for obj in objects.stacks.values():
            for dep in obj.dependencies:
                result.setdefault(dep, []).append(obj.key)
        return result

    def reload(self) -> None:
        """Re-read the folder when a file changed; schedule what is new, changed or gone."""
        fingerprint = self._files_fingerprint()
        if fingerprint == self._fingerprint:
            return
        # A file rewritten in place (truncated, then written) must not be read between the two: it would
        # read as no objects, each one "taken away" and, with destroyStackOnDeletion, its stack deleted.
        # So the files must hold still for SETTLE seconds and through the read; otherwise the next poll
        # tries again.
        self._pause(SETTLE)
        if self._files_fingerprint() != fingerprint:
            return
        try:
            found = load_objects(self.directory)
        except FormwrightError as err:
            self._fingerprint = fingerprint
            self.log(f"not reloaded: {err}")
            return
        if self._files_fingerprint() != fingerprint:
            return
        self._fingerprint = fingerprint
        old = self.objects
        self.objects = found
        self._dependents = self._dependents_of(found)
        for key, repo in found.sources.items():
            if old.sources.get(key) != repo:
                self.schedule(SOURCE, key)
        for key, obj in found.stacks.items():
            previous = old.stacks.get(key)
            if previous is None or previous.spec != obj.spec:
                self._records[key] = self.store.observe(obj)
                self.schedule(OBJECT, key)
        for key in set(old.stacks) - set(found.stacks):
            self.schedule(DELETE, key)

    def _take_requests(self) -> None:
        for key, action in self.store.take_requests():
            if key not in self.objects.stacks:
                continue
            stored = self.store.get(key)
            if stored is not None and key in self._records:
                self._records[key].suspended = stored.suspended
            verb, _, token = action.partition("@")
            if verb in ("reconcile", "resume"):
                self._forced[key] = token or self._forced.get(key, "")
                self.schedule(OBJECT, key)

    # ---- running ------------------------------------------------------------------------------
    def start(self) -> None:
        """Start the workers and schedule every object and source now.

        One writer per state folder: a second daemon (or an in-process `sync reconcile`) on the same
        objects gets LockHeldError (exit 3) naming this one."""
        self._lock = sync_lock(self.state_dir, "sync run")
        note = self._lock.acquire()
        if note:
            self.log(f"note: {note}")
        self.store.register_daemon(os.getpid())
        for key in self.objects.stacks:
            self._records[key] = self.store.observe(self.objects.stacks[key])
        for key in set(self._records) - set(self.objects.stacks):
            if self._records[key].spec:
                self.schedule(DELETE, key)  # deleted while the daemon was not running
        for key in self.objects.sources:
            self.schedule(SOURCE, key)
        for key in self.objects.stacks:
            self.schedule(OBJECT, key)
        for index in range(self.workers):
            thread = threading.Thread(target=self._worker, name=f"sync-{index}", daemon=True)
            thread.start()
            self._threads.append(thread)

    def wake(self) -> None:
        """Make the main loop look at requests and the folder now (safe in a signal handler)."""
        self._wake.set()

    def stop(self) -> None:
        """Ask everything to stop (safe in a signal handler)."""
        self._stopping.set()
        self._wake.set()

    def install_signals(self) -> None:
        """SIGTERM and SIGINT stop the daemon gracefully, SIGUSR1 wakes it (main thread only)."""
        signal.signal(signal.SIGTERM, lambda *_: self.stop())
        signal.signal(signal.SIGINT, lambda *_: self.stop())
        signal.signal(signal.SIGUSR1, lambda *_: self.wake())

    def run_forever(self, *, install_signals: bool = True) -> None:
        """Run until SIGTERM, SIGINT or `stop()`; then let workers finish their pass and close."""
        if install_signals:
            self.install_signals()
        self.start()
        try:
            while not self._stopping.is_set():
                self._wake.wait(self.reload_interval)
                self._wake.clear()
                if self._stopping.is_set():
                    break
                self._take_requests()
                self.reload()
        finally:
            self.shutdown()

    def shutdown(self) -> None:
        """Stop the workers (each finishes its current pass) and close the state."""
        self._stopping.set()
        with self._cond:
            self._cond.notify_all()
        for thread in self._threads:
            thread.join()
        self._threads.clear()
        self.store.unregister_daemon(os.getpid())
        self.store.close()
        if self._lock is not None:
            self._lock.release()


def _seconds(value: object, default: float) -> float:
    """A stored spec duration (seconds, as the model dumps it) or `default`."""
    try:
        return float(value) if value is not None else default  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return default
