"""Project commands that change the cloud: deploy (of a saved plan too) and delete."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from formwright.cli import common  # its consoles (rich) are made on first use
from formwright.cli.common import (
    MacrosOption,
    Output,
    OutputOption,
    TargetOption,
    YesOption,
    emit_json,
    with_project_flags,
)
from formwright.cli.plan_cmds import AllowReplacementOption, MaxConcurrencyOption, fill_values, to_remove
from formwright.cli.project import (
    confirm,
    connect,
    home,
    lock_project,
    macro_mode,
    make_group,
    references,
    selection,
    with_selection,
)

if TYPE_CHECKING:
    from formwright.model.project import Project


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


def saved_plan(path: Path, project: Any) -> Any:
    """The plan file, refused (exit 2) when it was made for another project or environment."""
    from formwright.engine.plan_file import read_plan
    from formwright.errors import InputError

    saved = read_plan(path)
    if saved.project != project.name or (saved.environment or None) != (project.environment or None):
        made = saved.project + (f" --env {saved.environment}" if saved.environment else "")
        this = project.name + (f" --env {project.environment}" if project.environment else "")
        raise InputError(f"the plan was made for {made}, not {this}", file=str(path),
                         hint="deploy it with the project and --env it was made for")
    missing = [n for n in saved.order if n not in project.stacks]
    if missing:
        raise InputError(f"the plan names stacks the project no longer has: {', '.join(missing)}; "
                         "nothing was executed", file=str(path), hint="plan again")
    return saved


def check_saved(project: Any, stacks: dict[str, Any], tgt: Any, targets: Any, saved: Any, allowed: set[str],
                output: Output) -> None:
    """Refuse (exit 2, nothing executed) a saved plan of which anything moved, or one a guard denies."""
    from formwright.cli.plan_cmds import refuse_denied
    from formwright.engine.group import StackGroup
    from formwright.engine.saved_plans import PLAN_AGAIN, moved_since
    from formwright.errors import InputError

    moved = moved_since(StackGroup(project, stacks, tgt, targets=targets), saved)
    if moved:
        raise InputError("the saved plan no longer holds, nothing was executed: " + "; ".join(moved),
                         file=saved.file, hint=PLAN_AGAIN)
    refuse_denied(saved.plans, project, sorted(allowed), Output.text)


def register(app: typer.Typer) -> None:
    """Add deploy and delete to the application (plan: cli/plan_cmds.py)."""

    @app.command()
    @with_project_flags
    @with_selection
    def deploy(
        project: Project,
        wanted: list[str],
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
        plan_file: Path | None = typer.Option(
            None, "--plan", metavar="FILE", help="Execute exactly the change sets of a plan saved by "
            "`formwright plan -o FILE`, or nothing (exit 2) if anything moved since."),
        allow_replacement: list[str] | None = AllowReplacementOption,
    ) -> None:
        """Plan and execute in dependency order, stacks in parallel; outputs at the end. \
