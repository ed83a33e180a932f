"""The status of every synced object, kept in SQLite so a restarted daemon resumes where it stopped.

`<state>/status.db` (WAL): per object its spec hash and generation, the last spec (so a deleted
object's stack can still be destroyed), a suspend override set by `sync suspend|resume`, the status
(Flux's fields plus the change-set phase written before each write call) and the next run. Requests
from the CLI (`sync reconcile NAME`) wait in a table for the daemon, which a signal wakes.
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import time
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from formwright.errors import InputError
from formwright.sync.objects import StackObject

TRUE, FALSE, UNKNOWN = "True", "False", "Unknown"
# The controller's reasons (api/v1alpha1/cloudformation_stack_types.go) and Flux's Progressing / Succeeded.
REASONS = (
    "ArtifactFailed", "ChangeSetFailed", "TemplateUploadFailed", "CloudFormationApiCallFailed",
    "UnrecoverableStackFailure", "StackRollbackFailed", "DependencyNotReady", "UnexpectedStatus",
    "Progressing", "Succeeded",
)
EVENTS_KEPT = 50  # per object, for `sync status --events`


@dataclass
class Event:
    """A Kubernetes-style event of one object: Normal or Warning, annotated with the source revision."""

    type: str
    message: str
    revision: str = ""
    time: float = field(default_factory=time.time)


@dataclass
class Status:
    """Flux's status of a CloudFormationStack, plus what formwright needs to resume safely."""

    ready: str = UNKNOWN
    reason: str = "Progressing"
    message: str = "not reconciled yet"
    observed_generation: int = 0
    last_attempted_revision: str = ""
    last_applied_revision: str = ""
    last_attempted_change_set: str = ""  # an ARN, as the controller keeps it
    last_applied_change_set: str = ""  # an ARN
    last_handled_reconcile_at: str = ""  # the reconcile.fluxcd.io/requestedAt value last handled
    stack_name: str = ""
    # formwright's own fields
    phase: str = ""  # "" | created | executing | deleting
    change_set_name: str = ""  # name of the last attempted change set (written before it exists)
    change_set_id: str = ""  # ARN of the last attempted change set
    applied_digest: str = ""
    stack_id: str = ""
    drift: str = ""
    drift_detection_id: str = ""
    correction: str = ""  # nonce of the last drift correction (a stack tag)
    failures: int = 0
    last_transition: float = 0.0
    last_reconcile: float = 0.0
    next_run: float | None = None

    def set_ready(self, ready: str, reason: str, message: str) -> None:
        """Set the Ready condition; the transition time moves only when Ready itself changes."""
        if ready != self.ready:
            self.last_transition = time.time()
        self.ready, self.reason, self.message = ready, reason, message

    @property
    def is_ready(self) -> bool:
        """Ready=True."""
        return self.ready == TRUE

    def to_json(self) -> dict[str, Any]:
        """All fields, snake_case."""
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Status:
        """Back from `to_json` (unknown keys ignored)."""
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in names})

    def to_k8s(self) -> dict[str, Any]:
        """The object's `.status` as the Flux controller writes it (camelCase, a Ready condition)."""
        when = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.last_transition or time.time()))
        return {
            "observedGeneration": self.observed_generation,
            "conditions": [{"type": "Ready", "status": self.ready, "reason": self.reason,
                            "message": self.message, "lastTransitionTime": when,
                            "observedGeneration": self.observed_generation}],
            "lastAttemptedRevision": self.last_attempted_revision or None,
            "lastAppliedRevision": self.last_applied_revision or None,
            "lastAttemptedChangeSet": self.last_attempted_change_set or None,
            "lastAppliedChangeSet": self.last_applied_change_set or None,
            "lastHandledReconcileAt": self.last_handled_reconcile_at or None,
            "stackName": self.stack_name or None,
            "formwright": {"phase": self.phase, "changeSetName": self.change_set_name,
                           "changeSetId": self.change_set_id,
                           "appliedDigest": self.applied_digest, "stackId": self.stack_id,
                           "drift": self.drift, "driftDetectionId": self.drift_detection_id,
                           "correction": self.correction, "failures": self.failures},
        }

    @classmethod
    def from_k8s(cls, status: dict[str, Any] | None) -> Status:
        """A Status from an object's `.status` (what a previous operator wrote)."""
        status = status or {}
        ready: dict[str, Any] = next(
            (c for c in status.get("conditions") or [] if c.get("type") == "Ready"), {}
        )
        extra = status.get("formwright") or {}
        return cls(
            ready=ready.get("status", UNKNOWN),
            reason=ready.get("reason", "Progressing"),
            message=ready.get("message", ""),
            observed_generation=int(status.get("observedGeneration") or 0),
            last_attempted_revision=status.get("lastAttemptedRevision") or "",
            last_applied_revision=status.get("lastAppliedRevision") or "",
            last_attempted_change_set=status.get("lastAttemptedChangeSet") or "",
            last_applied_change_set=status.get("lastAppliedChangeSet") or "",
            last_handled_reconcile_at=status.get("lastHandledReconcileAt") or "",
            stack_name=status.get("stackName") or "",
            phase=extra.get("phase", ""),
            # a status the Flux controller wrote has no formwright fields: the ARN names its change set
            change_set_name=extra.get("changeSetName") or change_set_name_of(
                status.get("lastAttemptedChangeSet") or ""),
            change_set_id=extra.get("changeSetId") or status.get("lastAttemptedChangeSet") or "",
            applied_digest=extra.get("appliedDigest", ""),
            stack_id=extra.get("stackId", ""),
            drift=extra.get("drift", ""),
            drift_detection_id=extra.get("driftDetectionId", ""),
            correction=extra.get("correction", ""),
            failures=int(extra.get("failures") or 0),
        )


