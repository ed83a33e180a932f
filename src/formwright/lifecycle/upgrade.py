"""Upgrade by drift: pair the old and new stacks by (kind, name) and decide what each needs.

Only in the new → create. Only in the old → delete, in a clean-up phase after everything else
succeeded. In both and unchanged (processed template, parameters, tags) → skip, no events. In both
and changed → update through a change set; an immutable stack is replaced instead: a new stack is
created under a new name and the old one deleted in clean-up. The same planner serves update (new
inputs), scope (new regions) and rollback (the target revision's recorded state).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from formwright.errors import InputError
from formwright.lifecycle.manifest import InputDef


@dataclass
class Planned:
    """One element's decision."""

    element: str
    action: str  # create | update | replace | skip | delete
    stack_name: str


@dataclass
class NewElement:
    """What the element should become: its kind, CloudFormation name and whether it is immutable."""

    id: str
    kind: str
    stack_name: str
    immutable: bool = False
    base_name: str = ""  # the name the project gives it; a replacement is called <base_name>-<suffix>


def plan_drift(old: dict[str, dict[str, Any]], new: list[NewElement], new_hash: Callable[[str], str | None],
               graph: dict[str, list[str]], *, touched: set[str] = frozenset(),  # type: ignore[assignment]
               replacement_suffix: str = "r") -> tuple[list[Planned], list[Planned]]:
    """Main steps (new elements in dependency order) and clean-up deletes (old elements) for a change.

    `old` maps element ids to recorded elements ({kind, stack_name, hash}); `new_hash` gives an element's
    new hash (None when not knowable yet); `touched` elements changed outside the record (a failed
    operation), so they are never skipped; `graph` makes an element changed when a dependency it
    waits for is created, updated or replaced.
    """
    main: list[Planned] = []
    cleanup: list[Planned] = []
    moved: set[str] = set()
    for element in new:
        before = old.get(element.id)
        if before is None or before.get("kind") != element.kind:
            name = element.stack_name
            if before is not None:
                cleanup.append(Planned(element.id, "delete", before["stack_name"]))
                if before["stack_name"] == name:
                    name = f"{element.base_name or name}-{replacement_suffix}"
            main.append(Planned(element.id, "create", name))
            moved.add(element.id)
            continue
        upstream = any(dep in moved for dep in graph.get(element.id, ()))
        changed = element.id in touched or upstream or new_hash(element.id) != before.get("hash")
        if before["stack_name"] != element.stack_name:
            main.append(Planned(element.id, "replace", element.stack_name))
            cleanup.append(Planned(element.id, "delete", before["stack_name"]))
        elif not changed:
            main.append(Planned(element.id, "skip", before["stack_name"]))
            continue
        elif element.immutable:
            main.append(
                Planned(
                    element.id, "replace", f"{element.base_name or element.stack_name}-{replacement_suffix}"
                )
            )
            cleanup.append(Planned(element.id, "delete", before["stack_name"]))
        else:
            main.append(Planned(element.id, "update", before["stack_name"]))
        moved.add(element.id)
    wanted = {e.id for e in new}
    cleanup.extend(Planned(eid, "delete", rec["stack_name"]) for eid, rec in old.items() if eid not in wanted)
    return main, cleanup


def check_input_changes(old: dict[str, InputDef], new: dict[str, InputDef], file: str | None = None) -> None:
    """An input may not change its type between versions."""
    for name, definition in new.items():
        before = old.get(name)
        if before is not None and before.type != definition.type:
            raise InputError(
                f"input '{name}' changes type from {before.type} to {definition.type}",
                file=file,
                line=definition.line,
                hint="add a new input instead of changing the type of one",
            )
