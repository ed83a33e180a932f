"""The lifecycle journal `.formwright/journal.db`: instances, operations, steps, revisions, locks.

SQLite in WAL mode with `synchronous=FULL`: every state change is its own committed transaction, so a
crash (even SIGKILL) leaves a journal from which `retry` resumes. An operation writes all its planned
steps before anything acts; each step then goes planned → started → done | failed | compensated.
Revisions are immutable snapshots of an instance; a lock row allows one operation per instance.

Nothing secret is ever written here: callers hand in values already redacted. The records it hands out
(Step, Operation, Revision, Instance) are in state/journal_records.py.

Test-only: `FORMWRIGHT_CRASH_AT=K` kills the process with SIGKILL right after the K-th journal
boundary (a committed state change of an operation), to prove crash safety.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import sqlite3
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from formwright.errors import InputError, LockHeldError
from formwright.processes import pid_alive
from formwright.state.journal_records import (
    STEP_STATES,
    Instance,
    Operation,
    Revision,
    Step,
    instance_from_row,
    operation_from_row,
    revision_from_row,
)
from formwright.state.lock import describe_holder

SCHEMA = """
CREATE TABLE IF NOT EXISTS instances (
    name TEXT PRIMARY KEY, status TEXT NOT NULL, version TEXT, revision INTEGER NOT NULL DEFAULT 0,
    regions TEXT NOT NULL DEFAULT '[]', created_at REAL NOT NULL, updated_at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS operations (
    id TEXT PRIMARY KEY, instance TEXT NOT NULL, kind TEXT NOT NULL, status TEXT NOT NULL,
    params TEXT NOT NULL DEFAULT '{}', attempt INTEGER NOT NULL DEFAULT 1, error TEXT,
    started_at REAL NOT NULL, ended_at REAL);
CREATE INDEX IF NOT EXISTS operations_instance ON operations(instance, started_at);
CREATE TABLE IF NOT EXISTS steps (
    operation_id TEXT NOT NULL, seq INTEGER NOT NULL, element TEXT NOT NULL, action TEXT NOT NULL,
    phase TEXT NOT NULL, stack_name TEXT NOT NULL DEFAULT '', status TEXT NOT NULL,
    idempotency_key TEXT NOT NULL, attempt INTEGER NOT NULL DEFAULT 0, note TEXT, error TEXT,
    started_at REAL, ended_at REAL, PRIMARY KEY (operation_id, seq));
CREATE TABLE IF NOT EXISTS transactions (
    id INTEGER PRIMARY KEY AUTOINCREMENT, instance TEXT NOT NULL, element TEXT NOT NULL,
    operation_id TEXT NOT NULL, record TEXT NOT NULL, created_at REAL NOT NULL);
CREATE INDEX IF NOT EXISTS transactions_element ON transactions(instance, element);
CREATE TABLE IF NOT EXISTS revisions (
    instance TEXT NOT NULL, number INTEGER NOT NULL, operation_id TEXT NOT NULL, version TEXT,
    source TEXT NOT NULL, inputs TEXT NOT NULL, regions TEXT NOT NULL, elements TEXT NOT NULL,
    created_at REAL NOT NULL, PRIMARY KEY (instance, number));
CREATE TABLE IF NOT EXISTS blobs (hash TEXT PRIMARY KEY, body TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS properties (
    instance TEXT NOT NULL, name TEXT NOT NULL, value TEXT NOT NULL, PRIMARY KEY (instance, name));
CREATE TABLE IF NOT EXISTS hook_cache (
    instance TEXT NOT NULL, hook TEXT NOT NULL, cache_key TEXT NOT NULL, PRIMARY KEY (instance, hook));
CREATE TABLE IF NOT EXISTS locks (
    instance TEXT PRIMARY KEY, operation_id TEXT NOT NULL, pid INTEGER NOT NULL, host TEXT NOT NULL,
    acquired_at REAL NOT NULL);
"""

class Journal:
    """The journal database of one project home folder."""

    def __init__(self, state_dir: Path) -> None:
        state_dir.mkdir(parents=True, exist_ok=True)
        self.path = state_dir / "journal.db"
        self.db = sqlite3.connect(self.path, timeout=30, isolation_level=None, check_same_thread=False)
        self.db.row_factory = sqlite3.Row
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=FULL")
        self.db.execute("PRAGMA busy_timeout=30000")
        self.db.executescript(SCHEMA)
        self._boundaries = 0
        crash = os.environ.get("FORMWRIGHT_CRASH_AT", "")
        self._crash_at = int(crash) if crash.isdigit() else 0
        self._mutex = threading.RLock()

    def close(self) -> None:
        """Close the connection."""
        self.db.close()

    # ---- plumbing ---------------------------------------------------------------------------
    def _write(self, statements: list[tuple[str, tuple]], *, boundary: bool = True) -> None:
        """Run statements in one immediate transaction, then count a journal boundary."""
        with self._mutex:
            self.db.execute("BEGIN IMMEDIATE")
            try:
                for sql, args in statements:
                    self.db.execute(sql, args)
                self.db.execute("COMMIT")
            except BaseException:
                self.db.execute("ROLLBACK")
                raise
            if boundary:
                self._boundary()

    def _boundary(self) -> None:
        self._boundaries += 1
        if self._crash_at and self._boundaries == self._crash_at:
            os.kill(os.getpid(), signal.SIGKILL)  # test-only: a crash right after this commit

    def _one(self, sql: str, args: tuple = ()) -> sqlite3.Row | None:
        with self._mutex:
            return self.db.execute(sql, args).fetchone()

    def _all(self, sql: str, args: tuple = ()) -> list[sqlite3.Row]:
        with self._mutex:
            return self.db.execute(sql, args).fetchall()

    # ---- instances ----------------------------------------------------------------------------
    def instance(self, name: str) -> Instance | None:
        """The instance called `name`, or None."""
        row = self._one("SELECT * FROM instances WHERE name = ?", (name,))
        return None if row is None else instance_from_row(row)

    def instances(self) -> list[Instance]:
        """Every instance, by name."""
        return [instance_from_row(r) for r in self._all("SELECT * FROM instances ORDER BY name")]

    def live_instances(self) -> list[Instance]:
        """Instances not deleted."""
        return [i for i in self.instances() if i.status != "deleted"]

    # ---- locks --------------------------------------------------------------------------------
    def acquire(self, instance: str, operation_id: str, *, take_over: str | None = None) -> str | None:
        """Take the instance's lock for `operation_id`; return a note when a dead holder's lock was taken.

        A lock held by a live process (or another host) raises LockHeldError naming the holder.
        `take_over` names an operation whose lock may be taken when its process is gone.
        """
        host = socket.gethostname()
        with self._mutex:
            self.db.execute("BEGIN IMMEDIATE")
            try:
                row = self.db.execute("SELECT * FROM locks WHERE instance = ?", (instance,)).fetchone()
                note = None
                if row is not None:
                    stale = row["host"] == host and not pid_alive(row["pid"])
                    if not stale:
                        holder = {"pid": row["pid"], "host": row["host"], "started_at": row["acquired_at"]}
                        raise LockHeldError(
                            f"instance '{instance}' is locked by operation {row['operation_id']} "
                            f"({describe_holder(holder)})", where=instance,
                            hint=f"wait for it, or `--force-unlock {row['operation_id']}` if it is dead")
                    if take_over is None and row["operation_id"] != operation_id:
                        note = (f"took over the lock of operation {row['operation_id']} "
                                f"(pid {row['pid']} on {row['host']} is gone)")
                    self.db.execute("DELETE FROM locks WHERE instance = ?", (instance,))
                self.db.execute("INSERT INTO locks VALUES (?, ?, ?, ?, ?)",
                                (instance, operation_id, os.getpid(), host, time.time()))
                self.db.execute("COMMIT")
                return note
            except BaseException:
                self.db.execute("ROLLBACK")
                raise

    def release(self, instance: str, operation_id: str) -> None:
        """Drop the lock if `operation_id` holds it."""
        self._write([("DELETE FROM locks WHERE instance = ? AND operation_id = ?", (instance, operation_id))],
                    boundary=False)

    def force_unlock(self, instance: str, operation_id: str) -> bool:
        """Drop the lock held by `operation_id`; False when it does not hold it."""
        row = self._one("SELECT operation_id FROM locks WHERE instance = ?", (instance,))
        if row is None or row["operation_id"] != operation_id:
            return False
        self._write([("DELETE FROM locks WHERE instance = ? AND operation_id = ?", (instance, operation_id)),
                     ("UPDATE operations SET status = 'failed', error = 'force-unlocked', ended_at = ? "
                      "WHERE id = ? AND status = 'running'", (time.time(), operation_id))], boundary=False)
        return True

    def clear_stale(self, instance: str) -> bool:
        """Drop the instance's lock when its holder's process is gone (same host); True if dropped."""
        row = self._one("SELECT * FROM locks WHERE instance = ?", (instance,))
        if row is None or row["host"] != socket.gethostname() or pid_alive(row["pid"]):
            return False
        self._write(
            [("DELETE FROM locks WHERE instance = ? AND pid = ?", (instance, row["pid"]))], boundary=False
        )
        return True

    def lock_holder(self, instance: str) -> dict[str, Any] | None:
        """The lock row of `instance`, or None."""
        row = self._one("SELECT * FROM locks WHERE instance = ?", (instance,))
        return None if row is None else dict(row)

    # ---- operations ---------------------------------------------------------------------------
    def begin(self, instance: str, kind: str, params: dict[str, Any], steps: list[Step], *,
              new_instance: dict[str, Any] | None = None, operation_id: str | None = None) -> Operation:
        """Write an operation and all its planned steps (and a new instance row) in one transaction."""
        op = Operation(operation_id or new_id(), instance, kind, "running", params, started_at=time.time())
        now = op.started_at
        statements: list[tuple[str, tuple]] = []
        if new_instance is not None:
            statements.append(("INSERT OR REPLACE INTO instances VALUES (?, ?, ?, 0, ?, ?, ?)",
                               (instance, "pending", new_instance.get("version"),
                                json.dumps(new_instance.get("regions", [])), now, now)))
        statements.append(
            (
                "INSERT INTO operations (id, instance, kind, status, params, started_at) "
                "VALUES (?, ?, ?, 'running', ?, ?)",
                (op.id, instance, kind, json.dumps(params), now),
            )
        )
        for step in steps:
            step.idempotency_key = step.idempotency_key or f"{op.id}-{step.seq}"
            statements.append(
                (
                    "INSERT INTO steps (operation_id, seq, element, action, phase, stack_name, status, "
                    "idempotency_key) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                    (
                        op.id,
                        step.seq,
                        step.element,
                        step.action,
                        step.phase,
                        step.stack_name,
                        step.status,
                        step.idempotency_key,
                    ),
                )
            )
        self._write(statements)
        op.steps = steps
        return op

    def operation(self, operation_id: str) -> Operation | None:
        """The operation with its steps."""
        row = self._one("SELECT * FROM operations WHERE id = ?", (operation_id,))
        if row is None:
            return None
        op = operation_from_row(row)
        op.steps = [
            Step(
                r["seq"],
                r["element"],
                r["action"],
                r["phase"],
                r["stack_name"],
                r["status"],
                r["idempotency_key"],
                r["attempt"],
                r["note"],
                r["error"],
            )
            for r in self._all("SELECT * FROM steps WHERE operation_id = ? ORDER BY seq", (operation_id,))
        ]
        return op

    def operations(self, instance: str) -> list[Operation]:
        """The instance's operations, oldest first (without steps)."""
        return [
            operation_from_row(r)
            for r in self._all(
                "SELECT * FROM operations WHERE instance = ? ORDER BY started_at, rowid", (instance,)
            )
        ]

    def last_operation(self, instance: str) -> Operation | None:
        """The instance's newest operation (with steps)."""
        row = self._one("SELECT id FROM operations WHERE instance = ? ORDER BY started_at DESC, rowid DESC "
                        "LIMIT 1", (instance,))
        return None if row is None else self.operation(row["id"])

    def resume(self, op: Operation) -> None:
        """Mark a failed or interrupted operation running again, one attempt more."""
        op.attempt += 1
        op.status = "running"
        self._write([("UPDATE operations SET status = 'running', attempt = ?, error = NULL, ended_at = NULL "
                      "WHERE id = ?", (op.attempt, op.id))])

    def finish(self, op: Operation, status: str, error: str | None = None, *,
               instance_status: str | None = None) -> None:
        """End the operation (done | failed) and set the instance's status."""
        op.status, op.error, op.ended_at = status, error, time.time()
        statements: list[tuple[str, tuple]] = [
            ("UPDATE operations SET status = ?, error = ?, ended_at = ? WHERE id = ?",
             (status, error, op.ended_at, op.id))]
        if instance_status:
            statements.append(("UPDATE instances SET status = ?, updated_at = ? WHERE name = ?",
                               (instance_status, op.ended_at, op.instance)))
        self._write(statements)

    # ---- steps --------------------------------------------------------------------------------
    def step(self, op: Operation, step: Step, status: str, *, error: str | None = None,
             note: str | None = None) -> None:
        """Move a step to `status` (started counts an attempt)."""
        assert status in STEP_STATES
        now = time.time()
        if status == "started":
            step.attempt += 1
            sql = (
                "UPDATE steps SET status = ?, attempt = ?, started_at = ?, error = NULL, "
                "note = COALESCE(?, note) "
                "WHERE operation_id = ? AND seq = ?"
            )
            args: tuple = (status, step.attempt, now, note, op.id, step.seq)
        else:
            sql = ("UPDATE steps SET status = ?, error = ?, ended_at = ?, note = COALESCE(?, note) "
                   "WHERE operation_id = ? AND seq = ?")
            args = (status, error, now, note, op.id, step.seq)
        step.status, step.error = status, error
        if note:
            step.note = note
        self._write([(sql, args)])

    # ---- transactions, properties, hook cache -------------------------------------------------
    def add_transaction(self, instance: str, element: str, operation_id: str, record: Any) -> None:
        """Keep a transaction record an action reported for an element."""
        self._write(
            [
                (
                    "INSERT INTO transactions (instance, element, operation_id, record, created_at) "
                    "VALUES (?, ?, ?, ?, ?)",
                    (instance, element, operation_id, json.dumps(record), time.time()),
                )
            ],
            boundary=False,
        )

    def transactions(self, instance: str, element: str) -> list[Any]:
        """The element's transaction records, oldest first."""
        return [
            json.loads(r["record"])
            for r in self._all(
                "SELECT record FROM transactions WHERE instance = ? AND element = ? ORDER BY id",
                (instance, element),
            )
        ]

    def set_property(self, instance: str, name: str, value: str) -> None:
        """Keep a (non-secret) property of the instance."""
        self._write([("INSERT OR REPLACE INTO properties VALUES (?, ?, ?)", (instance, name, value))],
                    boundary=False)

    def properties(self, instance: str) -> dict[str, str]:
        """The instance's stored properties."""
        return {
            r["name"]: r["value"]
            for r in self._all("SELECT * FROM properties WHERE instance = ?", (instance,))
        }

    def hook_key(self, instance: str, hook: str) -> str | None:
        """The cache key a hook last succeeded with."""
        row = self._one("SELECT cache_key FROM hook_cache WHERE instance = ? AND hook = ?", (instance, hook))
        return None if row is None else str(row["cache_key"])

    def set_hook_key(self, instance: str, hook: str, key: str) -> None:
        """Remember the cache key a hook succeeded with."""
        self._write(
            [("INSERT OR REPLACE INTO hook_cache VALUES (?, ?, ?)", (instance, hook, key))], boundary=False
        )

    # ---- revisions ----------------------------------------------------------------------------
    def add_revision(self, op: Operation, *, version: str | None, source: str, inputs: dict[str, Any],
                     regions: list[str], elements: dict[str, dict[str, Any]], blobs: dict[str, str],
                     status: str = "deployed") -> Revision:
        """Write the next immutable revision (and template blobs) and point the instance at it.

        Idempotent per operation: a retried operation whose revision was already written gets that one.
        """
        done = self._one(
            "SELECT * FROM revisions WHERE instance = ? AND operation_id = ?", (op.instance, op.id)
        )
        if done is not None:
            return revision_from_row(done)
        with self._mutex:
            row = self._one("SELECT MAX(number) AS n FROM revisions WHERE instance = ?", (op.instance,))
            number = int(row["n"] or 0) + 1 if row else 1
        now = time.time()
        statements: list[tuple[str, tuple]] = [
            ("INSERT OR IGNORE INTO blobs VALUES (?, ?)", (digest, body)) for digest, body in blobs.items()]
        statements.append(("INSERT INTO revisions VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                           (op.instance, number, op.id, version, source, json.dumps(inputs, sort_keys=True),
                            json.dumps(regions), json.dumps(elements, sort_keys=True), now)))
        statements.append(
            (
                "UPDATE instances SET revision = ?, version = ?, regions = ?, status = ?, updated_at = ? "
                "WHERE name = ?",
                (number, version, json.dumps(regions), status, now, op.instance),
            )
        )
        self._write(statements)
        return Revision(op.instance, number, op.id, version, source, inputs, regions, elements, now)

    def revision(self, instance: str, number: int | None = None) -> Revision | None:
        """Revision `number` of the instance (default: its current one)."""
        if number is None:
            inst = self.instance(instance)
            if inst is None or not inst.revision:
                return None
            number = inst.revision
        row = self._one("SELECT * FROM revisions WHERE instance = ? AND number = ?", (instance, number))
        return None if row is None else revision_from_row(row)

    def revisions(self, instance: str) -> list[Revision]:
        """Every revision of the instance, oldest first."""
        rows = self._all("SELECT * FROM revisions WHERE instance = ? ORDER BY number", (instance,))
        return [revision_from_row(r) for r in rows]

    def blob(self, digest: str) -> str | None:
        """A stored template body by its hash."""
        row = self._one("SELECT body FROM blobs WHERE hash = ?", (digest,))
        return None if row is None else str(row["body"])

    def set_instance(self, name: str, **fields: Any) -> None:
        """Update columns of an instance row (status, regions …)."""
        if not fields:
            return
        if "regions" in fields:
            fields["regions"] = json.dumps(fields["regions"])
        cols = ", ".join(f"{k} = ?" for k in fields)
        self._write([(f"UPDATE instances SET {cols}, updated_at = ? WHERE name = ?",
                      (*fields.values(), time.time(), name))], boundary=False)

    def lines(self) -> Iterator[str]:
        """The whole database as SQL text (for tests that look for leaked secrets)."""
        with self._mutex:
            yield from self.db.iterdump()


def new_id() -> str:
    """A new operation id: sortable by time, unique."""
    return f"op-{time.strftime('%Y%m%d%H%M%S')}-{uuid.uuid4().hex[:8]}"


def open_journal(state_dir: Path) -> Journal:
    """The journal of a project home's `.formwright/` folder, with a clear error when unusable."""
    try:
        return Journal(state_dir)
    except sqlite3.DatabaseError as err:
        raise InputError(f"cannot open the journal: {err}", file=str(state_dir / "journal.db"),
                         hint="is it a formwright journal? move it away to start over") from None
