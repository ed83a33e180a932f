"""One definition, several regions: `regions: [us-east-1, eu-west-1]` makes one stack per region.

Each copy is its own node of the graph, named `<stack>@<region>` (the lifecycle's element ids), with
the default CloudFormation name suffixed `-<region>`. A dependency or `!ref` on a per-region stack
goes to the copy in the same region; from elsewhere a `!ref` must name the region (`app@eu-west-1`).
"""

from __future__ import annotations

import copy
from dataclasses import replace
from typing import Any

from formwright.errors import ProjectError
from formwright.model.project import OutputRef, Project, StackConfig


def fan_out(project: Project, default_region: str) -> Project:
    """The project with every per-region stack replaced by its copies (the project itself is changed)."""
    copies: dict[str, dict[str, str]] = {}  # definition -> region -> node name
    nodes: dict[str, StackConfig] = {}
    for name, config in project.stacks.items():
        if not config.regions:
            nodes[name] = config
            continue
        copies[name] = {}
        for region in config.regions:
            node = copy.copy(config)
            node.name = f"{name}@{region}"
            node.target = replace(config.target, region=region)
            if not config.named:
                node.stack_name = f"{config.stack_name}-{region}"
            nodes[node.name] = node
            copies[name][region] = node.name
    if not copies:
        return project
    for node in nodes.values():
        region = node.target.region or default_region
        node.depends_on = sorted({n for dep in node.depends_on for n in _targets_of(dep, region, copies)})
        node.depends_lines = {n: node.depends_lines.get(n.partition("@")[0], node.line or 1)
                              for n in node.depends_on}
        node.parameters = {k: _rewrite(v, node, region, copies) for k, v in node.parameters.items()}
    project.stacks = nodes
    return project


def _targets_of(dep: str, region: str, copies: dict[str, dict[str, str]]) -> list[str]:
    """The nodes a `depends_on: [dep]` waits for: the same region's copy, else every copy."""
    if dep not in copies:
        return [dep]
    same = copies[dep].get(region)
    return [same] if same else list(copies[dep].values())


def _rewrite(value: Any, node: StackConfig, region: str, copies: dict[str, dict[str, str]]) -> Any:
    if isinstance(value, list):
        return [_rewrite(v, node, region, copies) for v in value]
    if not isinstance(value, OutputRef) or value.stack != value.base or value.base not in copies:
        return value
    same = copies[value.base].get(region)
    if same is None:
        first = next(iter(copies[value.base]))
        raise ProjectError(
            f"{value}: '{value.base}' is deployed per region ({', '.join(copies[value.base])}) but not in "
            f"{region}, where '{node.name}' is", file=value.file, line=value.line,
            hint=f"name the region: !ref {value.base}@{first}.outputs.{value.output}",
        )
    return OutputRef(same, value.output, value.file, value.line)
