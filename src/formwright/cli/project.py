"""Steps the project commands share: open the project, pick stacks, connect, confirm."""

from __future__ import annotations

import sys
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from formwright.cli.common import Output, console, project_dir
from formwright.errors import EXIT_CANCELLED, InputError

if TYPE_CHECKING:
    from formwright.cloud.session import Target
    from formwright.engine.cfn import CallCounter, StackInfo
    from formwright.engine.group import StackGroup
    from formwright.model.project import Project

CANCELLED = "Cancelled; nothing changed."


def macro_mode(value: str | None) -> dict[str, Any]:
    """prepare_stacks arguments for the --macros flag."""
    if value is None:
        return {}
    if value == "remote":
        return {"remote_macros": True}
    folder = Path(value)
    if not folder.is_dir():
        raise InputError(f"--macros {value}: no such folder", hint="give a folder of macros, or `remote`")
    return {"macros_dir": folder}


def open_project(directory: Path | None, stacks: list[str] | None = None) -> Project:
    """Load the project of a `[DIR]` argument and check --stack names."""
    from formwright.model.project import load_project

    project = load_project(project_dir(directory))
    check_stacks(project, stacks)
    return project


def check_stacks(project: Project, stacks: list[str] | None) -> None:
    """Every --stack name is a stack of the project."""
    for name in stacks or []:
        if name not in project.stacks:
            from formwright.errors import ProjectError

            raise ProjectError(f"unknown stack '{name}'", file=project.file,
                               hint=f"stacks: {', '.join(project.stacks)}")


def selection(project: Project, stacks: list[str] | None, *, dependencies: bool = False,
              dependents: bool = False) -> list[str] | None:
    """The selected stacks, grown by their dependencies (deploy) or dependents (delete)."""
    if not stacks:
        return None
    chosen, todo = set(), list(stacks)
    down = project.dependents()
    while todo:
        name = todo.pop()
        if name in chosen:
            continue
        chosen.add(name)
        if dependencies:
            todo.extend(project.stacks[name].dependencies())
        if dependents:
            todo.extend(down.get(name, ()))
    return sorted(chosen)


def connect(project: Project, target_flag: str | None) -> Target:
    """The target for this project (its region)."""
    from formwright.cloud.session import resolve_target

    return resolve_target(target_flag, project.region)


def lock_project(project: Project, target: Target, what: str) -> AbstractContextManager[None]:
    """The project's writer lock on this target, for a whole command (exit 3 when another holds it)."""
    from formwright.engine.group import target_key
    from formwright.state.lock import project_lock

    return project_lock(project.state_dir, target_key(target), what)


def make_group(project: Project, target: Target, only: list[str] | None, max_concurrency: int,
               progress: Any, counter: CallCounter | None = None, macros: str | None = None) -> StackGroup:
    """Stacks prepared for the target, on their DAG."""
    from formwright.engine.group import StackGroup
    from formwright.engine.stack import prepare_stacks

    stacks = prepare_stacks(project, target=target, only=only, **macro_mode(macros))
    return StackGroup(
        project, stacks, target, max_concurrency=max_concurrency, progress=progress, counter=counter
    )


def deployed(project: Project, target: Target) -> dict[str, StackInfo | None]:
    """What describe_stacks says of every project stack, in dependency order (None: not deployed)."""
    from formwright.engine.cfn import CloudFormation

    cfn = CloudFormation(target.client("cloudformation"))
    return {name: cfn.describe(project.stacks[name].stack_name) for name in project.order()}


def confirm(question: str, yes: bool, output: Output = Output.text) -> None:
    """Ask unless --yes; refuse to guess when nobody can answer (or when stdout is JSON for a script).
    A declined prompt prints "Cancelled; nothing changed." and exits EXIT_CANCELLED (4)."""
    if yes:
        return
    if output is Output.json:
        raise InputError(
            f"{question} needs confirmation, and --output json cannot ask", hint="add --yes (-y)"
        )
    if not sys.stdin.isatty():
        raise InputError(f"{question} needs confirmation", hint="pass --yes (-y) when not at a terminal")
    if not typer.confirm(question, default=False):
        console.print(CANCELLED)
        raise typer.Exit(EXIT_CANCELLED)
