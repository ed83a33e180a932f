"""An in-process harness: objects from a folder, a status store, a reconciler, passes until settled."""

from __future__ import annotations

import time
from pathlib import Path

from formwright.engine.cfn import CallCounter
from formwright.sync.objects import load_objects
from formwright.sync.passes import Outcome
from formwright.sync.reconcile import Reconciler
from formwright.sync.source import Sources
from formwright.sync.status_store import UNKNOWN, Status, StatusStore


class Harness:
    """Reconciles the objects of `folder` against `target`, one pass or until settled."""

    def __init__(self, folder: Path, target, state: Path, *, drift: bool = False) -> None:
        self.folder = folder
        self.store = StatusStore(state)
        self.counter = CallCounter()
        self.reconciler = Reconciler(
            target,
            Sources(state / "sources"),
            state_dir=state,
            save=self.store.save,
            counter=self.counter,
            drift=drift,
            dependency_requeue=1.0,
        )
        self.cfn = self.reconciler.cfn

    def status(self, name: str) -> Status:
        """The stored status of default/<name>."""
        record = self.store.get(f"default/{name}")
        assert record is not None
        return record.status

    def once(self, name: str, *, suspended: bool = False) -> Outcome:
        """One pass over default/<name> (objects re-read from the folder, sources fetched fresh)."""
        objects = load_objects(self.folder)
        obj = objects.stacks[f"default/{name}"]
        record = self.store.observe(obj)
        records = self.store.all()
        outcome = self.reconciler.reconcile(obj, record.generation, record.status, suspended=suspended,
                                            repository=objects.sources.get(obj.source_key),
                                            ready_of=lambda k: (records[k].generation, records[k].status)
                                            if k in records and k in objects.stacks else None,
                                            force_fetch=True)
        self.store.save(obj.key, outcome.status)
        self.store.add_events(obj.key, outcome.events)
        return outcome

    def events(self, name: str) -> list[tuple[str, str]]:
        """(type, message) of every event of default/<name> kept so far, oldest first."""
        return [(e.type, e.message) for _, e in self.store.events(f"default/{name}")]

    def settle(self, name: str, passes: int = 10) -> Status:
        """Passes until Ready is True or False (the local cloud is synchronous, so no waiting)."""
        for _ in range(passes):
            outcome = self.once(name)
            if outcome.status.ready != UNKNOWN:
                return outcome.status
        raise AssertionError(f"{name} did not settle: {outcome.status}")


def wait_for(predicate, what: str, timeout: float = 60.0):
    """Poll `predicate` until it returns something true (a generous bound, not a timing assertion)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")
