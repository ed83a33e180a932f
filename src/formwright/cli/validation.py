"""`formwright validate`: the project as deploy would see it, without cloud calls, linted."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from formwright.cli.common import Output, console, emit_json, error_entry
from formwright.cli.project import macro_mode
from formwright.errors import EXIT_BAD_INPUT

if TYPE_CHECKING:
    from formwright.engine.stack import Stack
    from formwright.model.project import Project
    from formwright.template.lint import LintFinding


def run_validate(directory: Path, *, output: Output, macros: str | None, lint_templates: bool) -> None:
    """Load, prepare, check and lint the project at `directory`; exit 2 when any error was found."""
    from formwright.engine.stack import check_output_references, prepare_stacks
    from formwright.lifecycle.manifest import load_for_validation

    project = load_for_validation(directory)
    stacks = prepare_stacks(project, **macro_mode(macros))
    check_output_references(stacks, project)
    findings: list[LintFinding] = []
    for stack in stacks.values():
        template, _ = stack.processed(stack.resolve_parameters({}, partial=True),
                                      region=project.region or "us-east-1")
        if lint_templates:
            findings.extend(_lint_stack(stack, template, project))
    errors = [f for f in findings if f.level == "error"]
    if output is Output.json:
        emit_json({"ok": not errors, "project": project.name, "stacks": list(stacks), "valid": not errors,
                   "errors": [error_entry(f"{f.rule}: {f.message}", file=f.file, line=f.line)
                              for f in errors],
                   "findings": [f.__dict__ for f in findings]})
    else:
        for finding in findings:
            print(str(finding), file=sys.stderr if finding.level == "error" else sys.stdout)
        console.print(f"{project.name}: {len(stacks)} stacks, {len(errors)} errors, "
                      f"{len(findings) - len(errors)} warnings")
    if errors:
        raise typer.Exit(EXIT_BAD_INPUT)


def _lint_stack(stack: Stack, template: dict[str, Any], project: Project) -> list[LintFinding]:
    """cfn-lint findings with lines in the file the user wrote (or in the processed build output)."""
    from formwright.template.lint import lint

    source = Path(stack.source)
    if not stack.uses_macros() and source.is_file() and stack.config.tosca is None:
        return lint(template, file=str(source), regions=[project.region or "us-east-1"],
                    text=source.read_text(encoding="utf-8"))
    path = stack.write_build(template)
    return lint(template, file=str(path), regions=[project.region or "us-east-1"],
                text=path.read_text(encoding="utf-8"))
