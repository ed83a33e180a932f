"""The project tree: named objects that know their parent and their dotted path (e.g.
`shop.stacks.database`), the Project and its stacks as written in formwright.yaml."""

from __future__ import annotations

import graphlib
from pathlib import Path
from typing import Any

from formwright.model.references import OutputRef
from formwright.model.targets import TargetSpec
from formwright.template.document import Mapping


class Node:
    """An object in the project tree: a name, a parent, and where it was written."""

    def __init__(self, name: str, parent: Node | None = None, *, file: str | None = None,
                 line: int | None = None, group: str | None = None) -> None:
        self.name = name
        self.parent = parent
        self.file: str | None = file if file is not None else (parent.file if parent else None)
        self.line = line
        self.group = group  # the collection this node sits in under its parent, e.g. "stacks"

    @property
    def path(self) -> str:
        """The dotted path from the root, e.g. `shop.stacks.database`."""
        if self.parent is None:
            return self.name
        middle = f".{self.group}" if self.group else ""
        return f"{self.parent.path}{middle}.{self.name}"

    @property
    def root(self) -> Node:
        """The topmost node (the project)."""
        node = self
        while node.parent is not None:
            node = node.parent
        return node

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.path}>"


class StackConfig(Node):
    """One stack of the project as written in formwright.yaml."""

    def __init__(self, name: str, parent: Project, line: int | None) -> None:
        super().__init__(name, parent, line=line, group="stacks")
        self.template: Path | None = None
        self.template_source: dict[str, Any] | None = None  # `template: {type: http, url: ...}`
        self.template_line: int | None = None
        self.tosca: Path | None = None
        self.inputs: dict[str, str] = {}
        self.stack_name: str = ""
        self.parameters: dict[str, Any] = {}
        self.parameter_lines: dict[str, int] = {}
        self.tags: dict[str, str] = {}
        self.tag_sources: dict[str, Any] = {}  # tags written as resolvers (filled in at deploy)
        self.depends_on: list[str] = []
        self.depends_lines: dict[str, int] = {}
        self.capabilities: list[str] = []
        self.termination_protection: bool | None = None  # None: keep what the stack has
        self.on_failure: str | None = None  # rollback | delete | do_nothing; None: CloudFormation's default
        self.service_role: str | None = None
        self.notification_arns: list[str] = []
        self.artifact_bucket: str | None = None
        self.ownership_tags: bool = True  # false: adopted, the stack's own tags only
        self.stack_timeout: int | None = None  # minutes; None: wait as long as CloudFormation works
        self.deny: dict[str, list[str]] = {}  # guards: replacement/removal -> resource type patterns
        self.immutable = False
        self.extra: dict[str, Any] = {}
        self.target = TargetSpec()  # region, account, credentials (flowed down project -> group -> stack)
        self.group_name: str | None = None  # the group it was written in
        self.regions: list[str] | None = None  # `regions: [...]`: one stack per region
        self.definition = name  # the name written in the file (`app` for its copy `app@eu-west-1`)
        self.named = False  # True when `stack_name` was written (not the default)
        self.obsolete = False  # `obsolete: true`: to be removed by `deploy --prune`
        self.imports: dict[str, dict[str, str]] = {}  # `import:` logical id -> identifier properties
        self.import_existing = False  # `import_existing: true`: ImportExistingResources on change sets
        self.hooks: dict[str, list[Any]] = {}  # event -> model.hooks.Hook actions (engine/hooks.py runs them)

    @property
    def project(self) -> Project:
        """The project this stack belongs to."""
        assert isinstance(self.parent, Project)
        return self.parent

    def references(self) -> list[OutputRef]:
        """Every `!ref` in this stack's parameters (list values included)."""
        found: list[OutputRef] = []
        for value in self.parameters.values():
            items = value if isinstance(value, list) else [value]
            found.extend(v for v in items if isinstance(v, OutputRef))
        return found

    def dependencies(self) -> set[str]:
        """Stacks that must be deployed before this one: depends_on plus referenced stacks."""
        stacks = self.project.stacks
        refs = {ref.stack if ref.stack in stacks else ref.base for ref in self.references()}
        return set(self.depends_on) | refs


class Project(Node):
    """The whole project: its settings and its stacks."""

    def __init__(self, name: str, file: str, directory: Path) -> None:
        super().__init__(name, None, file=file, line=1)
        self.directory = directory
        self.region: str | None = None
        self.tags: dict[str, str] = {}
        self.stacks: dict[str, StackConfig] = {}
        self.macros: dict[str, Any] = {}
        self.version: str | None = None
        self.local_cloud_stub: list[str] = []
        self.local_cloud_instances = "stub"  # or "boot": `local_cloud: {instances: boot}`
        self.raw: Mapping = Mapping()
        self.options: dict[str, Any] = {}  # STACK_OPTIONS set at the project level
        self.environment: str | None = None  # --env
        self.variables: dict[str, Any] = {}  # what {{ var.K }} sees
        self.target = TargetSpec()  # the project-level target keys
        self.groups: dict[str, list[str]] = {}  # group name -> its stacks
        self.obsolete: dict[str, StackConfig] = {}  # `obsolete: true` stacks, kept out of `stacks`
        self.source_paths: dict[tuple[str, str], Path] = {}  # (template|tosca, as written) -> found, on load

    @property
    def build_dir(self) -> Path:
        """Where processed templates go: `.formwright/build/` (`…/build/<env>/` for an environment)."""
        base = self.state_dir / "build"
        return base / self.environment if self.environment else base

    @property
    def state_dir(self) -> Path:
        """The work folder `.formwright/` next to formwright.yaml."""
        return self.directory / ".formwright"

    def order(self) -> list[str]:
        """Stack names in a dependency order (dependencies first)."""
        sorter = graphlib.TopologicalSorter({n: s.dependencies() for n, s in self.stacks.items()})
        return list(sorter.static_order())

    def dependents(self) -> dict[str, set[str]]:
        """For each stack, the stacks that depend on it directly."""
        result: dict[str, set[str]] = {name: set() for name in self.stacks}
        for name, stack in self.stacks.items():
            for dep in stack.dependencies():
                result.setdefault(dep, set()).add(name)
        return result
