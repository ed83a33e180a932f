"""Project commands that read the cloud: status, outputs, diff, events."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import typer

from formwright.cli import common
from formwright.cli.common import (
    DirArgument,
    Output,
    OutputOption,
    ScopeArgument,
    StackOption,
    TargetOption,
    columns,
    dir_and_scopes,
    emit_json,
    is_project_path,
    with_project_flags,
)
from formwright.cli.project import check_stacks, connect, deployed, open_project, selection
from formwright.cli.stacks_cmds import StackNameOption, lone_stack, require_stack
from formwright.errors import CloudError, InputError


def split_outputs_args(args: list[str]) -> tuple[Path | None, str | None, str | None]:
    """`[DIR] [STACK [KEY]]`: the first word is DIR when it names a project folder or file."""
    words = list(args)
    directory = None
    if words and is_project_path(words[0]):
        directory = Path(words.pop(0))
    if len(words) > 2:
        raise InputError(f"unexpected argument '{words[2]}'",
                         hint="usage: formwright outputs [DIR] [STACK [KEY]]")
    return directory, (words[0] if words else None), (words[1] if len(words) > 1 else None)


def _one_stack(scope: str | None, nodes: list[str] | None) -> str:
    """The one stack a scope names (an output KEY needs one: a group or a per-region stack is several)."""
    nodes = nodes or []
    if len(nodes) != 1:
        first = nodes[0] if nodes else "STACK"
        raise InputError(f"'{scope}' is {len(nodes)} stacks ({', '.join(nodes)}); an output KEY is read "
                         "from one", hint=f"name one: formwright outputs {first} KEY")
    return nodes[0]


def masked_as_applied(project: Any, targets: Any, values: dict[str, dict[str, str]]) -> None:
    """Mask each output the applied cache recorded masked (it carried a secret: a NoEcho parameter or a
    resolved secret); CloudFormation shows outputs in clear, formwright does not repeat them."""
    from formwright.engine.group import cache_key
    from formwright.engine.values import SECRET_MASK
    from formwright.state.applied import AppliedCache

    for name, outputs in values.items():
        cache = AppliedCache(project.state_dir, cache_key(project, targets.get(project.stacks[name].target)))
        record = cache.get(name)
        for key, value in (record.outputs.items() if record is not None else ()):
            if value == SECRET_MASK and key in outputs:
                outputs[key] = SECRET_MASK


def only_stack_name(directory: Path | None, scopes: list[str]) -> None:
    """--stack-name reads one stack outside any project: a project folder or scope besides it is refused."""
    if directory is not None or scopes:
        given = str(directory) if directory is not None else scopes[0]
        raise InputError(f"--stack-name reads a stack outside any project; '{given}' is not used with it",
                         hint="leave out DIR and SCOPE, or leave out --stack-name")


def lone_outputs(stack_name: str, words: list[str], target: str | None, output: Output) -> None:
    """`outputs --stack-name NAME [KEY]`: a stack's outputs (or one value) outside any project."""
    if len(words) > 1:
        raise InputError(f"unexpected argument '{words[1]}'",
                         hint="usage: formwright outputs --stack-name NAME [KEY]")
    values = require_stack(lone_stack(target), stack_name).outputs
    if words:
        key = words[0]
        if key not in values:
            raise InputError(f"stack '{stack_name}' has no output '{key}'",
                             hint=f"outputs: {', '.join(sorted(values)) or 'none'}")
        if output is Output.json:
            emit_json({"ok": True, "stack": stack_name, "key": key, "value": values[key]})
        else:
            sys.stdout.write(values[key] + "\n")
        return
    if output is Output.json:
        emit_json({"ok": True, "outputs": {stack_name: values}})
    else:
        from formwright.cli.render import outputs_table

        common.console.print(outputs_table({stack_name: values}, [stack_name]))


