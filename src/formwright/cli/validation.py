"""`formwright validate`: the project as deploy would see it, without cloud calls, linted.

Each distinct template is linted once (thirty stacks sharing one template are one cfn-lint run), several
at once in worker processes; the first worker starts loading cfn-lint before the project is loaded. A
template that cfn-lint reads as written (no macros, or only the transforms cfn-lint expands itself) is
linted from its source text; a template expanded by formwright is linted in its processed form and every
finding is mapped back to the line of the source template it comes from.
"""

from __future__ import annotations

import hashlib
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from formwright.cli.common import Output, console, emit_json, err_console, error_entry
from formwright.cli.project import macro_mode
from formwright.errors import EXIT_BAD_INPUT, FormwrightError
from formwright.template import dump_json, plain
from formwright.template.lint_workers import LintWorkers

if TYPE_CHECKING:
    from formwright.engine.stack import Stack
    from formwright.template.lint import LintFinding

# cfn-lint expands these itself (SAM through aws-sam-translator, ForEach & co. natively): linting the
# source keeps its exact lines and its own knowledge of what the transform accepts
CFN_LINT_TRANSFORMS = {"AWS::Serverless-2016-10-31", "AWS::LanguageExtensions"}
# Rules a formwright expansion can trip although the source is fine: a parameter that only a macro
# reads is gone from the processed template
EXPANSION_ONLY = {"W2001"}


@dataclass
class LintJob:
    """One distinct template to lint, and the stacks that share it."""

    file: str  # the source template, where findings point
    text: str  # what cfn-lint reads
    expanded: bool  # text is formwright's processed form (map lines back through `original`)
    stacks: list[str]


def run_validate(directory: Path, *, output: Output, macros: str | None, lint_templates: bool) -> None:
    """Load, prepare, check and lint the project at `directory`; exit 2 when any error was found."""
    from formwright.cli.common import project_flags
    from formwright.engine.stack import check_output_references, prepare_stacks
    from formwright.lifecycle.rendering import load_for_validation
    from formwright.model.regions import fan_out
    from formwright.template import check_size

    workers = LintWorkers().start() if lint_templates else None  # cfn-lint loads while the project does
    try:
        project = load_for_validation(directory, **project_flags.load_options())
        environments = check_environments(project, directory)
        fan_out(project, project.region or "us-east-1")
        stacks = prepare_stacks(project, **macro_mode(macros))
        check_output_references(stacks, project)
        region = project.region or "us-east-1"
        jobs: dict[str, LintJob] = {}
        originals: dict[str, Any] = {}
        for stack in stacks.values():
            _, body = stack.processed(stack.resolve_parameters({}, partial=True), region=region)
            source = str(stack.config.template or stack.config.tosca)
            check_size(body, where=stack.name, file=source)  # as deploy
            if workers is not None:
                for job, original in [(lint_job(stack, body), stack.original), *nested_jobs(stack)]:
                    key = hashlib.sha256(f"{job.file}\0{job.text}".encode()).hexdigest()
                    if key in jobs:
                        jobs[key].stacks.append(stack.name)
                    else:
                        jobs[key] = job
                    originals[job.file] = original
        findings = lint_jobs(list(jobs.values()), originals, region, show=output is Output.text,
                             workers=workers) if workers is not None else []
    finally:
        if workers is not None:
            workers.close()
    errors = [f for f in findings if f.level == "error"]
    if output is Output.json:
        emit_json({"ok": not errors, "project": project.name, "stacks": list(stacks), "valid": not errors,
                   "environments_checked": environments,
                   "templates_linted": len(jobs),
                   "errors": [error_entry(f"{f.rule}: {f.message}", file=f.file, line=f.line)
                              for f in errors],
                   "findings": [{k: v for k, v in f.__dict__.items() if k != "path"} for f in findings]})
    else:
        for finding in findings:
            print(str(finding), file=sys.stderr if finding.level == "error" else sys.stdout)
        console.print(f"{project.name}: {len(stacks)} stacks, {len(jobs)} distinct templates linted, "
                      f"{len(errors)} errors, {len(findings) - len(errors)} warnings", highlight=False)
        if environments:
            console.print(f"environments loaded and checked: {', '.join(environments)} (lint one with --env)",
                          highlight=False)
    if errors:
        raise typer.Exit(EXIT_BAD_INPUT)


