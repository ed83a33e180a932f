"""The type registry: normative TOSCA types, formwright's profile, and the template's own types.

It answers what a type derives from (its chain up to `tosca.nodes.Root`), whether a type is a kind
of another, where a custom type was written, and which relationship a requirement uses by default.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

import yaml

from formwright.errors import InputError
from formwright.tosca.documents import Document, Documents

PROFILE_PATH = Path(str(resources.files("formwright.tosca") / "profiles" / "formwright.yaml"))
KINDS = {"node_types": "tosca.nodes.", "relationship_types": "tosca.relationships.",
         "capability_types": "tosca.capabilities."}
_Loader: type = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
MAX_DEPTH = 64  # derived_from levels; the normative chains are under 10


@dataclass(frozen=True)
class TypeDef:
    """One type definition: its name, kind (`node_types` …), parent, raw definition and where it is."""

    name: str
    kind: str
    derived_from: str | None
    data: dict
    file: str | None = None
    line: int | None = None


@functools.cache
def _builtin_definitions() -> tuple[tuple[str, str, dict], ...]:
    """(kind, name, definition) for the normative types and the shipped profile (read once)."""
    # The normative definitions ship with tosca-parser, which parses them when imported: read (never
    # changed) from there rather than parsed a second time.
    from toscaparser.elements.entity_type import EntityType

    out = []
    normative = EntityType.TOSCA_DEF_LOAD_AS_IS
    for data in (normative, _profile()):
        for kind in KINDS:
            for name, definition in (data.get(kind) or {}).items():
                out.append((kind, name, definition or {}))
    return tuple(out)


@functools.cache
def _profile() -> dict:
    return yaml.load(PROFILE_PATH.read_text(encoding="utf-8"), Loader=_Loader)  # noqa: S506 - safe loader


def profile_node_types() -> dict[str, dict]:
    """The node types of formwright's shipped profile, read once and shared: not to be changed (tosca-parser
    gets a copy of them, see `parser.run_tosca_parser`)."""
    return _profile()["node_types"]


class TypeRegistry:
    """All node and relationship types a service template can use."""

    def __init__(self, documents: Documents) -> None:
        self._types: dict[str, TypeDef] = {}
        self._merged: dict[tuple[str, str, str], dict[str, Any]] = {}
        for kind, name, definition in _builtin_definitions():
            self._types[name] = TypeDef(name, kind, definition.get("derived_from"), definition)
        for doc in documents.all():
            self._add_document(doc)
        self._check_hierarchy()

    def _check_hierarchy(self) -> None:
        """Fail on a type that derives from itself, directly or through a cycle, or a chain deeper than
        MAX_DEPTH (tosca-parser would loop forever on either)."""
        settled: set[str] = set()
        for start in self._types:
            path: list[str] = []
            current: str | None = start
            while current is not None and current not in settled:
                if current in path or len(path) > MAX_DEPTH:
                    cycle = [*path[path.index(current):], current] if current in path else [*path[:3], "..."]
                    culprit = self._types[path[-1]]
                    raise InputError(
                        f"type '{culprit.name}' derives from itself: {' -> '.join(cycle)}"
                        if current in path else f"type '{start}' derives through more than {MAX_DEPTH} types",
                        file=culprit.file, line=culprit.line, hint="fix its derived_from")
                path.append(current)
                parent = self._types[current].derived_from
                current = self.canonical(str(parent), self._types[current].kind) if parent else None
            settled.update(path)

    def _add_document(self, doc: Document) -> None:
        for kind in KINDS:
            section = doc.data.get(kind) or {}
            if not isinstance(section, dict):
                raise InputError(f"'{kind}' must be a mapping", file=doc.shown, line=doc.line(doc.data, kind))
            for name, definition in section.items():
                definition = definition if isinstance(definition, dict) else {}
                self._types[name] = TypeDef(name, kind, definition.get("derived_from"), definition,
                                            doc.shown, doc.line(section, name))

    def canonical(self, name: str, kind: str = "node_types") -> str | None:
        """The full name of type `name` (accepting `tosca:X` and `X` short forms), or None if unknown."""
        if name in self._types and self._types[name].kind == kind:
            return name
        short = name.split(":", 1)[1] if name.startswith("tosca:") else name
        full = KINDS[kind] + short
        return full if full in self._types and self._types[full].kind == kind else None

    def get(self, name: str) -> TypeDef:
        """The definition of a known type."""
        return self._types[self.canonical(name) or name]

    def chain(self, name: str, kind: str = "node_types") -> list[str]:
        """`name` and its ancestors, nearest first; stops at an unknown parent or a cycle."""
        out: list[str] = []
        current: str | None = self.canonical(name, kind)
        while current is not None and current not in out:
            out.append(current)
            parent = self._types[current].derived_from
            current = self.canonical(parent, self._types[current].kind) if parent else None
        return out

    def is_a(self, name: str, base: str) -> bool:
        """True when type `name` is `base` or derives from it."""
        return base in self.chain(name)

    def requirement_definition(self, node_type: str, requirement: str) -> dict[str, Any]:
        """The nearest definition of requirement `requirement` along the type chain, or {}."""
        for name in self.chain(node_type):
            for item in self._types[name].data.get("requirements") or []:
                if isinstance(item, dict) and requirement in item:
                    value = item[requirement]
                    return value if isinstance(value, dict) else {"node": value}
        return {}

    def requirement_names(self, node_type: str) -> list[str]:
        """The names of the requirements declared along the type chain."""
        return [name for t in self.chain(node_type) for item in self._types[t].data.get("requirements") or []
                if isinstance(item, dict) for name in item]

    def capability_properties(self, node_type: str, capability: str) -> list[str]:
        """The property names capability `capability` of a node of `node_type` takes: those of its
        capability type (along its chain) and those its definition in the node type adds."""
        definition = self.merged(node_type, "capabilities").get(capability)
        if not isinstance(definition, dict):
            return []
        names = set(definition.get("properties") or {})
        if definition.get("type"):
            names |= set(self.merged(str(definition["type"]), "properties", "capability_types"))
        return sorted(names)

    def merged(self, type_name: str, section: str, kind: str = "node_types") -> dict[str, Any]:
        """A section (`properties`, `attributes`, `interfaces`, `artifacts` …) merged along the chain.

        Computed once per type and section; each caller gets its own (shallow) copy.
        """
        key = (type_name, section, kind)
        if key not in self._merged:
            self._merged[key] = self._merge(type_name, section, kind)
        return dict(self._merged[key])

    def _merge(self, type_name: str, section: str, kind: str) -> dict[str, Any]:
        result: dict[str, Any] = {}
        for name in reversed(self.chain(type_name, kind)):
            value = self._types[name].data.get(section) or {}
            if isinstance(value, dict):
                for key, item in value.items():
                    if isinstance(item, dict) and isinstance(result.get(key), dict):
                        result[key] = {**result[key], **item}
                    else:
                        result[key] = item
        return result
