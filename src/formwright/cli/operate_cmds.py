"""Commands for stacks already running: `drift`, what changed in the cloud behind the project's back (as
sceptre's `drift detect` / `drift show` and `cdk drift`), every stack at once; `import`, existing resources
brought under a stack (as `cdk import`)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from formwright.cli import common
from formwright.cli.common import (
    DirArgument,
    MacrosOption,
    Output,
    OutputOption,
    ScopeArgument,
    TargetOption,
    YesOption,
    dir_and_scopes,
    emit_json,
    is_project_path,
    with_project_flags,
)
from formwright.cli.deploy_cmds import MaxConcurrencyOption
from formwright.cli.project import connect, open_project, selection
from formwright.errors import InputError

if TYPE_CHECKING:
    from formwright.engine.drift import StackDrift
    from formwright.model.project import Project


def detect_all(project: Project, targets: Any, names: list[str],
               max_concurrency: int) -> dict[str, StackDrift]:
    """Each stack's drift, detected in parallel (each stack in its own account and region): every detection
    is started first, then each is waited for and read, oldest first, so the waits overlap however many
    stacks share a worker. Detections take much the same time: while the oldest is still going the younger
    ones are too, and a worker that comes to an old one reads it at once (engine/drift.py's `wait`)."""
    from concurrent.futures import ThreadPoolExecutor

    from botocore.exceptions import ClientError

    from formwright.cloud.errors import translate
    from formwright.engine.cfn import cloudformation_of
    from formwright.engine.drift import Detection, StackDrift, result, start

    if max_concurrency < 1:
        raise InputError("--max-concurrency must be at least 1")
    clients: dict[int, Any] = {}
    for name in names:  # one CloudFormation per target, made before the threads share it
        target = targets.get(project.stacks[name].target)
        clients.setdefault(id(target), cloudformation_of(target))

    started: dict[str, Detection | StackDrift] = {}

    def guarded(name: str, work: Any) -> Any:
        config = project.stacks[name]
        try:
            return work(clients[id(targets.get(config.target))], config)
        except ClientError as err:
            if "does not exist" in str(err):
                return StackDrift(name, config.stack_name, "NOT_DEPLOYED")
            return StackDrift(name, config.stack_name, "FAILED", error=str(translate(err, where=name)))
        except Exception as err:  # noqa: BLE001 - one stack's failure is reported with it, never a traceback
            return StackDrift(name, config.stack_name, "FAILED", error=str(translate(err, where=name)))

    def begin(name: str) -> None:
        started[name] = guarded(name, lambda cfn, config: start(cfn, config.stack_name))

    def finish(name: str) -> StackDrift:
        begun = started[name]
        if isinstance(begun, StackDrift):
            return begun
        return guarded(name, lambda cfn, config: result(cfn, name, config.stack_name, begun))

    def started_at(name: str) -> float:  # a stack that failed to start comes first: nothing to wait for
        begun = started[name]
        return begun.started if isinstance(begun, Detection) else float("-inf")

    with ThreadPoolExecutor(max_workers=min(max_concurrency, max(1, len(names)))) as pool:
        list(pool.map(begin, names))
        oldest_first = sorted(names, key=started_at)
        drifts = dict(zip(oldest_first, pool.map(finish, oldest_first), strict=True))
    return {name: drifts[name] for name in names}


def print_drift(drifts: dict[str, StackDrift]) -> None:
    """Per stack: its status and counts; per drifted resource each property, expected → actual."""
    from rich.markup import escape

    for drift in drifts.values():
        color = {"IN_SYNC": "green", "DRIFTED": "yellow", "FAILED": "red"}.get(drift.status, "dim")
        head = f"[bold]{escape(drift.name)}[/] ({escape(drift.stack_name)}): [{color}]{drift.status}[/]"
        if drift.status in ("IN_SYNC", "DRIFTED"):
            head += f" - {len(drift.drifted)} drifted, {drift.in_sync} in sync"
            if drift.not_checked:
                head += (f", {drift.not_checked} not checked "
                         f"({escape(', '.join(drift.not_checked_types))}: no drift detection for the type)")
        if drift.error:
            head += f" - {escape(drift.error)}"
        common.console.print(head, highlight=False)
        for resource in drift.drifted:
            physical = f" [dim]({escape(resource.physical_id)})[/]" if resource.physical_id else ""
            common.console.print(f"  [yellow]~[/] {escape(resource.logical_id)} "
                                 f"{escape(resource.resource_type)} {resource.status}{physical}",
                                 highlight=False)
            for prop in resource.properties:
                expected = escape(prop.expected or "(none)")
                actual = escape(prop.actual or "(none)")
                common.console.print(f"      {escape(prop.path)}: [green]{expected}[/] → [red]{actual}[/] "
                                     f"[dim](expected → actual, {prop.kind})[/]", highlight=False)


def register(app: typer.Typer) -> None:
    """Add drift and import to the application."""

    @app.command()
    @with_project_flags
    def drift(directory: Path | None = DirArgument, scope: list[str] | None = ScopeArgument,
              max_concurrency: int = MaxConcurrencyOption, target: str | None = TargetOption,
              output: Output = OutputOption) -> None:
        """Detect drift of every deployed stack (DetectStackDrift, stacks in parallel) and show each \
drifted resource's properties, expected → actual; resources of types drift detection does not check are \
counted. Exit 1 when any stack drifted."""
        directory, scopes = dir_and_scopes(directory, scope)
        project = open_project(directory, scopes)
        only = selection(project, scopes)
        names = [n for n in project.order() if only is None or n in only]
        drifts = detect_all(project, connect(project, target, only), names, max_concurrency)
        drifted = [n for n, d in drifts.items() if d.status == "DRIFTED"]
        failed = [n for n, d in drifts.items() if d.status == "FAILED"]
        if output is Output.json:
            emit_json({"ok": not failed, "drifted": drifted,
                       "stacks": {n: d.to_json() for n, d in drifts.items()}})
        else:
            print_drift(drifts)
            if drifted:
                common.console.print(f"{len(drifted)} of {len(drifts)} stack(s) drifted; "
                                     "`formwright deploy --revert-drift` sets them back to the templates",
                                     highlight=False)
        if drifted or failed:
            sys.stdout.flush()
            raise typer.Exit(1)

    @app.command("import")
    @with_project_flags
    def import_resources(
        args: list[str] = typer.Argument(..., metavar="[DIR] STACK LOGICAL_ID=IDENTIFIER...",
                                         show_default=False,
                                         help="The project folder, the stack, and each resource of its "
                                              "template to import with the existing resource's identifier."),
        yes: bool = YesOption, target: str | None = TargetOption, output: Output = OutputOption,
        macros: str | None = MacrosOption,
    ) -> None:
        """Bring existing resources under a stack with an IMPORT change set: each LOGICAL_ID is a resource \
of the stack's template (with a DeletionPolicy) and IDENTIFIER the existing resource's primary identifier \
(a bucket's name, a queue's URL). Nothing else may change in the same deploy; `import:` on the stack in \
formwright.yaml does the same on every deploy until imported."""
        from formwright.cli.plan_cmds import fill_values
        from formwright.cli.project import confirm, home, lock_project, macro_mode, references
        from formwright.engine.adopt import parse_pairs
        from formwright.engine.group import StackGroup
        from formwright.engine.results import exit_code_of
        from formwright.engine.stack import prepare_stacks

        words = list(args)
        directory = Path(words.pop(0)) if words and is_project_path(words[0]) else None
        if len(words) < 2:
            raise InputError("name the stack and at least one LOGICAL_ID=IDENTIFIER",
                             hint="formwright import store Bucket=my-existing-bucket")
        name, pairs = words[0], words[1:]
        project = open_project(directory)
        if name not in project.stacks:
            from formwright.model.keys import did_you_mean

            raise InputError(f"no stack '{name}' in the project", file=project.file,
                             hint=did_you_mean(name, list(project.stacks)))
        if not yes and (output is Output.json or not sys.stdin.isatty()):
            confirm("Import these resources?", yes, output)  # nobody can answer: say so before any work
        targets = connect(project, target, [name])
        tgt = home(project, targets)
        with lock_project(project, tgt, "import"):
            stacks = prepare_stacks(project, targets=targets, only=[name], **macro_mode(macros))
            stack = stacks[name]
            stack.config.imports = {**stack.config.imports, **parse_pairs(pairs, stack.original, name)}
            group = StackGroup(project, stacks, tgt, targets=targets)
            if not yes:
                from formwright.cli.render import print_plans

                plans = group.plan()
                fill_values(plans, group)
                print_plans(plans, [name], {name: references(project, targets, name)})
                confirm("Import these resources?", yes)
            results = group.deploy(force=True)
        result = results[name]
        if output is Output.json:
            emit_json({"ok": result.ok, "stacks": {name: result.to_json()}})
        else:
            from formwright.cli.render import summary_table

            common.console.print(summary_table(results, [name]))
        if not result.ok:
            raise typer.Exit(exit_code_of(results))