def check_environments(project: Any, directory: Path) -> list[str]:
    """Environments kept apart (model.apart) and, without --env, each environment's overlay loaded too (keys,
    targets, references, regions), so that a mistake in environments/prod.yaml fails the CI gate, not
    `deploy --env prod`. The names of the environments loaded besides the project's own."""
    from formwright.cli.common import project_flags
    from formwright.lifecycle.rendering import load_for_validation
    from formwright.model.apart import check_apart
    from formwright.model.environments import environment_names
    from formwright.model.regions import fan_out

    def load(environment: str | None) -> Any:
        return load_for_validation(directory, **{**project_flags.load_options(), "environment": environment})

    check_apart(project, load)
    if project.environment:
        return []
    names = environment_names(project.raw, project.directory)
    for name in names:
        try:
            overlaid = load(name)
            fan_out(overlaid, overlaid.region or "us-east-1")
            check_apart(overlaid, load)
        except FormwrightError as err:
            err.message = f"environment '{name}': {err.message}"
            err.args = (err.message,)
            raise
    return names


def lint_job(stack: Stack, body: str) -> LintJob:
    """What to lint for this stack: its source text when cfn-lint can read it as written, else the
    processed body (TOSCA output, user macros, AWS::Include)."""
    source = Path(stack.source)
    transforms = stack.original.get("Transform") if isinstance(stack.original, dict) else None
    names = set(transforms if isinstance(transforms, list) else [transforms] if transforms else [])
    cfn_lint_expands = bool(names) and names <= CFN_LINT_TRANSFORMS and not _has_fn_transform(stack.original)
    as_written = (stack.config.tosca is None and source.is_file()
                  and (not stack.uses_macros() or cfn_lint_expands))
    if as_written and stack.artifacts:  # local paths packaged: cfn-lint reads what CloudFormation will
        return LintJob(str(source), dump_json(plain(stack.original)), True, [stack.name])
    if as_written:
        return LintJob(str(source), source.read_text(encoding="utf-8"), False, [stack.name])
    if stack.config.tosca is not None:  # the generated template is the nearest thing to a source
        generated = stack.build_dir / "tosca" / "template.yaml"
        if generated.is_file():
            return LintJob(str(generated), generated.read_text(encoding="utf-8"), False, [stack.name])
        return LintJob(str(stack.write_build(stack.original)), body, True, [stack.name])
    return LintJob(str(source), body, True, [stack.name])


def nested_jobs(stack: Stack) -> list[tuple[LintJob, Any]]:
    """A lint job for each nested template the stack packaged (as packaged; findings at its own lines)."""
    return [(LintJob(str(nested.file), dump_json(plain(nested.template)), True, [stack.name]),
             nested.source or nested.template) for nested in getattr(stack, "nested", [])]


def _has_fn_transform(original: Any) -> bool:
    """True when the template calls a macro inline (Fn::Transform, e.g. AWS::Include)."""
    from formwright.macros.engine import has_macros

    return has_macros({k: v for k, v in original.items() if k != "Transform"})


def lint_jobs(jobs: list[LintJob], originals: dict[str, Any], region: str, *, show: bool,
              workers: LintWorkers) -> list[LintFinding]:
    """Lint every job in the worker processes (several at once), findings in source terms."""
    what = f"{len(jobs)} templates" if len(jobs) != 1 else "1 template"
    status = err_console.status(f"linting {what}") if show and jobs and err_console.is_terminal else None
    if status is not None:
        status.start()
    try:
        results = workers.run([(job.text, job.file, region) for job in jobs], progress=None if status is None
                              else lambda done: status.update(f"linting templates: {done}/{len(jobs)} done"))
    finally:
        if status is not None:
            status.stop()
    findings: dict[LintFinding, None] = {}  # copies a macro made of one resource say the same thing once
    for job, found in zip(jobs, results, strict=True):
        for finding in found:
            if job.expanded:
                if finding.rule in EXPANSION_ONLY:
                    continue
                finding = _to_source(finding, originals.get(job.file))
            findings[finding] = None
    return list(findings)


def _to_source(finding: LintFinding, original: Any) -> LintFinding:
    """The finding with the line of the source template (its path walked in the original)."""
    from formwright.template.lint import source_line

    line = source_line(original, finding.path) if original is not None else None
    return replace(finding, line=line or 1, path=())
