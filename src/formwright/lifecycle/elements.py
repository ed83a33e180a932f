"""Elements: the stacks of an instance as they exist in the cloud — one per stack, or one per region
for a per-region stack (`stack@region`) — and the dependency graph between them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from formwright.cloud.regions import is_region, nearest_regions
from formwright.errors import InputError
from formwright.lifecycle.manifest import Manifest
from formwright.model.project import Project


@dataclass(frozen=True)
class Element:
    """One stack of an instance in one region."""

    id: str
    stack: str
    region: str
    kind: str  # cloudformation | tosca
    stack_name: str


def split_id(element_id: str, home: str) -> tuple[str, str]:
    """`app@eu-west-1` → (app, eu-west-1); `app` → (app, home)."""
    stack, _, region = element_id.partition("@")
    return stack, region or home


def elements_of(project: Project, manifest: Manifest, regions: list[str], home: str) -> dict[str, Element]:
    """Every element the project makes for an instance scoped to `regions`, in dependency order."""
    result: dict[str, Element] = {}
    deps = {n: sorted(s.dependencies()) for n, s in project.stacks.items()}
    for name in manifest_order(list(project.stacks), deps):
        config = project.stacks[name]
        kind = "tosca" if config.tosca is not None else "cloudformation"
        if name not in manifest.regional:
            result[name] = Element(name, name, home, kind, config.stack_name)
            continue
        allowed = manifest.regional[name]
        for region in regions:
            if allowed is None or region in allowed:
                result[f"{name}@{region}"] = Element(
                    f"{name}@{region}", name, region, kind, config.stack_name
                )
    return result


def element_graph(project: Project, elements: dict[str, Element]) -> dict[str, list[str]]:
    """Each element and the elements it waits for: a dependency in the same region when it has one there."""
    by_stack: dict[str, list[Element]] = {}
    for element in elements.values():
        by_stack.setdefault(element.stack, []).append(element)
    graph: dict[str, list[str]] = {}
    for element in elements.values():
        deps: set[str] = set()
        for dep in project.stacks[element.stack].dependencies():
            copies = by_stack.get(dep, [])
            same = [c for c in copies if c.region == element.region]
            deps.update(c.id for c in (same or copies))
        graph[element.id] = sorted(deps)
    return graph


def reverse_graph(graph: dict[str, Any]) -> dict[str, Any]:
    """The graph with every edge turned around (dependents first)."""
    result: dict[str, set[str]] = {name: set() for name in graph}
    for name, deps in graph.items():
        for dep in deps:
            if dep in result:
                result[dep].add(name)
    return result


def manifest_order(names: list[str], graph: dict[str, list[str]]) -> list[str]:
    """`names` in their given (manifest) order, each moved just after the ones it waits for:
    repeatedly the first one whose dependencies among `names` are placed."""
    wanted = set(names)
    placed: list[str] = []
    done: set[str] = set()
    pending = list(names)
    while pending:
        for name in pending:
            if all(d in done or d not in wanted for d in graph.get(name, ())):
                break
        else:  # a cycle cannot be planned; keep the given order rather than loop
            name = pending[0]
        pending.remove(name)
        placed.append(name)
        done.add(name)
    return placed


def check_regions(regions: list[str], where: str = "--regions", **place: Any) -> None:
    """Refuse a name no AWS partition has (exit 2): botocore's partition data decides."""
    for region in regions:
        if not is_region(region):
            raise InputError(f"unknown region '{region}' in {where}", **place, hint=nearest_regions(region))
