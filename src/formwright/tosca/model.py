"""The EffectiveModel: a parsed TOSCA topology, ready for a target plugin.

Values keep TOSCA functions in their raw form (`{"get_input": "port"}`); `formwright.tosca.functions`
resolves them. Every node, relationship, operation and output knows the `file:line` it came from.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

LIFECYCLE = ("create", "configure", "start", "stop", "delete")
STANDARD = "tosca.interfaces.node.lifecycle.Standard"


@dataclass(frozen=True)
class Location:
    """Where something was written."""

    file: str
    line: int | None = None

    def __str__(self) -> str:
        return f"{self.file}:{self.line}" if self.line else self.file


@dataclass
class Artifact:
    """A file shipped with the template: its name, path relative to the source root, and type."""

    name: str
    file: str
    type: str | None = None
    deploy_path: str | None = None


@dataclass
class Operation:
    """One Standard-interface operation: its implementation artifact, dependencies and inputs."""

    name: str
    implementation: str | None
    inputs: dict[str, Any] = field(default_factory=dict)
    dependencies: list[str] = field(default_factory=list)
    location: Location | None = None


@dataclass
class Relationship:
    """A requirement fulfilled by a target node, with the relationship type (and its ancestors)."""

    source: str
    target: str
    requirement: str
    type: str
    types: list[str]
    capability: str | None = None
    properties: dict[str, Any] = field(default_factory=dict)
    location: Location | None = None

    def is_a(self, base: str) -> bool:
        """True when this relationship is `base` or derives from it."""
        return base in self.types


@dataclass
class Node:
    """A node template with everything its types contribute (defaults, interfaces, artifacts)."""

    name: str
    type: str
    types: list[str]
    properties: dict[str, Any] = field(default_factory=dict)
    attributes: dict[str, Any] = field(default_factory=dict)
    capabilities: dict[str, dict[str, Any]] = field(default_factory=dict)
    requirements: list[Relationship] = field(default_factory=list)
    operations: dict[str, Operation] = field(default_factory=dict)
    artifacts: dict[str, Artifact] = field(default_factory=dict)
    location: Location | None = None

    def is_a(self, base: str) -> bool:
        """True when this node's type is `base` or derives from it."""
        return base in self.types


@dataclass
class Input:
    """A topology input: its declaration and the value chosen (given, else the default)."""

    name: str
    type: str = "string"
    description: str | None = None
    default: Any = None
    required: bool = True
    constraints: list[dict[str, Any]] = field(default_factory=list)
    value: Any = None
    location: Location | None = None


@dataclass
class Output:
    """A topology output: its description and raw value."""

    name: str
    value: Any
    description: str | None = None
    location: Location | None = None


@dataclass
class EffectiveModel:
    """The whole topology: nodes by name, inputs, outputs, and the folder artifacts are relative to."""

    nodes: dict[str, Node]
    inputs: dict[str, Input]
    outputs: dict[str, Output]
    root: Path
    entry: str
    description: str | None = None
    warnings: list[Any] = field(default_factory=list)  # diagnostics.Problem, tolerated like TOSCAna
    strict: bool = False  # --strict: a target plugin's warnings are errors too
    base: str = "."  # the entry template's folder, relative to `root`: artifact paths are relative to it
    source: str = ""  # the source as the user named it (a file, a folder, a CSAR): what `tosca:` takes
    # what the topology declares besides nodes: (section, name, type, location) of each policy and workflow
    directives: list[tuple[str, str, str, Location]] = field(default_factory=list)

    _incoming: dict[str, list[Relationship]] | None = field(default=None, repr=False, compare=False)
    _hosted: dict[str, list[Node]] | None = field(default=None, repr=False, compare=False)

    def relationships(self) -> Iterator[Relationship]:
        """Every relationship of every node."""
        for node in self.nodes.values():
            yield from node.requirements

    def host_of(self, node: Node) -> Node | None:
        """The node `node` is HostedOn, if any."""
        for rel in node.requirements:
            if rel.is_a("tosca.relationships.HostedOn"):
                return self.nodes[rel.target]
        return None

    def root_host(self, node: Node) -> Node:
        """The bottom of `node`'s hosting stack (usually a Compute); `node` itself when unhosted."""
        current = node
        while (host := self.host_of(current)) is not None:
            current = host
        return current

    def hosted(self, host: Node) -> list[Node]:
        """Every node whose hosting stack ends at `host` (transitively), in model order."""
        if self._hosted is None:
            self._hosted = {}
            for node in self.nodes.values():
                bottom = self.root_host(node)
                if bottom is not node:
                    self._hosted.setdefault(bottom.name, []).append(node)
        return list(self._hosted.get(host.name, []))

    def sources_of(self, target: Node, base: str) -> list[Relationship]:
        """Relationships of type `base` (or derived) that point at `target`."""
        if self._incoming is None:
            self._incoming = {}
            for rel in self.relationships():
                self._incoming.setdefault(rel.target, []).append(rel)
        return [r for r in self._incoming.get(target.name, []) if r.is_a(base)]
