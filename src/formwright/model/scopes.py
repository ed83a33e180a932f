"""Scopes: a part of the project named on the command line, as Paco's scopes name a part of its model.

A scope is a group (`net`), a stack in its group (`net.app`), a stack (`app`: every region's copy), or
one copy (`app@eu-west-1`).
"""

from __future__ import annotations

import difflib

from formwright.errors import InputError
from formwright.model.project import Project


def resolve_scopes(project: Project, scopes: list[str]) -> list[str]:
    """The stack nodes the scopes name, in the project's order; an unknown scope is an error."""
    chosen: set[str] = set()
    for scope in scopes:
        found = _nodes_of(project, scope)
        if not found:
            definitions = sorted({s.definition for s in project.stacks.values()})
            words = sorted({*project.groups, *project.stacks, *definitions})
            close = difflib.get_close_matches(scope, words, n=1)
            raise InputError(f"unknown stack '{scope}'", file=project.file,
                             hint=f"did you mean '{close[0]}'?" if close
                             else f"groups: {', '.join(sorted(project.groups)) or 'none'}; "
                                  f"stacks: {', '.join(definitions)}")
        chosen |= found
    return [name for name in project.order() if name in chosen]


def _nodes_of(project: Project, scope: str) -> set[str]:
    if scope in project.stacks:
        return {scope}
    if scope in project.groups:
        return {n for n, s in project.stacks.items() if s.group_name == scope}
    group, dot, stack = scope.partition(".")
    if dot:
        return {n for n, s in project.stacks.items()
                if s.group_name == group and (s.definition == stack or n == stack)}
    return {n for n, s in project.stacks.items() if s.definition == scope}
