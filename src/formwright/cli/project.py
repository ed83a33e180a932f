"""Steps the project commands share: open the project, pick stacks, connect, confirm."""

from __future__ import annotations

import functools
import inspect
import sys
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from formwright.cli import common
from formwright.cli.common import (
    DirArgument,
    Output,
    ScopeArgument,
    StackOption,
    dir_and_scopes,
    project_dir,
    project_flags,
)
from formwright.errors import EXIT_CANCELLED, EXIT_INTERRUPTED, InputError

if TYPE_CHECKING:
    from formwright.cloud.session import Target, Targets
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


def open_project(directory: Path | None, stacks: list[str] | None = None, *,
                 any_environment: bool = False) -> Project:
    """Load the project of a `[DIR]` argument with --env/--var/--region/--profile, one stack per region
    of a `regions:` stack, and check the scopes and --stack names. A project with environments needs one
    (--env or `default_environment:`) unless `any_environment` (the graph, drawn the same in each)."""
    from formwright.model.apart import check_apart
    from formwright.model.environments import require_environment
    from formwright.model.project import load_project

    folder = project_dir(directory)
    options = project_flags.load_options()
    project = load_project(folder, **options)
    if not any_environment:
        require_environment(project.raw, project.directory, project.environment, project.file)
    check_apart(project, lambda env: load_project(folder, **{**options, "environment": env}))
    if any(config.regions for config in project.stacks.values()):
        from formwright.cloud.session import default_region
        from formwright.model.regions import fan_out

        # the default region costs a boto3 session: only a `regions:` stack needs it here
        fan_out(project, project.region or default_region(project.target.profile))
    check_stacks(project, stacks)
    return project


_SELECTION = {  # name: (annotation, typer parameter), in the order they stand on the command line
    "directory": (Path | None, DirArgument),
    "scope": (list[str] | None, ScopeArgument),
    "stack": (list[str] | None, StackOption),
}


def with_selection(command: Callable[..., Any]) -> Callable[..., Any]:
    """Give a project command `[DIR] [SCOPE]...` and `--stack NAME` (repeatable); it is called with the
    project they name opened (`open_project`) as `project`, and the scopes and stacks named as `wanted`.
    Put it under `@with_project_flags`, which sets the flags the project is opened with."""
    signature = inspect.signature(command)

    @functools.wraps(command)
    def wrapper(*args: Any, directory: Path | None = None, scope: list[str] | None = None,
                stack: list[str] | None = None, **kwargs: Any) -> Any:
        folder, scopes = dir_and_scopes(directory, scope)
        wanted = [*scopes, *(stack or [])]
        return command(*args, project=open_project(folder, wanted), wanted=wanted, **kwargs)

    given = [inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=param, annotation=kind)
             for name, (kind, param) in _SELECTION.items()]
    own = [p for name, p in signature.parameters.items() if name not in ("project", "wanted")]
    wrapper.__signature__ = signature.replace(parameters=[*given, *own])  # type: ignore[attr-defined]
    wrapper.__annotations__ = {**{k: v for k, v in command.__annotations__.items()
                                  if k not in ("project", "wanted")},
                               **{name: kind for name, (kind, _) in _SELECTION.items()}}
    return wrapper


def check_stacks(project: Project, stacks: list[str] | None) -> None:
    """Every scope or --stack name names part of the project (a group, a stack, a region's copy)."""
    from formwright.model.scopes import resolve_scopes

    resolve_scopes(project, stacks or [])


def selection(project: Project, stacks: list[str] | None, *, dependencies: bool = False,
              dependents: bool = False) -> list[str] | None:
    """The stacks the scopes name, grown by their dependencies (deploy) or dependents (delete)."""
    from formwright.model.scopes import resolve_scopes

    if not stacks:
        return None
    chosen, todo = set(), resolve_scopes(project, stacks)
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


def connect(project: Project, target_flag: str | None, only: list[str] | None = None) -> Targets:
    """The targets of the project's stacks; each selected stack's pinned account is checked first
    (GetCallerIdentity: a mismatch is exit 2 naming both accounts, before any write)."""
    from formwright.cloud.session import Targets, region_note

    note = region_note(project.region, project_flags.region) if project.region else None
    if note:
        common.err_console.print(f"note: {note}", highlight=False)
    targets = Targets(target_flag)
    targets.get(project.target).prefetch_account()
    for name in only or project.order():
        targets.get(project.stacks[name].target).check_account(f"stack '{name}'")
    return targets