def change_set_name_of(arn: str) -> str:
    """The change set's name from its ARN (`arn:…:changeSet/<name>/<id>`); a name stays itself."""
    if not arn.startswith("arn:"):
        return arn
    resource = arn.split(":", 5)[-1]
    parts = resource.split("/")
    return parts[1] if len(parts) >= 2 else ""


@dataclass
class Record:
    """One object's row: identity, generation, last spec, suspend override, status."""

    key: str
    spec_hash: str = ""
    generation: int = 0
    spec: dict[str, Any] = field(default_factory=dict)
    suspended: bool | None = None
    status: Status = field(default_factory=Status)


_SCHEMA = """
CREATE TABLE IF NOT EXISTS objects (
    key TEXT PRIMARY KEY,
    spec_hash TEXT NOT NULL DEFAULT '',
    generation INTEGER NOT NULL DEFAULT 0,
    spec TEXT NOT NULL DEFAULT '{}',
    suspended INTEGER,
    status TEXT NOT NULL DEFAULT '{}',
    next_run REAL,
    updated REAL NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS requests (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    key TEXT NOT NULL,
    action TEXT NOT NULL,
    created REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS events (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    key TEXT NOT NULL,
    time REAL NOT NULL,
    type TEXT NOT NULL,
    message TEXT NOT NULL,
    revision TEXT NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS events_by_key ON events (key, id);
CREATE TABLE IF NOT EXISTS daemon (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    pid INTEGER NOT NULL,
    started REAL NOT NULL
);
"""