def register(app: typer.Typer) -> None:
    """Add status, outputs, diff and events to the application."""

    @app.command()
    @with_project_flags
    def status(directory: Path | None = DirArgument, scope: list[str] | None = ScopeArgument,
               stack_name: str | None = StackNameOption,
               target: str | None = TargetOption, output: Output = OutputOption) -> None:
        """Each stack's CloudFormation status and last update (of the scopes' stacks); --stack-name: a \
stack in no project."""
        directory, scope = dir_and_scopes(directory, scope)
        rows = {}
        regions: dict[str, str] = {}
        if stack_name is not None:
            only_stack_name(directory, scope)
            lone = require_stack(lone_stack(target), stack_name)
            rows[stack_name] = {"stack_name": stack_name, "status": lone.status,
                                "updated": lone.updated.isoformat() if lone.updated else None,
                                "reason": lone.reason}
        else:
            project = open_project(directory, scope)
            only = selection(project, scope)
            targets = connect(project, target, only)
            for name, info in deployed(project, targets, only).items():
                regions[name] = targets.get(project.stacks[name].target).region
                rows[name] = {"stack_name": project.stacks[name].stack_name,
                              "status": info.status if info else "NOT_DEPLOYED", "region": regions[name],
                              "updated": info.updated.isoformat() if info and info.updated else None,
                              "reason": info.reason if info else ""}
        if output is Output.json:
            emit_json({"ok": True, "stacks": rows})
            return
        several = len(set(regions.values())) > 1  # a multi-region project: which copy is where
        headers = ["stack", "cloud name", *(["region"] if several else []), "status", "updated"]
        sys.stdout.write(columns(headers,
                                 [[name, str(row["stack_name"]), *([regions[name]] if several else []),
                                   str(row["status"]), row["updated"] or ""] for name, row in rows.items()]))

    @app.command()
    @with_project_flags
    def outputs(args: list[str] | None = typer.Argument(
                    None, metavar="[DIR] [STACK [KEY]]", show_default=False,
                    help="The project folder, a stack, one output key."),
                stack_name: str | None = StackNameOption,
                target: str | None = TargetOption, output: Output = OutputOption) -> None:
        """The outputs of every deployed stack; with STACK its outputs, with KEY just the value \
(for scripts: `url=$(formwright outputs app Url)`); --stack-name NAME [KEY]: a stack in no project."""
        from formwright.cli.render import outputs_table

        if stack_name is not None:
            lone_outputs(stack_name, args or [], target, output)
            return
        directory, scope, key = split_outputs_args(args or [])
        project = open_project(directory, [scope] if scope else None)
        only = selection(project, [scope] if scope else None)
        targets = connect(project, target, only)
        values = {name: info.outputs for name, info in deployed(project, targets, only).items()
                  if info is not None}
        masked_as_applied(project, targets, values)
        stack = _one_stack(scope, only) if key is not None or (only and len(only) == 1) else None
        if stack is not None and stack not in values:
            from formwright.errors import CloudError

            raise CloudError(f"stack '{stack}' is not deployed",
                             hint=f"deploy it: formwright deploy {stack}")
        if key is not None:
            assert stack is not None
            if key not in values[stack]:
                raise InputError(f"stack '{stack}' has no output '{key}'",
                                 hint=f"outputs: {', '.join(sorted(values[stack])) or 'none'}")
            if output is Output.json:
                emit_json({"ok": True, "stack": stack, "key": key, "value": values[stack][key]})
            else:
                sys.stdout.write(values[stack][key] + "\n")
            return
        if output is Output.json:
            emit_json({"ok": True, "outputs": values})
        else:
            common.console.print(outputs_table(values, project.order()))

    @app.command()
    @with_project_flags
    def diff(directory: Path | None = DirArgument, scope: list[str] | None = ScopeArgument,
             stack: list[str] | None = StackOption,
             stack_name: str | None = StackNameOption,
             template: Path | None = typer.Option(None, "--template", metavar="FILE",
                                                  help="With --stack-name: the local template to compare."),
             target: str | None = TargetOption, output: Output = OutputOption,
             exit_code: bool = typer.Option(False, "--exit-code",
                                            help="Exit 1 when anything differs.")) -> None:
        """Unified diff of each local processed template, its parameters and tags against the deployed \
ones, in the template's own format (YAML for YAML); --exit-code exits 1 on differences; --stack-name NAME \
--template FILE: a stack in no project."""
        from formwright.cli.diffing import lone_diff, print_diff, stack_diffs

        directory, scope = dir_and_scopes(directory, scope)
        stack = [*scope, *(stack or [])]
        if stack_name is not None:
            only_stack_name(directory, stack)
            diffs = {stack_name: lone_diff(lone_stack(target), stack_name, template)}
        else:
            project = open_project(directory, stack)
            check_stacks(project, stack)
            only = selection(project, stack)
            diffs = stack_diffs(project, connect(project, target, only), only)
        if output is Output.json:
            emit_json({"ok": True, "diffs": diffs, "changed": [n for n, d in diffs.items() if d]})
        else:
            from rich.markup import escape

            for name, text in diffs.items():
                common.console.print(f"[bold]{escape(name)}[/]: " + ("no differences" if not text else ""))
                if text:
                    print_diff(text)
        if exit_code and any(diffs.values()):
            raise typer.Exit(1)

    @app.command()
    @with_project_flags
    def events(directory: Path | None = DirArgument, scope: list[str] | None = ScopeArgument,
               stack: list[str] | None = StackOption,
               stack_name: str | None = StackNameOption,
               follow: bool = typer.Option(False, "--follow", "-f",
                                           help="Keep printing new events until the stacks settle."),
               limit: int = typer.Option(20, "--limit", "-n", metavar="N", help="Past events per stack."),
               target: str | None = TargetOption, output: Output = OutputOption) -> None:
        """Stack events, oldest first: the last N of each stack (default: every deployed stack); \
--follow streams new ones (JSON: one object per line) until no stack is in progress; --stack-name: a stack \
in no project."""
        from formwright.cli.events import watch
        from formwright.engine.cfn import CloudFormation

        directory, scope = dir_and_scopes(directory, scope)
        stack = [*scope, *(stack or [])]
        if stack_name is not None:
            only_stack_name(directory, stack)
            lone = lone_stack(target)
            require_stack(lone, stack_name)
            cloud_names, cfn = {stack_name: stack_name}, {stack_name: lone}
        else:
            project = open_project(directory, stack)
            only = selection(project, stack)
            targets = connect(project, target, only)
            found = deployed(project, targets, only)
            missing = [n for n, info in found.items() if only and info is None]
            if missing:
                raise CloudError(f"not deployed: {', '.join(missing)} (no events to show)",
                                 hint=f"deploy it: formwright deploy {missing[0]}")
            names = [n for n, info in found.items() if info is not None]
            cloud_names = {n: project.stacks[n].stack_name for n in names}
            cfn = {n: CloudFormation(targets.get(project.stacks[n].target).client("cloudformation"))
                   for n in names}
        rows = watch(cloud_names, cfn, list(cloud_names), limit=limit, follow=follow, output=output)
        if output is Output.json and not follow:
            emit_json({"ok": True, "events": [{k: v for k, v in r.items() if k != "id"} for r in rows]})
