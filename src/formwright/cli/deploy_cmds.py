"""Project commands that change or preview the cloud: plan, deploy, delete."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import typer

from formwright.cli import common  # its consoles (rich) are made on first use
from formwright.cli.common import (
    DirArgument,
    MacrosOption,
    Output,
    OutputOption,
    ScopeArgument,
    StackOption,
    TargetOption,
    YesOption,
    dir_and_scopes,
    emit_json,
    with_project_flags,
)
from formwright.cli.project import (
    confirm,
    connect,
    home,
    lock_project,
    macro_mode,
    make_group,
    open_project,
    references,
    selection,
)

MaxConcurrencyOption = typer.Option(8, "--max-concurrency", metavar="N", help="Stacks worked on at once.")


def fill_values(plans: dict[str, Any], group: Any) -> None:
    """Old -> new values of each changed property the change set names without values, from the
    deployed processed template (get_template) and the local one the plan wrote to the build folder."""
    from botocore.exceptions import ClientError

    from formwright.engine.nested import fill_nested_values
    from formwright.template import loads

    for name, plan in plans.items():
        if name in group.stacks and getattr(group.stacks[name], "nested", None):
            fill_nested_values(group.runner_for(group.stacks[name]).cfn, plan, group.stacks[name])
        changes = [c for c in plan.resources
                   if c.action == "Modify" and (not c.details or any(not p.known for p in c.details))]
        if not changes or name not in group.stacks:
            continue
        try:
            body = group.runner_for(group.stacks[name]).cfn.call("get_template", StackName=plan.stack_name,
                                  TemplateStage="Processed")["TemplateBody"]
            old = loads(body) if isinstance(body, str) else body
        except ClientError:
            old = None
        built = group.stacks[name].build_dir / "processed.json"
        new = loads(built.read_text(encoding="utf-8")) if built.is_file() else None
        for change in changes:
            change.fill_values(old, new)


def check_protection(project: Any, targets: Any, names: list[str]) -> None:
    """Refuse before deleting anything when any stack to delete has termination protection (CloudFormation
    would refuse that one stack after its dependents were already gone)."""
    from formwright.cli.project import deployed
    from formwright.errors import InputError

    infos = deployed(project, targets, names)
    protected = [n for n in names if (info := infos.get(n)) is not None and info.termination_protection]
    if protected:
        raise InputError(
            f"termination protection is on for {', '.join(project.stacks[n].stack_name for n in protected)}; "
            "nothing was deleted",
            file=project.file,
            hint="set `termination_protection: false` on the stack and deploy, then delete",
        )


def to_remove(project: Any, targets: Any, only: list[str] | None) -> list[Any]:
    """The project's stacks to remove (engine.prune.Orphan); none for a scoped command (a scope names
    stacks of formwright.yaml, which these are not)."""
    if only is not None:
        return []
    from formwright.engine.prune import orphans

    return orphans(project, targets)


def register(app: typer.Typer) -> None:
    """Add plan, deploy and delete to the application."""

    @app.command()
    @with_project_flags
    def plan(
        directory: Path | None = DirArgument,
        scope: list[str] | None = ScopeArgument,
        stack: list[str] | None = StackOption,
        keep: bool = typer.Option(False, "--keep", help="Keep the change sets (default: remove them)."),
        target: str | None = TargetOption,
        output: Output = OutputOption,
        macros: str | None = MacrosOption,
        max_concurrency: int = MaxConcurrencyOption,
    ) -> None:
        """Show what deploy would change, per stack, from real change sets. Never executes."""
        from formwright.cli.progress import Progress
        from formwright.cli.render import print_plans, print_removals

        directory, scopes = dir_and_scopes(directory, scope)
        wanted = [*scopes, *(stack or [])]
        project = open_project(directory, wanted)
        only = selection(project, wanted)
        targets = connect(project, target, only)
        with Progress(list(only or project.order()), enabled=output is Output.text,
                      interruptible=True) as progress:
            group = make_group(project, targets, only, max_concurrency, progress, macros=macros)
            plans = group.plan(keep=keep)
        fill_values(plans, group)
        refs = {n: references(project, targets, n) for n in plans}
        removals = to_remove(project, targets, only)
        if output is Output.json:
            emit_json({"ok": True,
                       "plans": {n: {**p.to_json(), "references": refs[n]} for n, p in plans.items()},
                       "remove": [o.to_json() for o in removals]})
        else:
            print_plans(plans, project.order(), refs)
            print_removals(removals)

    @app.command()
    @with_project_flags
    def deploy(
        directory: Path | None = DirArgument,
        scope: list[str] | None = ScopeArgument,
        stack: list[str] | None = StackOption,
        yes: bool = YesOption,
        force: bool = typer.Option(False, "--force", help="Ignore the applied cache; plan every stack."),
        max_concurrency: int = MaxConcurrencyOption,
        target: str | None = TargetOption,
        output: Output = OutputOption,
        macros: str | None = MacrosOption,
        prune: bool = typer.Option(False, "--prune", help="Then delete the project's stacks no longer in "
                                   "formwright.yaml or `obsolete: true` (found by their formwright tags), "
                                   "dependents first."),
        revert_drift: bool = typer.Option(False, "--revert-drift", help="Drift-aware change sets "
                                          "(DeploymentMode REVERT_DRIFT): drifted properties are set back to "
                                          "the template's; every stack is planned (no applied-cache skip)."),
    ) -> None:
        """Plan and execute in dependency order, stacks in parallel; outputs at the end. \
