"""`formwright plan` (what a deploy would do, optionally saved to a plan file) and `formwright show-plan`
(a saved plan as the text plan)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from formwright.cli.common import (
    MacrosOption,
    Output,
    OutputOption,
    TargetOption,
    emit_json,
    with_project_flags,
)
from formwright.cli.project import with_selection
from formwright.errors import EXIT_CHANGES

if TYPE_CHECKING:
    from formwright.model.project import Project

PlanOutOption = typer.Option(None, "--out", "-o", metavar="PATH",
                             help="Save the plan to this JSON file, its change sets kept, for "
                                  "`formwright deploy --plan PATH` (and `formwright show-plan PATH`).")
VerboseOption = typer.Option(False, "--verbose", "-v",
                             help="Every changed property, the unchanged stacks in full, and where each "
                                  "reference comes from.")
MaxConcurrencyOption = typer.Option(8, "--max-concurrency", metavar="N", help="Stacks worked on at once.")
AllowReplacementOption = typer.Option(
    None, "--allow-replacement", metavar="LOGICAL_ID",
    help="Let a `deny:` guard pass this resource's replacement or removal (repeatable; STACK/LOGICAL_ID "
         "for one stack's).")


def fill_values(plans: dict[str, Any], group: Any) -> None:
    """Old -> new values of each changed property the change set names without values, from the
    deployed processed template (get_template) and the local one the plan wrote to the build folder."""
    from formwright.engine.nested import fill_nested_values
    from formwright.template import loads

    for name, plan in plans.items():
        if name in group.stacks and getattr(group.stacks[name], "nested", None):
            fill_nested_values(group.runner_for(group.stacks[name]).cfn, plan, group.stacks[name])
        changes = [c for c in plan.resources if c.action == "Modify" and not c.may_change
                   and (not c.details or any(not p.known for p in c.details))]
        if not changes or name not in group.stacks:
            continue
        old = group.runner_for(group.stacks[name]).deployed_template(group.stacks[name])
        built = group.stacks[name].build_dir / "processed.json"
        new = loads(built.read_text(encoding="utf-8")) if built.is_file() else None
        for change in changes:
            change.fill_values(old, new)


def to_remove(project: Any, targets: Any, only: list[str] | None,
              listed: dict[int, list[Any]] | None = None) -> list[Any]:
    """The project's stacks to remove (engine.prune.Orphan); none for a scoped command (a scope names
    stacks of formwright.yaml, which these are not). `listed`: the stack listings the plan read."""
    if only is not None:
        return []
    from formwright.engine.prune import orphans

    return orphans(project, targets, listed)


def plan_json(plans: dict[str, Any], order: list[str], refs: dict[str, Any] | None = None) -> dict[str, Any]:
    """The plan's JSON answer: totals, and per stack its plan (resources with `replacement`,
    `may_change`, `because`)."""
    from formwright.engine.results import PlanTotals

    return {"totals": PlanTotals.of(plans).to_json(),
            "plans": {n: {**plans[n].to_json(), **({"references": refs[n]} if refs else {})}
                      for n in order if n in plans}}


def refuse_denied(plans: dict[str, Any], project: Any, allowed: list[str] | None, output: Output,
                  answer: dict[str, Any] | None = None) -> None:
    """Exit 2 naming every replacement or removal a `deny:` guard forbids (after the plan was shown)."""
    from formwright.cli.common import error_of
    from formwright.engine.guards import ALLOW_HINT, violations
    from formwright.errors import InputError

    denied = violations(plans, project.stacks, set(allowed or ()))
    if not denied:
        return
    error = InputError("denied: " + "; ".join(denied), file=project.file, hint=ALLOW_HINT)
    if output is Output.json and answer is not None:  # one JSON document: the plan and why it fails
        emit_json({**answer, "ok": False, "errors": [error_of(error)]})
        raise typer.Exit(error.exit_code)
    raise error


def register(app: typer.Typer) -> None:
    """Add plan and show-plan to the application."""

    @app.command()
    @with_project_flags
    @with_selection
    def plan(
        project: Project,
        wanted: list[str],
        keep: bool = typer.Option(False, "--keep", help="Keep the change sets (default: remove them)."),
        out: Path | None = PlanOutOption,
        exit_code: bool = typer.Option(False, "--exit-code",
                                       help=f"Exit {EXIT_CHANGES} when the plan changes anything, 0 when "
                                            "not (1 when planning failed)."),
        verbose: bool = VerboseOption,
        allow_replacement: list[str] | None = AllowReplacementOption,
        target: str | None = TargetOption,
        output: Output = OutputOption,
        macros: str | None = MacrosOption,
        max_concurrency: int = MaxConcurrencyOption,
    ) -> None:
        """Show what deploy would change, per stack, from real change sets. Never executes."""
        from formwright.cli import common
        from formwright.cli.progress import Progress
        from formwright.cli.project import connect, make_group, references, selection
        from formwright.cli.render import print_plans, print_removals
        from formwright.engine.plan_file import SavedPlan, write_plan
        from formwright.engine.results import SETTLED_PLANS

        only = selection(project, wanted)
        targets = connect(project, target, only)
        with Progress(list(only or project.order()), enabled=output is Output.text,
                      interruptible=True) as progress:
            group = make_group(project, targets, only, max_concurrency, progress, macros=macros)
            plans = group.plan(keep=keep or out is not None)
        fill_values(plans, group)
        order = [n for n in project.order() if n in plans]
        refs = {n: references(project, targets, n) for n in plans}
        removals = to_remove(project, targets, only, group.listings)
        if out is not None:
            graph = group.graph()
            write_plan(out, SavedPlan(project.name, project.environment, order, plans,
                                      {n: sorted(graph.get(n, ())) for n in order}))
        answer = {"ok": True, **plan_json(plans, order, refs), "remove": [o.to_json() for o in removals],
                  **({"plan_file": str(out)} if out else {})}
        if output is Output.json:
            refuse_denied(plans, project, allow_replacement, output, answer)
            emit_json(answer)
        else:
            print_plans(plans, order, refs, verbose=verbose)
            print_removals(removals)
            if out is not None:
                common.console.print(f"saved to {out}: apply it with `formwright deploy --plan {out}`",
                                     highlight=False)
            refuse_denied(plans, project, allow_replacement, output)
        if exit_code and (removals or any(p.kind not in SETTLED_PLANS for p in plans.values())):
            raise typer.Exit(EXIT_CHANGES)

    @app.command("show-plan")
    def show_plan(
        plan_file: Path = typer.Argument(..., metavar="FILE", help="A plan saved by `formwright plan -o`."),
        verbose: bool = VerboseOption,
        output: Output = OutputOption,
    ) -> None:
        """Print a saved plan as `formwright plan` shows it (JSON: as saved)."""
        from formwright.cli.render import print_plans
        from formwright.engine.plan_file import read_plan

        saved = read_plan(plan_file)
        if output is Output.json:
            emit_json({"ok": True, **saved.to_json()})
            return
        print_plans(saved.plans, saved.order, verbose=verbose)
