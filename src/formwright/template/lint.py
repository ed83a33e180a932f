"""Linting templates with cfn-lint's Python API."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from formwright.template.document import dump_json, plain


@dataclass(frozen=True)
class LintFinding:
    """One cfn-lint match: where, which rule, what it says, and how bad."""

    file: str
    line: int
    rule: str
    message: str
    level: str  # error | warning | informational

    def __str__(self) -> str:
        return f"{self.file}:{self.line}: {self.rule}: {self.message}"


def lint(
    template: Any, *, file: str, regions: list[str] | None = None, text: str | None = None
) -> list[LintFinding]:
    """Lint a template (data, or its source `text` for exact lines) and return the findings."""
    from cfnlint.api import ManualArgs
    from cfnlint.api import lint as cfn_lint

    source = text if text is not None else dump_json(plain(template))
    args = ManualArgs(regions=regions or ["us-east-1"])
    findings = []
    for match in cfn_lint(source, config=args):
        rule = match.rule.id
        level = {"E": "error", "W": "warning", "I": "informational"}.get(rule[:1], "error")
        findings.append(LintFinding(file, match.linenumber, rule, match.message, level))
    return findings