class StatusStore:
    """`<state>/status.db`: one connection shared by the daemon's threads, serialised by a lock."""

    def __init__(self, state_dir: Path) -> None:
        state_dir.mkdir(parents=True, exist_ok=True)
        self.path = state_dir / "status.db"
        self._lock = threading.RLock()
        try:
            self._db = sqlite3.connect(self.path, check_same_thread=False, timeout=30, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")  # WAL: a crashed process loses nothing committed
            self._db.executescript(_SCHEMA)
        except sqlite3.DatabaseError as err:
            raise InputError(f"cannot open the sync state: {err}", file=str(self.path)) from None

    def close(self) -> None:
        """Close the database."""
        with self._lock:
            self._db.close()

    # ---- objects -----------------------------------------------------------------------------
    def _row(self, row: tuple) -> Record:
        key, spec_hash, generation, spec, suspended, status, next_run = row
        st = Status.from_json(json.loads(status or "{}"))
        st.next_run = next_run
        return Record(key, spec_hash, generation, json.loads(spec or "{}"),
                      None if suspended is None else bool(suspended), st)

    def get(self, key: str) -> Record | None:
        """The record of `key`, or None."""
        with self._lock:
            row = self._db.execute("SELECT key, spec_hash, generation, spec, suspended, status, next_run "
                                   "FROM objects WHERE key = ?", (key,)).fetchone()
        return self._row(row) if row else None

    def all(self) -> dict[str, Record]:
        """Every record, by key."""
        with self._lock:
            rows = self._db.execute("SELECT key, spec_hash, generation, spec, suspended, status, next_run "
                                    "FROM objects ORDER BY key").fetchall()
        return {row[0]: self._row(row) for row in rows}

    def observe(self, obj: StackObject) -> Record:
        """The record of `obj`, its generation bumped when the spec changed (or taken from metadata)."""
        spec_hash = obj.spec_hash
        spec_json = json.dumps(obj.spec.model_dump(mode="json", by_alias=True))
        with self._lock:
            record = self.get(obj.key)
            if record is None:
                generation = obj.generation or 1
                self._db.execute("INSERT INTO objects (key, spec_hash, generation, spec, status, updated) "
                                 "VALUES (?, ?, ?, ?, '{}', ?)", (obj.key, spec_hash, generation, spec_json,
                                                                  time.time()))
                return Record(obj.key, spec_hash, generation, json.loads(spec_json), None, Status())
            if record.spec_hash != spec_hash or (obj.generation and obj.generation != record.generation):
                record.generation = obj.generation or record.generation + 1
                record.spec_hash, record.spec = spec_hash, json.loads(spec_json)
                self._db.execute(
                    "UPDATE objects SET spec_hash = ?, generation = ?, spec = ?, updated = ? WHERE key = ?",
                    (spec_hash, record.generation, spec_json, time.time(), obj.key),
                )
            elif record.spec != json.loads(spec_json):
                # `suspend` alone is no new generation, but the last spec decides a deletion (a suspended
                # object's stack is never deleted)
                record.spec = json.loads(spec_json)
                self._db.execute("UPDATE objects SET spec = ?, updated = ? WHERE key = ?",
                                 (spec_json, time.time(), obj.key))
            return record

    def save(self, key: str, status: Status) -> None:
        """Write the status (and its next run) of `key`."""
        data = status.to_json()
        data.pop("next_run", None)
        with self._lock:
            self._db.execute("UPDATE objects SET status = ?, next_run = ?, updated = ? WHERE key = ?",
                             (json.dumps(data), status.next_run, time.time(), key))

    def set_suspended(self, key: str, value: bool | None) -> None:
        """Override spec.suspend: True (suspend), False (resume), None (follow the spec)."""
        with self._lock:
            cursor = self._db.execute("UPDATE objects SET suspended = ?, updated = ? WHERE key = ?",
                                      (None if value is None else int(value), time.time(), key))
        if cursor.rowcount == 0:
            raise InputError(f"'{key}' has never been seen by `formwright sync run`",
                             hint="run the daemon (or `sync reconcile`) once first")

    def forget(self, key: str) -> None:
        """Drop the record of `key` (its object was deleted) and its events."""
        with self._lock:
            self._db.execute("DELETE FROM objects WHERE key = ?", (key,))
            self._db.execute("DELETE FROM events WHERE key = ?", (key,))

    # ---- events -----------------------------------------------------------------------------
    def add_events(self, key: str, events: list[Event]) -> None:
        """Record `events` of `key`, keeping its last EVENTS_KEPT."""
        if not events:
            return
        with self._lock:
            self._db.executemany(
                "INSERT INTO events (key, time, type, message, revision) VALUES (?, ?, ?, ?, ?)",
                [(key, e.time, e.type, e.message, e.revision) for e in events])
            self._db.execute("DELETE FROM events WHERE key = ? AND id NOT IN "
                             "(SELECT id FROM events WHERE key = ? ORDER BY id DESC LIMIT ?)",
                             (key, key, EVENTS_KEPT))

    def events(self, key: str | None = None) -> list[tuple[str, Event]]:
        """Recorded events (of `key`, or of every object), oldest first."""
        query = "SELECT key, time, type, message, revision FROM events"
        with self._lock:
            rows = (self._db.execute(query + " WHERE key = ? ORDER BY id", (key,)) if key is not None
                    else self._db.execute(query + " ORDER BY id")).fetchall()
        return [(k, Event(type_, message, revision, when)) for k, when, type_, message, revision in rows]

    # ---- requests and the daemon's presence --------------------------------------------------
    def request(self, key: str, action: str = "reconcile") -> None:
        """Ask the daemon to run `action` on `key` now."""
        with self._lock:
            self._db.execute("INSERT INTO requests (key, action, created) VALUES (?, ?, ?)",
                             (key, action, time.time()))

    def take_requests(self) -> list[tuple[str, str]]:
        """Pending requests, oldest first, removed from the table."""
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            rows = self._db.execute("SELECT id, key, action FROM requests ORDER BY id").fetchall()
            self._db.execute("DELETE FROM requests")
            self._db.execute("COMMIT")
        return [(key, action) for _, key, action in rows]

    def register_daemon(self, pid: int) -> None:
        """Record the running daemon's process id."""
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO daemon (id, pid, started) VALUES (1, ?, ?)", (pid, time.time())
            )

    def unregister_daemon(self, pid: int) -> None:
        """Forget the daemon (on a clean stop)."""
        with self._lock:
            self._db.execute("DELETE FROM daemon WHERE pid = ?", (pid,))

    def daemon_pid(self) -> int | None:
        """The pid of a live daemon over this state, or None."""
        with self._lock:
            row = self._db.execute("SELECT pid FROM daemon WHERE id = 1").fetchone()
        if not row:
            return None
        try:
            os.kill(int(row[0]), 0)
        except ProcessLookupError:
            return None
        except PermissionError:
            pass
        return int(row[0])