--stack adds its dependencies. Exit 1 if any stack failed."""
        from formwright.cli.progress import Progress
        from formwright.engine.cfn import CallCounter
        from formwright.engine.group import StackGroup
        from formwright.engine.results import exit_code_of
        from formwright.engine.stack import prepare_stacks
        from formwright.lifecycle.actions import Redactor

        directory, scopes = dir_and_scopes(directory, scope)
        wanted = [*scopes, *(stack or [])]
        project = open_project(directory, wanted)
        only = selection(project, wanted, dependencies=True)
        names = list(only or project.order())
        if not yes and (output is Output.json or not sys.stdin.isatty()):
            confirm("Deploy these changes?", yes, output)  # nobody can answer: say so before any work
        targets = connect(project, target, only)
        tgt = home(project, targets)
        with lock_project(project, tgt, "deploy"):  # the plan shown must still hold when it is executed
            # prepared once: the plan and the deploy share templates, TOSCA transforms and uploads
            stacks = prepare_stacks(project, targets=targets, only=only, **macro_mode(macros))
            removals = to_remove(project, targets, only) if prune or not yes else []
            if not yes:
                from formwright.cli.render import print_plans, print_removals

                planner = StackGroup(project, stacks, tgt, max_concurrency=max_concurrency, targets=targets,
                                     revert_drift=revert_drift)
                plans = planner.plan()
                fill_values(plans, planner)
                print_plans(plans, project.order(), {n: references(project, targets, n) for n in plans})
                print_removals(removals)
                if removals and not prune:
                    common.console.print(f"{len(removals)} stack(s) to remove: `formwright deploy --prune` "
                                         "deletes them", highlight=False)
                if all(p.kind in ("unchanged", "no changes") for p in plans.values()) and not (
                        prune and removals):
                    common.console.print("nothing to deploy")
                    return
                confirm("Deploy these changes?", yes)
            counter = CallCounter()
            with Progress(names, enabled=output is Output.text, interruptible=True) as progress:
                group = StackGroup(project, stacks, tgt, max_concurrency=max_concurrency, progress=progress,
                                   counter=counter, targets=targets, revert_drift=revert_drift)
                results = group.deploy(force=force)
                if prune and removals and all(r.ok for r in results.values()):
                    from formwright.engine.prune import prune_group

                    pruned = prune_group(project, removals, tgt, max_concurrency=max_concurrency,
                                         progress=progress, counter=counter).delete()
                    results.update(pruned)
        order = [n for n in [*project.order(), *reversed(list(results))] if n in results]
        order = list(dict.fromkeys(order))
        # an output may carry a resolved secret (CloudFormation shows outputs in clear): never printed
        mask = Redactor(value for s in stacks.values() for value in s.secret_values).data
        outputs = mask({n: r.outputs for n, r in results.items() if r.ok})
        failed = [r for r in results.values() if not r.ok]
        if output is Output.json:
            emit_json(
                {
                    "ok": not failed,
                    "stacks": {n: mask(results[n].to_json()) for n in order},
                    "outputs": outputs,
                    "calls": dict(counter.calls),
                    "write_calls": counter.writes,
                }
            )
        else:
            from formwright.cli.render import outputs_table, summary_table

            common.console.print(summary_table(results, order), highlight=False)
            # the outputs of the stacks this run changed; the others' did not change (`formwright outputs`)
            fresh = [n for n in order if results[n].outcome in ("created", "updated")]
            if not failed and fresh:
                common.console.print(outputs_table(outputs, fresh))
        if failed:
            raise typer.Exit(exit_code_of(results))

    @app.command()
    @with_project_flags
    def delete(directory: Path | None = DirArgument, scope: list[str] | None = ScopeArgument,
               stack: list[str] | None = StackOption,
               yes: bool = YesOption, max_concurrency: int = MaxConcurrencyOption,
               target: str | None = TargetOption, output: Output = OutputOption) -> None:
        """Delete stacks in reverse dependency order (a stack's dependents go first, and are listed)."""
        from formwright.cli.progress import Progress
        from formwright.cli.render import summary_table
        from formwright.engine.results import exit_code_of
        from formwright.model.scopes import resolve_scopes

        directory, scopes = dir_and_scopes(directory, scope)
        wanted = [*scopes, *(stack or [])]
        project = open_project(directory, wanted)
        only = selection(project, wanted, dependents=True)
        names = [n for n in reversed(project.order()) if only is None or n in only]
        targets = connect(project, target, only)
        check_protection(project, targets, names)
        if output is Output.text:
            asked = set(resolve_scopes(project, wanted)) if wanted else set(names)
            common.console.print("will delete, in this order:", highlight=False)
            for name in names:
                why = "" if name in asked else \
                    f" (depends on {', '.join(sorted(project.stacks[name].dependencies() & set(names)))})"
                common.console.print(f"  {project.stacks[name].stack_name}{why}", highlight=False)
        confirm(f"Delete {len(names)} stack(s)?", yes, output)
        with lock_project(project, home(project, targets), "delete"), \
                Progress(names, enabled=output is Output.text, interruptible=True) as progress:
            group = make_group(project, targets, only, max_concurrency, progress, package=False, resolve=False)
            results = group.delete()
        failed = [r for r in results.values() if not r.ok]
        order = [n for n in reversed(project.order()) if n in results]
        if output is Output.json:
            emit_json({"ok": not failed, "stacks": {n: results[n].to_json() for n in order}})
        else:
            common.console.print(summary_table(results, order))
        if failed:
            raise typer.Exit(exit_code_of(results))
