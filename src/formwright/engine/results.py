"""What the engine reports: per-stack plans and results, and progress events."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

MASK = "****"


def exit_code_of(results: dict[str, StackResult]) -> int:
    """0 when every stack is fine; 2 when any failed on bad input; else 1."""
    codes = [r.exit_code for r in results.values() if r.outcome == "failed"]
    if not codes and all(r.ok for r in results.values()):
        return 0
    return 2 if 2 in codes else 1


@dataclass
class ResourceChange:
    """One line of a change set: + add, ~ modify (with replacement), - remove."""

    action: str  # Add | Modify | Remove | Import | Dynamic
    logical_id: str
    resource_type: str
    replacement: str | None = None  # True | False | Conditional (Modify only)

    @property
    def symbol(self) -> str:
        """`+`, `~` or `-`."""
        return {"Add": "+", "Modify": "~", "Remove": "-"}.get(self.action, "?")


@dataclass
class ValueChange:
    """A parameter or tag whose value changes (old None = added, new None = removed)."""

    key: str
    old: str | None
    new: str | None


@dataclass
class StackPlan:
    """What deploying one stack would do."""

    name: str
    stack_name: str
    kind: str  # create | update | no changes | unchanged | unknown
    resources: list[ResourceChange] = field(default_factory=list)
    parameters: list[ValueChange] = field(default_factory=list)
    tags: list[ValueChange] = field(default_factory=list)
    change_set_id: str | None = None
    note: str = ""

    def to_json(self) -> dict[str, Any]:
        """The plan as plain data."""
        return asdict(self)


@dataclass
class StackResult:
    """How one stack ended in a deploy or delete."""

    name: str
    stack_name: str
    outcome: str  # created | updated | no changes | unchanged | deleted | absent | failed | skipped
    status: str = ""
    elapsed: float = 0.0
    outputs: dict[str, str] = field(default_factory=dict)
    error: str | None = None
    plan: StackPlan | None = None
    exit_code: int = 0  # 2 when the stack failed on bad input, 1 when in the cloud

    @property
    def ok(self) -> bool:
        """False when the stack failed or was skipped because a dependency failed."""
        return self.outcome not in ("failed", "skipped")

    def to_json(self) -> dict[str, Any]:
        """The result as plain data."""
        data = asdict(self)
        data["ok"] = self.ok
        return data


@dataclass
class ProgressEvent:
    """A line of progress for one stack: its phase, the cloud status, the latest resource event."""

    stack: str
    phase: str  # waiting | planning | creating | updating | deleting | done | failed | skipped
    status: str = ""
    message: str = ""


ProgressCallback = Callable[[ProgressEvent], None]


def no_progress(_event: ProgressEvent) -> None:
    """A progress callback that ignores everything."""
