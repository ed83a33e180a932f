"""Planning one stack: a real change set whenever its inputs can be known, and what of it is known only
after the stacks it takes outputs from are applied.

A parameter fed by an upstream output that may change (engine/knowns.py says which and why) is planned
with its deployed value, so that CloudFormation still shows every change of the stack's own template;
the resources using it are then added as "may change (NAME known after apply)" with the worst
replacement their properties allow. Only a stack to be created, or one whose deployed value of such a
parameter cannot be read back (a new parameter, a NoEcho one), is planned from its template alone.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any

from formwright.engine.drift import drift_note, join_notes
from formwright.engine.knowns import Knowns, unknown_outputs
from formwright.engine.results import ResourceChange, StackPlan
from formwright.engine.settle import DEAD_ENDS, FAILED_KEPT
from formwright.engine.stack import UNKNOWN
from formwright.engine.values import as_list_text, value_changes
from formwright.model import OutputRef
from formwright.state.applied import inputs_hash

if TYPE_CHECKING:
    from formwright.engine.prepared import Prepared
    from formwright.engine.runner import StackRunner
    from formwright.engine.stack import Stack
    from formwright.engine.stack_info import StackInfo

# statuses a deploy settles first (engine/settle.py): what its change set would be is not known yet
UNSETTLED = ("ROLLBACK_COMPLETE", "UPDATE_ROLLBACK_FAILED", *FAILED_KEPT, "IMPORT_ROLLBACK_FAILED",
             *DEAD_ENDS)


def unknown_parameters(stack: Stack, prep: Prepared, upstream: dict[str, dict[str, str]]) -> dict[str, str]:
    """Parameter -> why its value is known only after apply: the `!ref`s it is made of whose output may
    change (`upstream`: stack -> output -> why) or whose stack is not deployed yet."""
    found: dict[str, str] = {}
    for key, value in prep.parameters.items():
        if UNKNOWN not in value:
            continue
        items = stack.config.parameters.get(key)
        reasons = []
        for ref in items if isinstance(items, list) else [items]:
            if not isinstance(ref, OutputRef):
                continue
            why = upstream.get(ref.stack, {}).get(ref.output)
            if why is None and ref.stack not in upstream:
                why = f"stack {ref.stack} is not deployed yet"
            if why is not None:
                reasons.append(f"{ref}: {why}")
        found[key] = "; ".join(reasons) or "known after apply"
    return found


def plan_stack(runner: StackRunner, stack: Stack, outputs: dict[str, dict[str, str]],
               info: StackInfo | None, *, keep: bool = False,
               upstream: dict[str, dict[str, str]] | None = None, want_outputs: bool = False) -> StackPlan:
    """What a deploy of `stack` (described as `info`) would do; change sets removed unless `keep`.

    `outputs`: the upstream outputs as they will be, UNKNOWN where known only after apply; `upstream`:
    why those are unknown. With `want_outputs` the plan names the outputs a dependent cannot know yet."""
    wanted = runner.prepare(stack, outputs, partial=True)
    unknown = unknown_parameters(stack, wanted, upstream or {})
    plan = _plan(runner, stack, info, wanted, unknown, keep)
    plan.unknown_parameters = unknown
    plan.inputs_hash = wanted.hash if not unknown else ""
    if info is not None:
        plan.stack_id, plan.updated = info.stack_id, info.stamp
    if want_outputs:
        plan.unknown_outputs = _unknown_outputs(runner, stack, info, wanted, unknown, plan)
    return plan


def _plan(runner: StackRunner, stack: Stack, info: StackInfo | None, wanted: Prepared,
          unknown: dict[str, str], keep: bool) -> StackPlan:
    if not unknown and info is not None and info.settled_ok and not runner.revert_drift \
            and runner.unchanged(stack, info, wanted):
        return StackPlan(stack.name, stack.stack_name, "unchanged",
                         note=join_notes("same inputs as last applied", drift_note(info)))
    if info is not None and (info.in_progress or info.status in UNSETTLED):
        return StackPlan(stack.name, stack.stack_name, "unknown",
                         note=f"stack is {info.status}; deploy will settle it first")
    # a REVIEW_IN_PROGRESS stack (a kept CREATE change set's) has nothing deployed: it is still a create
    live = info if info is not None and info.status != "REVIEW_IN_PROGRESS" else None
    prep = _with_deployed_values(runner, stack, live, wanted, unknown) if unknown else wanted
    if prep is None:
        return _plan_from_template(stack, live, wanted, unknown)
    stack.write_build(prep.template)
    plan, change_set_id, stack_id = runner.change_set(stack, info, prep)
    plan.stack_id = stack_id  # a create's: the REVIEW_IN_PROGRESS stack its kept change set made
    if info is not None and runner.protection_pending(stack, info):
        plan.note = f"termination protection: {'on' if stack.config.termination_protection else 'off'}"
        plan.kind = "update" if plan.kind == "no changes" else plan.kind
    elif info is not None and info.termination_protection and stack.config.termination_protection is None:
        plan.note = "termination protection: on (set outside formwright; kept)"
    if info is not None:
        plan.note = join_notes(plan.note, drift_note(info))
    if unknown:
        _add_may_change(plan, prep.template, unknown, info, wanted, stack.config.parameters)
    if change_set_id and (not keep or unknown):  # a change set made on stand-in values is never executed
        runner.cfn.delete_change_set(change_set_id)
        plan.change_set_id = None
        if plan.kind == "create":
            runner.drop_review_stack(stack)
    return plan


def _with_deployed_values(runner: StackRunner, stack: Stack, info: StackInfo | None, wanted: Prepared,
                          unknown: dict[str, str]) -> Prepared | None:
    """The inputs with each unknown parameter at its deployed value; None when one has none to read."""
    if info is None:
        return None
    parameters = dict(wanted.parameters)
    for key in unknown:
        deployed = info.parameters.get(key)
        if deployed is None or key in wanted.secrets:
            return None
        parameters[key] = as_list_text(deployed)
    template, body = stack.processed(parameters, region=runner.target.region)
    digest = inputs_hash(body, parameters, {}, [], None)  # names its change set only: never recorded
    return replace(wanted, parameters=parameters, template=template, body=body, hash=digest)


def unknown_note(stack_parameters: dict[str, Any], unknown: dict[str, str]) -> str:
    """`known after apply: VpcId (!ref network.outputs.VpcId), …`"""
    def source(key: str) -> str:
        items = stack_parameters.get(key)
        refs = [str(i) for i in (items if isinstance(items, list) else [items]) if isinstance(i, OutputRef)]
        return f"{key} ({', '.join(refs)})" if refs else key

    return "known after apply: " + ", ".join(source(key) for key in sorted(unknown))


def _add_may_change(plan: StackPlan, template: dict[str, Any], unknown: dict[str, str],
                    info: StackInfo | None, wanted: Prepared, stack_parameters: dict[str, Any]) -> None:
    """The resources using an unknown value as `may change`; the parameters shown as they will be."""
    listed = {c.logical_id: c for c in plan.resources}
    for change in Knowns(template, listed, {k: f"{k} known after apply" for k in unknown}).spread():
        if change.logical_id in listed:
            plan.resources[plan.resources.index(listed[change.logical_id])] = change
        else:
            plan.resources.append(change)
    plan.parameters = value_changes(_normalised(info.parameters) if info else {},
                                    wanted.effective_parameters(), wanted.secrets)
    if plan.kind == "no changes" and (plan.resources or plan.parameters):
        plan.kind = "update"
    note = unknown_note(stack_parameters, unknown)
    plan.note = f"{plan.note}; {note}" if plan.note else note


def _plan_from_template(stack: Stack, info: StackInfo | None, prep: Prepared,
                        unknown: dict[str, str]) -> StackPlan:
    """A plan read from the template alone: every resource added (a create), or every resource using an
    unknown value `may change` (an update whose deployed values cannot stand in)."""
    note = unknown_note(stack.config.parameters, unknown)
    if info is not None:
        changes = Knowns(prep.template, {}, {k: f"{k} known after apply" for k in unknown}).spread()
        return StackPlan(stack.name, stack.stack_name, "update", resources=changes,
                         parameters=value_changes(_normalised(info.parameters), prep.effective_parameters(),
                                                  prep.secrets),
                         note=note + " (planned from the template: no deployed value to stand in)")
    resources = prep.template.get("Resources") or {}
    changes = [ResourceChange("Add", logical, str(body.get("Type", "")))
               for logical, body in resources.items() if isinstance(body, dict)]
    return StackPlan(stack.name, stack.stack_name, "create", resources=changes,
                     parameters=value_changes({}, prep.parameters, prep.secrets), note=note)


def _normalised(parameters: dict[str, str]) -> dict[str, str]:
    return {key: as_list_text(value) for key, value in parameters.items()}


def _unknown_outputs(runner: StackRunner, stack: Stack, info: StackInfo | None, wanted: Prepared,
                     unknown: dict[str, str], plan: StackPlan) -> dict[str, str]:
    """The stack's outputs a dependent cannot know before this stack is applied, each with why."""
    declared = wanted.template.get("Outputs") or {}
    if info is None or plan.kind == "create":
        return {name: f"stack {stack.name} is created by this deploy" for name in declared}
    if plan.kind == "unknown":
        return {name: f"stack {stack.name} is {info.status}" for name in declared}
    if plan.kind in ("unchanged", "no changes") and not unknown:
        return {}
    changed = {v.key: f"parameter {v.key} changes" for v in plan.parameters if v.key not in unknown}
    changed.update({key: f"NoEcho parameter {key} (its change cannot be seen)" for key in wanted.secrets})
    changed.update({key: f"parameter {key}: {why}" for key, why in unknown.items()})
    listed = {c.logical_id: c for c in plan.resources}
    knowns = Knowns(wanted.template, listed, changed)
    return unknown_outputs(wanted.template, runner.deployed_template(stack), knowns, info.outputs)
