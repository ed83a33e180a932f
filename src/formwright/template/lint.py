"""Linting templates with cfn-lint's Python API."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

from formwright.template.document import dump_json, line_of, plain


@dataclass(frozen=True)
class LintFinding:
    """One cfn-lint match: where, which rule, what it says, and how bad."""

    file: str
    line: int
    rule: str
    message: str
    level: str  # error | warning | informational
    path: tuple[str | int, ...] = ()  # where in the template, e.g. ("Resources", "Queue", "Properties")

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.rule}: {self.message}"


def lint(
    template: Any, *, file: str, regions: list[str] | None = None, text: str | None = None
) -> list[LintFinding]:
    """Lint a template (data, or its source `text` for exact lines) and return the findings."""
    from cfnlint.config import ConfigMixIn, ManualArgs
    from cfnlint.decode.decode import decode_str
    from cfnlint.runner import run_template_by_data

    source = text if text is not None else dump_json(plain(template))
    # what cfnlint.api.lint does, with the rules loaded once per process (it loads them on every call)
    decoded, matches = decode_str(source)
    if not matches and decoded is not None:
        config = ConfigMixIn(**ManualArgs(regions=regions or ["us-east-1"]))
        matches = list(run_template_by_data(decoded, config, rules()))
    findings = []
    for match in matches or []:
        rule = match.rule.id
        level = {"E": "error", "W": "warning", "I": "informational"}.get(rule[:1], "error")
        # cfn-lint's strings are node classes that do not pickle: plain values cross process boundaries
        path = tuple(p if isinstance(p, int) else str(p) for p in getattr(match, "path", None) or ())
        findings.append(LintFinding(file, int(match.linenumber), str(rule), str(match.message), level, path))
    return findings


@functools.lru_cache(maxsize=1)
def rules() -> Any:
    """cfn-lint's rules (its own and any a .cfnlintrc appends), loaded once per process as cfn-lint's
    own command line does for all the templates it is given (~0.4 s)."""
    from cfnlint.config import ConfigMixIn, ManualArgs
    from cfnlint.runner import Runner

    return Runner(ConfigMixIn(**ManualArgs(regions=["us-east-1"]))).rules


def source_line(original: Any, path: tuple[str | int, ...]) -> int | None:
    """The line in the source document of the deepest part of `path` it has (None: not even the first
    key), so that a finding in a processed template points at what the user wrote."""
    node, line = original, None
    for key in path:
        if isinstance(node, dict) and key not in node:
            # a macro's copy of a resource (Queue -> Queue1, Queue2) points at the resource it copies
            key = max((k for k in node if isinstance(k, str) and str(key).startswith(k)), key=len,
                      default=key)
        if isinstance(node, dict) and key in node:
            line = line_of(node, str(key)) or line
            node = node[key]
        elif isinstance(node, list) and isinstance(key, int) and 0 <= key < len(node):
            line = line_of(node[key]) or line
            node = node[key]
        else:
            break
    return line
