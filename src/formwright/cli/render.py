"""How results look in text mode: plans, the deploy/delete summary, outputs."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from rich.markup import escape
from rich.table import Table

from formwright.cli.common import console

if TYPE_CHECKING:
    from formwright.engine.results import StackPlan, StackResult

_COLORS = {"+": "green", "~": "yellow", "-": "red", "←": "cyan"}


def shown_value(value: Any) -> str:
    """A property value on one line: scalars as written, structures as compact JSON."""
    if value is None:
        return "(none)"
    if isinstance(value, (dict, list)):
        return json.dumps(value, sort_keys=True, default=str)
    return str(value)


PROPERTIES_SHOWN = 3  # changed properties per resource without --verbose (a 40-stack plan fits a screen)


def plan_table(plan: StackPlan, *, verbose: bool = True) -> Table:
    """`+ add`, `~ modify … replacement …` with the changed properties (old → new), `- remove` rows for
    one stack, `~ may change` rows for resources using a value known after apply, then parameters and
    tags. Without `verbose` at most PROPERTIES_SHOWN properties per resource."""
    table = Table(box=None, show_header=False, pad_edge=False)
    for _ in range(4):
        table.add_column()
    for change in plan.resources:
        c = _COLORS.get(change.symbol, "white")
        extra = ""
        if change.action == "Modify":
            style = {"True": "bold red", "Conditional": "yellow"}.get(change.replacement, "dim")
            extra = f"[{style}]replacement {change.replacement}[/]"
        action = "may change" if change.may_change else change.action.lower()
        if change.action == "Add" and change.drift == "DELETED":
            extra = "[yellow](deleted outside CloudFormation: created again)[/]"
        if change.because:
            extra += f" [dim]({escape(change.because)})[/]"
        table.add_row(f"[{c}]{change.symbol} {action}[/]", escape(change.logical_id),
                      escape(change.resource_type), extra)
        details = change.details if verbose else change.details[:PROPERTIES_SHOWN]
        for prop in details:
            if prop.known:
                old, new = escape(shown_value(prop.old)), escape(shown_value(prop.new))
                values = f"[red]{old}[/] → [green]{new}[/]"
            else:
                values = f"[yellow](changed{': through ' + escape(prop.via) if prop.via else ''})[/]"
            recreation = "" if prop.requires_recreation in ("Never", "") else \
                f"[dim]recreation {prop.requires_recreation.lower()}[/]"
            if prop.drifted:
                recreation = " ".join(p for p in ("[dim](drifted → template)[/]", recreation) if p)
            table.add_row("", f"  [yellow]~[/] {escape(prop.name)}", values, recreation)
        if len(details) < len(change.details):
            table.add_row("", f"  [dim]… {len(change.details) - len(details)} more (--verbose)[/]", "", "")
    for title, changes in (("parameter", plan.parameters), ("tag", plan.tags)):
        for v in changes:
            symbol = "+" if v.old is None else "-" if v.new is None else "~"
            shown = f"{v.old if v.old is not None else ''} → {v.new if v.new is not None else ''}"
            table.add_row(f"[{_COLORS[symbol]}]{symbol} {title}[/]", escape(v.key), escape(shown), "")
    return table


def print_plans(plans: dict[str, StackPlan], order: list[str],
                refs: dict[str, list[dict[str, str]]] | None = None, *, verbose: bool = False) -> None:
    """The whole plan: replacements and removals first, then every changing stack's plan in dependency
    order (with where each of its references comes from when `verbose`), the unchanged stacks on one line
    (each in full when `verbose`), and the totals line."""
    from formwright.engine.results import SETTLED_PLANS, PlanTotals

    names = [name for name in order if name in plans]
    print_dangers(plans, names)
    unchanged = []
    for name in names:
        plan = plans[name]
        if plan.kind in SETTLED_PLANS and not verbose and "drifted" not in (plan.note or ""):
            unchanged.append(name)  # a drifted one keeps its own line: drift is said once, per stack
            continue
        head = f"[bold]{escape(name)}[/] ({escape(plan.stack_name)}): {plan.kind}"
        if plan.note:
            head += f" [dim]- {escape(plan.note)}[/]"
        console.print(head)
        for ref in (refs or {}).get(name, []):
            if "source" in ref:  # a resolver (issue 24): `DbHost <- ssm:/app/db/host`, `tag owner <- ...`
                what = ref["parameter"] if "parameter" in ref else f"tag {ref['tag']}"
                console.print(f"  {escape(what)} <- {escape(ref['source'])}", highlight=False)
                continue
            if not verbose:  # where each `!ref` comes from: with --verbose
                continue
            source = f"{escape(ref['stack'])}.outputs.{escape(ref['output'])}"
            where = f"{ref['account']}/{ref['region']}"
            console.print(f"  {escape(ref['parameter'])} <- {source} [dim]({where})[/]", highlight=False)
        if plan.kind not in SETTLED_PLANS:
            console.print(plan_table(plan, verbose=verbose))
    if unchanged:
        console.print(f"[dim]unchanged: {escape(', '.join(unchanged))}[/]", highlight=False)
    console.print(f"[bold]{escape(PlanTotals.of(plans).line())}[/]", highlight=False)


def print_dangers(plans: dict[str, StackPlan], names: list[str]) -> None:
    """`Replacements and removals:` with every resource replaced (or maybe replaced) or removed."""
    lines = []
    for name in names:
        for change in plans[name].resources:
            where = f"{escape(name)}/{escape(change.logical_id)} [dim]({escape(change.resource_type)})[/]"
            if change.action == "Remove":
                lines.append(f"  [red]- remove[/]   {where}")
            elif change.action == "Modify" and change.replacement in ("True", "Conditional"):
                maybe = change.may_change or change.replacement == "Conditional"
                verb = "may replace" if maybe else "replace"
                because = f" [dim]({escape(change.because)})[/]" if change.because else ""
                lines.append(f"  [bold red]! {verb}[/]  {where}{because}")
    if lines:
        console.print("[bold]Replacements and removals:[/]")
        for line in lines:
            console.print(line, highlight=False)


def print_removals(found: list[Any]) -> None:
    """The project's stacks a `deploy --prune` removes (engine.prune.Orphan), after the plans."""
    for orphan in found:
        console.print(f"[bold]{escape(orphan.name)}[/] ({escape(orphan.info.name)}, {orphan.target.region})")
        console.print(f"  [red]- remove[/] ({escape(orphan.reason)})", highlight=False)


