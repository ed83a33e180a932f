"""Saved plans: `formwright plan -o plan.json` keeps its change sets and writes them down;
`formwright deploy --plan plan.json` executes exactly those, or refuses.

The file is JSON a CI job can read (`jq '.totals'`): the project and environment it was made for, the
stacks in dependency order, the totals, and per stack its plan (engine/results.py StackPlan: resource
changes, parameters, tags, notes) with what makes it exact: the change set's ARN, the hash of the
stack's inputs (processed template, parameters with the upstream outputs they resolved to, tags,
capabilities and deploy options: engine/prepared.py), the stack's id and its last-updated stamp.
A stack whose inputs were known only after an upstream stack is applied has no change set: the deploy
makes it then and executes it only if it does nothing the plan did not show (engine/saved_plans.py).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from formwright.engine.results import PlanTotals, StackPlan
from formwright.errors import InputError

FORMAT = "formwright-plan/1"
MAKE_ONE = "make one with `formwright plan -o FILE`"


@dataclass
class SavedPlan:
    """A plan file as read back."""

    project: str
    environment: str | None
    order: list[str]
    plans: dict[str, StackPlan]
    dependencies: dict[str, list[str]]
    file: str = ""
    created: str = field(default_factory=lambda: datetime.now(UTC).isoformat(timespec="seconds"))

    def to_json(self) -> dict[str, Any]:
        """The file's content."""
        return {"format": FORMAT, "project": self.project, "environment": self.environment,
                "created": self.created,
                "order": self.order, "totals": PlanTotals.of(self.plans).to_json(),
                "stacks": {name: {**self.plans[name].to_json(), "depends_on": self.dependencies.get(name, [])}
                           for name in self.order}}


def write_plan(path: Path, saved: SavedPlan) -> None:
    """Write the plan file (its folder made when missing)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(saved.to_json(), indent=2, default=str) + "\n", encoding="utf-8")


def read_plan(path: Path) -> SavedPlan:
    """Read a plan file; anything else is bad input naming the file (and line for broken JSON)."""
    where = str(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(f"plan file {where} not found", hint=MAKE_ONE) from None
    except json.JSONDecodeError as err:
        raise InputError(f"not a plan file: {err.msg}", file=where, line=err.lineno,
                         hint=MAKE_ONE) from None
    except (OSError, UnicodeDecodeError) as err:
        raise InputError(f"cannot read plan file: {err}", file=where) from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise InputError(f"not a formwright plan (no \"format\": \"{FORMAT}\")", file=where, line=1,
                         hint=MAKE_ONE)
    try:
        stacks = data["stacks"]
        plans = {name: StackPlan.from_json(entry) for name, entry in stacks.items()}
        dependencies = {name: [str(d) for d in entry.get("depends_on") or []]
                        for name, entry in stacks.items()}
        order = [str(name) for name in data["order"]]
    except (KeyError, TypeError, AttributeError, ValueError) as err:
        raise InputError(f"the plan file is damaged: {type(err).__name__} {err}", file=where,
                         hint="make it again with `formwright plan -o FILE`") from None
    if set(order) != set(plans):
        raise InputError("the plan file is damaged: `order` and `stacks` differ", file=where)
    return SavedPlan(str(data.get("project") or ""), data.get("environment"), order, plans, dependencies,
                     file=where, created=str(data.get("created") or ""))