def lock_project(project: Project, target: Target, what: str) -> AbstractContextManager[None]:
    """The project's writer lock on this target, for a whole command (exit 3 when another holds it)."""
    from formwright.engine.group import lock_key
    from formwright.state.lock import project_lock

    return project_lock(project.state_dir, lock_key(project, target), what)


def home(project: Project, targets: Targets) -> Target:
    """The project-level target (the default of stacks that name no region or account of their own)."""
    return targets.get(project.target)


def make_group(project: Project, targets: Targets, only: list[str] | None, max_concurrency: int,
               progress: Any, counter: CallCounter | None = None, macros: str | None = None, *,
               package: bool = True, resolve: bool = True) -> StackGroup:
    """Stacks prepared for their own targets, on their DAG. A delete needs neither their local artifacts
    packaged (`package=False`) nor their resolvers fetched (`resolve=False`)."""
    from formwright.engine.group import StackGroup
    from formwright.engine.stack import prepare_stacks

    stacks = prepare_stacks(project, targets=targets, only=only, package=package, resolve=resolve,
                            **macro_mode(macros))
    return StackGroup(project, stacks, home(project, targets), max_concurrency=max_concurrency,
                      progress=progress, counter=counter, targets=targets)


def deployed(project: Project, targets: Targets,
             only: list[str] | None = None) -> dict[str, StackInfo | None]:
    """What describe_stacks says of the stacks, each in its own account and region, in dependency order
    (None: not deployed). Several stacks are asked at once (8 at a time): 30 stacks cost about the
    time of 4 calls, not 30."""
    from formwright.engine.cfn import CloudFormation

    names = [name for name in project.order() if only is None or name in only]

    def describe(name: str) -> StackInfo | None:
        config = project.stacks[name]
        return CloudFormation(targets.get(config.target).client("cloudformation")).describe(config.stack_name)

    if len(names) <= 1:
        return {name: describe(name) for name in names}
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=min(8, len(names))) as pool:
        return dict(zip(names, pool.map(describe, names), strict=True))


def references(project: Project, targets: Targets, name: str) -> list[dict[str, str]]:
    """Where each `!ref` of a stack comes from: parameter, stack, output, account and region; and each
    resolver's source (`{"parameter": "DbHost", "source": "ssm:/app/db/host"}`)."""
    from formwright.model.project import OutputRef
    from formwright.model.resolvers import ValueSource

    found = []
    for key, value in project.stacks[name].parameters.items():
        for ref in value if isinstance(value, list) else [value]:
            if isinstance(ref, ValueSource):
                found.append({"parameter": key, "source": ref.label})
            elif isinstance(ref, OutputRef):
                source = targets.get(project.stacks[ref.stack].target)
                found.append({"parameter": key, "stack": ref.stack, "output": ref.output,
                              "account": source.account_id(), "region": source.region})
    config = project.stacks[name]
    written = {**config.tag_sources, **{k: v for k, v in config.tags.items() if isinstance(v, ValueSource)}}
    found += [{"tag": key, "source": value.label} for key, value in sorted(written.items())]
    return found


def confirm(question: str, yes: bool, output: Output = Output.text) -> None:
    """Ask unless --yes; refuse to guess when nobody can answer (or when stdout is JSON for a script).
    A declined prompt prints "Cancelled; nothing changed." and exits EXIT_CANCELLED (4); Ctrl-C (or the end
    of input) at the prompt says the same and exits EXIT_INTERRUPTED (130), not click's "Aborted!" and 1."""
    if yes:
        return
    if output is Output.json:
        raise InputError(
            f"{question} needs confirmation, and --output json cannot ask", hint="add --yes (-y)"
        )
    if not sys.stdin.isatty():
        raise InputError(f"{question} needs confirmation", hint="pass --yes (-y) when not at a terminal")
    try:
        answer = typer.confirm(question, default=False)
    except typer.Abort:
        common.console.print(f"\n{CANCELLED}")
        raise typer.Exit(EXIT_INTERRUPTED) from None
    if not answer:
        common.console.print(CANCELLED)
        raise typer.Exit(EXIT_CANCELLED)
