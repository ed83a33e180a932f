"""What `adopt` infers from the live stacks: the capabilities a template needs, its NoEcho parameters, and
how the stacks feed each other (a parameter holding another adopted stack's output becomes a `!ref`; an
Fn::ImportValue of another adopted stack's export a `depends_on`)."""

from __future__ import annotations

import graphlib
from dataclasses import dataclass, field
from typing import Any

from formwright.adopt.live import LiveStack

# the IAM types whose custom names need CAPABILITY_NAMED_IAM (CloudFormation's "Acknowledging IAM resources")
IAM_NAME_PROPERTIES = {
    "AWS::IAM::Role": "RoleName", "AWS::IAM::User": "UserName", "AWS::IAM::Group": "GroupName",
    "AWS::IAM::ManagedPolicy": "ManagedPolicyName", "AWS::IAM::InstanceProfile": "InstanceProfileName",
}


def capabilities(template: dict[str, Any], described: list[str]) -> list[str]:
    """The capabilities a deploy of `template` needs: IAM resources CAPABILITY_IAM (NAMED_IAM when one has
    a custom name), a Transform or nested macros CAPABILITY_AUTO_EXPAND; with those the stack was given."""
    found = set(described)
    for body in (template.get("Resources") or {}).values():
        kind = str(body.get("Type", "")) if isinstance(body, dict) else ""
        if kind.startswith("AWS::IAM::"):
            found.add("CAPABILITY_IAM")
            if IAM_NAME_PROPERTIES.get(kind) in (body.get("Properties") or {}):
                found.add("CAPABILITY_NAMED_IAM")
    if template.get("Transform") or any(_walk(template, "Fn::Transform")):
        found.add("CAPABILITY_AUTO_EXPAND")
    return sorted(found)


def secret_parameters(template: dict[str, Any]) -> set[str]:
    """The template's NoEcho parameters: DescribeStacks shows `****` for them, never the value."""
    return {name for name, decl in (template.get("Parameters") or {}).items()
            if isinstance(decl, dict) and str(decl.get("NoEcho", "")).lower() == "true"}


def imported_names(template: dict[str, Any]) -> set[str]:
    """The export names the template imports by a literal name (a computed one cannot be matched)."""
    return {value for value in _walk(template, "Fn::ImportValue") if isinstance(value, str)}


def _walk(value: Any, key: str) -> list[Any]:
    """Every value of `key` anywhere in `value`."""
    found = []
    if isinstance(value, dict):
        for k, v in value.items():
            if k == key:
                found.append(v)
            found.extend(_walk(v, key))
    elif isinstance(value, list):
        for item in value:
            found.extend(_walk(item, key))
    return found


@dataclass
class Links:
    """How the adopted stacks feed each other."""

    refs: dict[str, dict[str, tuple[str, str]]] = field(default_factory=dict)  # stack: {param: (stack, key)}
    depends_on: dict[str, set[str]] = field(default_factory=dict)
    ambiguous: list[dict[str, Any]] = field(default_factory=list)  # parameters left as values, and why


def links(stacks: dict[str, LiveStack], templates: dict[str, dict[str, Any]]) -> Links:
    """Parameters equal to exactly one other adopted stack's output become references; several matches (or
    one that would close a cycle) are listed, not guessed. Imports of another adopted stack's export (same
    region: exports are regional) become dependencies."""
    found = Links()
    graph: dict[str, set[str]] = {name: set() for name in stacks}
    exports = {(s.region, export): name for name, s in stacks.items() for export in s.info.exports}
    for name, live in stacks.items():
        for export in sorted(imported_names(templates[name])):
            source = exports.get((live.region, export))
            if source and source != name:
                found.depends_on.setdefault(name, set()).add(source)
                graph[name].add(source)
    for name, live in stacks.items():
        secrets = secret_parameters(templates[name])
        for param, value in sorted(live.info.parameters.items()):
            if param in secrets or not value:
                continue
            matches = sorted((other, key) for other, s in stacks.items() if other != name
                             for key, out in s.info.outputs.items() if out == value)
            if not matches:
                continue
            entry = {"stack": name, "parameter": param, "value": value,
                     "outputs": [f"{other}.outputs.{key}" for other, key in matches]}
            if len(matches) > 1:
                found.ambiguous.append({**entry, "reason": "several outputs hold this value"})
                continue
            other = matches[0][0]
            known = other in graph[name]
            graph[name].add(other)
            if not known and _has_cycle(graph):
                graph[name].discard(other)
                found.ambiguous.append({**entry, "reason": "a reference would make a dependency cycle"})
                continue
            found.refs.setdefault(name, {})[param] = matches[0]
    return found


def _has_cycle(graph: dict[str, set[str]]) -> bool:
    try:
        graphlib.TopologicalSorter(graph).prepare()
    except graphlib.CycleError:
        return True
    return False
