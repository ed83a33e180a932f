"""The records of the lifecycle journal (state/journal.py): steps, operations, revisions, instances."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass, field
from typing import Any

STEP_STATES = ("planned", "started", "done", "failed", "compensated")


@dataclass
class Step:
    """One planned unit of an operation: a project-level event or one element's realization."""

    seq: int
    element: str  # "" for the project level, else the element id (stack or stack@region)
    action: str  # hook | create | update | replace | delete | skip | noop
    phase: str  # pre | main | cleanup | post
    stack_name: str = ""
    status: str = "planned"
    idempotency_key: str = ""
    attempt: int = 0
    note: str | None = None
    error: str | None = None


@dataclass
class Operation:
    """An operation on an instance and its steps."""

    id: str
    instance: str
    kind: str
    status: str  # running | done | failed
    params: dict[str, Any] = field(default_factory=dict)
    attempt: int = 1
    error: str | None = None
    started_at: float = 0.0
    ended_at: float | None = None
    steps: list[Step] = field(default_factory=list)


@dataclass
class Revision:
    """An immutable snapshot of an instance after a successful operation."""

    instance: str
    number: int
    operation_id: str
    version: str | None
    source: str
    inputs: dict[str, Any]
    regions: list[str]
    elements: dict[str, dict[str, Any]]
    created_at: float = 0.0


@dataclass
class Instance:
    """A named deployment of a project."""

    name: str
    status: str
    version: str | None
    revision: int
    regions: list[str]
    created_at: float
    updated_at: float


def instance_from_row(row: sqlite3.Row) -> Instance:
    """An instance from its row."""
    return Instance(row["name"], row["status"], row["version"], row["revision"], json.loads(row["regions"]),
                    row["created_at"], row["updated_at"])


def operation_from_row(row: sqlite3.Row) -> Operation:
    """An operation (without its steps) from its row."""
    return Operation(row["id"], row["instance"], row["kind"], row["status"], json.loads(row["params"]),
                     row["attempt"], row["error"], row["started_at"], row["ended_at"])


def revision_from_row(row: sqlite3.Row) -> Revision:
    """A revision from its row."""
    return Revision(row["instance"], row["number"], row["operation_id"], row["version"], row["source"],
                    json.loads(row["inputs"]), json.loads(row["regions"]), json.loads(row["elements"]),
                    row["created_at"])