UNCHANGED = ("unchanged", "no changes", "absent")


def totals(results: dict[str, StackResult]) -> str:
    """`40 stacks: 2 created, 3 updated, 35 unchanged, 0 failed` (the outcomes that occurred, failed
    always), as terraform ends an apply with its counts."""
    counts: dict[str, int] = {}
    for r in results.values():
        outcome = "unchanged" if r.outcome in ("unchanged", "no changes") else r.outcome
        counts[outcome] = counts.get(outcome, 0) + 1
    counts.setdefault("failed", 0)
    first = ("created", "updated", "deleted", "unchanged", "absent")
    ordered = sorted(counts.items(), key=lambda item: (item[0] in ("failed", "skipped"),
                                                       first.index(item[0]) if item[0] in first else 9))
    return f"{len(results)} stack(s): " + ", ".join(f"{n} {outcome}" for outcome, n in ordered)


def summary_table(results: dict[str, StackResult], order: list[str]) -> Table | str:
    """stack, outcome, status, seconds, error: a row per stack that changed or failed (unchanged ones are
    counted in the totals line, not listed), then the totals."""
    changed = [name for name in order if name in results and results[name].outcome not in UNCHANGED]
    if not changed:
        return totals(results)
    table = Table(title="summary", title_justify="left", caption=totals(results), caption_justify="left")
    for column in ("stack", "outcome", "status", "time", "error"):
        table.add_column(column)
    for name in changed:
        r = results[name]
        style = "red" if not r.ok else "green"
        table.add_row(
            escape(name), f"[{style}]{r.outcome}[/]", r.status, f"{r.elapsed:.1f}s", escape(r.error or "")
        )
    return table


def outputs_table(outputs: dict[str, dict[str, str]], order: list[str]) -> Table:
    """stack, output key, value."""
    table = Table(title="outputs", title_justify="left")
    for column in ("stack", "output", "value"):
        table.add_column(column)
    for name in order:
        for key, value in sorted(outputs.get(name, {}).items()):
            table.add_row(escape(name), escape(key), escape(value))
    return table


def print_preview(preview: Any) -> None:
    """An instance operation's preview (lifecycle/preview.py): its steps in order, each element's plan,
    the events it would fire and their hooks, and the totals."""
    from formwright.engine.results import PlanTotals

    console.print(f"[bold]{escape(preview.kind)} of '{escape(preview.instance)}'[/], in this order "
                  "(a preview: nothing was changed):", highlight=False)
    number = 0
    for step in preview.steps:
        if step.action == "event" and not step.events:
            continue
        number += 1
        fired = "; ".join(f"{e['event']} runs {', '.join(e['hooks'])}" for e in step.events)
        if step.action == "event":
            console.print(f"  {number}. project: {escape(fired)}", highlight=False)
            continue
        kind = f" {step.plan.kind}" if step.plan is not None and step.action == "update" else ""
        where = " (clean-up)" if step.phase == "cleanup" else ""
        line = f"  {number}. {step.action}{kind} {escape(step.stack_name)} [dim]({escape(step.element)})" \
               f"{where}[/]"
        console.print(line + (f" [dim]- {escape(fired)}[/]" if fired else ""), highlight=False)
        if step.plan is not None and step.plan.kind not in ("unchanged", "no changes"):
            if step.plan.note:
                console.print(f"     [dim]{escape(step.plan.note)}[/]", highlight=False)
            console.print(plan_table(step.plan, verbose=False))
    console.print(f"[bold]{escape(PlanTotals.of(preview.plans).line())}[/]", highlight=False)
