"""Upgrade by drift: pair the old and new stacks by (kind, name) and decide what each needs.

Only in the new → create. Only in the old → delete, in a clean-up phase after everything else
succeeded. In both and unchanged (processed template, parameters, tags) → skip, no events. In both
and changed → update through a change set; an immutable stack is replaced instead: a new stack is
created under a new name and the old one deleted in clean-up. The same planner serves update (new
inputs), scope (new regions) and rollback (the target revision's recorded state); `delete_plan` lists what
an instance's delete removes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from formwright.errors import InputError
from formwright.lifecycle.manifest import InputDef, stack_of
from formwright.state.journal import Journal, Operation, Revision, Step


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


def shared_plan(main: list[Planned], cleanup: list[Planned], old: dict[str, dict[str, Any]],
                shared: set[str]) -> tuple[list[Planned], list[Planned]]:
    """A shared element is never updated or replaced by one instance: kept as it is when the instance
    had it, joined when new to it, left (removed by the last sharer) when the new version drops it."""
    def main_action(p: Planned) -> Planned:
        if stack_of(p.element) not in shared and not old.get(p.element, {}).get("shared"):
            return p
        if p.action == "delete":
            return Planned(p.element, "unshare", p.stack_name)
        return Planned(p.element, "skip" if p.element in old else "share", old.get(p.element, {}).get(
            "stack_name", p.stack_name))

    kept = [main_action(p) for p in main]
    left = [Planned(p.element, "unshare", p.stack_name) if old.get(p.element, {}).get("shared") else p
            for p in cleanup if not (stack_of(p.element) in shared and p.element in {m.element for m in kept})
            ]
    return kept, left


def rollback_plan(current: dict[str, dict[str, Any]], target: dict[str, dict[str, Any]],
                  failed: Operation | None) -> tuple[list[Planned], list[Planned], dict[str, list[str]],
                                                      dict[str, list[str]]]:
    """The steps that bring the elements `current` back to the revision's `target` elements: main steps,
    clean-up steps and both graphs. Stacks a `failed` operation created or updated count as drifted."""
    old = dict(current)
    touched: set[str] = set()
    if failed is not None:
        for step in failed.steps:
            if step.phase != "main" or step.status == "planned" or step.action == "skip":
                continue
            if step.action == "update":
                touched.add(step.element)
            elif step.action in ("create", "replace") and old.get(step.element, {}).get("stack_name") != \
                    step.stack_name:
                key = step.element if step.element not in old else f"{step.element}#{failed.id}"
                old[key] = {"kind": "created", "stack_name": step.stack_name, "hash": None, "deps": []}
    new = [NewElement(e, rec["kind"], rec["stack_name"]) for e, rec in target.items()]
    graph = {e: list(rec.get("deps", [])) for e, rec in target.items()}
    main, cleanup = plan_drift(old, new, lambda e: target[e]["hash"], graph, touched=touched)
    shared = {e for e, r in target.items() if r.get("shared")}
    main, cleanup = shared_plan(main, cleanup, old, shared)
    cleanup_graph = {e: list(rec.get("deps", [])) for e, rec in old.items()}
    # an element the upgrade created is removed in its turn of the reversed walk (PostUpgrade → delete
    # → PreUpgrade); only the replacements of restored elements are left to the clean-up
    created = [p for p in cleanup if p.element not in target]
    cleanup = [p for p in cleanup if p.element in target]
    main += created
    for planned in created:
        graph[planned.element] = [d for d in cleanup_graph.get(planned.element, []) if d in graph]
    return main, cleanup, graph, cleanup_graph


def delete_plan(journal: Journal, name: str,
                current: Revision | None) -> tuple[list[Planned], dict[str, list[str]]]:
    """The delete steps of an instance and their graph: the current revision's stacks and those a failed
    operation may have left behind (under `<element>#<operation id>` when the element has another)."""
    targets: dict[str, str] = {}
    graph: dict[str, list[str]] = {}
    for element_id, rec in (current.elements if current else {}).items():
        targets[element_id] = rec["stack_name"]
        graph[element_id] = list(rec.get("deps", []))
    for op in journal.operations(name):
        full = journal.operation(op.id)
        for step in full.steps if full and full.status != "done" else []:
            if step.phase == "main" and step.action in ("create", "replace") and step.status != "planned":
                key = (
                    step.element
                    if step.element not in targets or targets[step.element] == step.stack_name
                    else f"{step.element}#{op.id}"
                )
                targets[key] = step.stack_name
                graph.setdefault(key, list(op.params.get("graph", {}).get(step.element, [])))
    shared = {e for e, r in (current.elements if current else {}).items() if r.get("shared")}
    main = [Planned(e, "unshare" if e in shared else "delete", n) for e, n in targets.items()]
    return main, graph


def journal_steps(main: list[Planned], cleanup: list[Planned], *, action: bool = False) -> list[Step]:
    """An operation's steps as the journal keeps them, in order: the first event, a day-2 operation's own
    action, each element's main step (a skip already done), each clean-up step, the last event."""
    steps = [Step(0, "", "hook", "pre")]
    if action:
        steps.append(Step(len(steps), "", "operation", "action"))
    steps += [Step(len(steps) + i, p.element, p.action, "main", p.stack_name,
                   "done" if p.action == "skip" else "planned") for i, p in enumerate(main)]
    steps += [Step(len(steps) + i, p.element, p.action, "cleanup", p.stack_name)
              for i, p in enumerate(cleanup)]
    steps.append(Step(len(steps), "", "hook", "post"))
    return steps