--stack adds its dependencies. Exit 1 if any stack failed."""
        from formwright.cli.plan_cmds import refuse_denied
        from formwright.cli.progress import Progress
        from formwright.engine.cfn import CallCounter
        from formwright.engine.group import StackGroup
        from formwright.engine.results import SETTLED_PLANS, exit_code_of
        from formwright.engine.stack import prepare_stacks
        from formwright.lifecycle.actions import Redactor

        saved = saved_plan(plan_file, project) if plan_file is not None else None
        only = saved.order if saved is not None else selection(project, wanted, dependencies=True)
        names = list(only or project.order())
        if saved is None and not yes and (output is Output.json or not sys.stdin.isatty()):
            confirm("Deploy these changes?", yes, output)  # nobody can answer: say so before any work
        targets = connect(project, target, only)
        tgt = home(project, targets)
        allowed = set(allow_replacement or ())
        guarded = any(project.stacks[n].deny for n in names)
        with lock_project(project, tgt, "deploy"):  # the plan shown must still hold when it is executed
            # prepared once: the plan and the deploy share templates, TOSCA transforms and uploads
            stacks = prepare_stacks(project, targets=targets, only=only, **macro_mode(macros))
            removals = to_remove(project, targets, only) if prune or not yes else []
            if saved is not None:
                check_saved(project, stacks, tgt, targets, saved, allowed, output)
            elif not yes or guarded:  # a guard is checked on the whole plan before anything executes
                from formwright.cli.render import print_plans, print_removals

                planner = StackGroup(project, stacks, tgt, max_concurrency=max_concurrency, targets=targets,
                                     revert_drift=revert_drift)
                plans = planner.plan()
                if not yes:
                    fill_values(plans, planner)
                    print_plans(plans, project.order(), {n: references(project, targets, n) for n in plans})
                    print_removals(removals)
                    if removals and not prune:
                        common.console.print(f"{len(removals)} stack(s) to remove: "
                                             "`formwright deploy --prune` deletes them", highlight=False)
                refuse_denied(plans, project, allow_replacement, Output.text)
                if not yes and all(p.kind in SETTLED_PLANS for p in plans.values()) and not (
                        prune and removals):
                    common.console.print("nothing to deploy")
                    return
                confirm("Deploy these changes?", yes)
            counter = CallCounter()
            with Progress(names, enabled=output is Output.text, interruptible=True) as progress:
                group = StackGroup(project, stacks, tgt, max_concurrency=max_concurrency, progress=progress,
                                   counter=counter, targets=targets, allowed=allowed,
                                   revert_drift=revert_drift)
                if saved is not None:
                    from formwright.engine.saved_plans import apply_saved

                    results = apply_saved(group, saved)
                else:
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
    @with_selection
    def delete(project: Project, wanted: list[str], yes: bool = YesOption,
               max_concurrency: int = MaxConcurrencyOption,
               prune: bool = typer.Option(False, "--prune", help="Also delete the project's stacks no longer "
                                          "in formwright.yaml (found by their formwright tags)."),
               target: str | None = TargetOption, output: Output = OutputOption) -> None:
        """Delete stacks in reverse dependency order (a stack's dependents go first, and are listed). \
The whole project's delete removes its `obsolete: true` stacks too (found by their formwright tags, before \
the stacks they read); stacks no longer in formwright.yaml are listed and left, or deleted with --prune."""
        from formwright.cli.progress import Progress
        from formwright.cli.render import summary_table
        from formwright.engine.results import exit_code_of
        from formwright.model.scopes import resolve_scopes

        only = selection(project, wanted, dependents=True)
        names = [n for n in reversed(project.order()) if only is None or n in only]
        targets = connect(project, target, only)
        check_protection(project, targets, names)
        obsolete, left = project_leftovers(project, targets, prune) if only is None else ([], [])
        removed = [o.name for o in obsolete]
        if output is Output.text:
            asked = set(resolve_scopes(project, wanted)) if wanted else set(names)
            common.console.print("will delete, in this order:", highlight=False)
            for orphan in obsolete:
                common.console.print(f"  {orphan.info.name} ({orphan.reason})", highlight=False)
            for name in names:
                why = "" if name in asked else \
                    f" (depends on {', '.join(sorted(project.stacks[name].dependencies() & set(names)))})"
                common.console.print(f"  {project.stacks[name].stack_name}{why}", highlight=False)
            for orphan in left:
                common.console.print(f"left: {orphan.info.name} (no longer in formwright.yaml: `--prune` "
                                     "deletes it)", highlight=False)
        confirm(f"Delete {len(names) + len(removed)} stack(s)?", yes, output)
        with lock_project(project, home(project, targets), "delete"), \
                Progress([*removed, *names], enabled=output is Output.text, interruptible=True) as progress:
            group = make_group(project, targets, only, max_concurrency, progress, package=False,
                               resolve=False)
            if obsolete:
                group = with_orphans(group, obsolete)
            results = group.delete()
        failed = [r for r in results.values() if not r.ok]
        order = [n for n in [*removed, *reversed(project.order())] if n in results]
        if output is Output.json:
            emit_json({"ok": not failed, "stacks": {n: results[n].to_json() for n in order},
                       "left": [o.to_json() for o in left]})
        else:
            common.console.print(summary_table(results, order))
        if failed:
            raise typer.Exit(exit_code_of(results))


def project_leftovers(project: Any, targets: Any, prune: bool) -> tuple[list[Any], list[Any]]:
    """The project's live stacks it no longer deploys that its delete deletes too (`obsolete: true` ones;
    with `prune` also those no longer in formwright.yaml; termination protection refused before anything is
    deleted), and those it leaves."""
    from formwright.engine.prune import OBSOLETE, orphans
    from formwright.errors import InputError

    found = orphans(project, targets)
    obsolete = [o for o in found if prune or o.reason == OBSOLETE]
    protected = [o.info.name for o in obsolete if o.info.termination_protection]
    if protected:
        raise InputError(f"termination protection is on for {', '.join(protected)}; nothing was deleted",
                         file=project.file,
                         hint="turn it off (aws cloudformation update-termination-protection), then delete")
    return obsolete, [o for o in found if o not in obsolete]


def with_orphans(group: Any, found: list[Any]) -> Any:
    """The group with the orphans' stacks added: one delete orders them all (an obsolete stack before the
    stacks it reads, importers before exporters)."""
    from formwright.engine.group import StackGroup
    from formwright.engine.prune import orphan_stacks

    return StackGroup(group.project, {**orphan_stacks(group.project, found), **group.stacks}, group.target,
                      max_concurrency=group.max_concurrency, progress=group.progress, counter=group.counter,
                      targets=group.targets)
