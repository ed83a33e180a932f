"""`deploy --plan FILE`: execute exactly the change sets a saved plan kept, in dependency order.

Before anything runs, every stack is checked against the plan: the stack is the one planned (same id,
not updated since: its last-updated stamp), its inputs hash the same (template, parameters and the
upstream outputs they resolve to, tags, options), and its change set still there to execute. Anything
moved refuses the whole plan, nothing executed. While it runs, each stack's inputs are checked again
once its upstream stacks are applied (an output the plan took as kept must be kept); a stack whose
inputs were known only after apply gets its change set then, executed only when it does nothing the plan
did not show (no other resource, no worse replacement).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from botocore.exceptions import ClientError

from formwright.engine.results import SETTLED_PLANS, StackPlan, StackResult
from formwright.errors import InputError

if TYPE_CHECKING:
    from formwright.engine.group import StackGroup
    from formwright.engine.plan_file import SavedPlan
    from formwright.engine.runner import StackRunner
    from formwright.engine.stack import Stack

PLAN_AGAIN = "plan again (`formwright plan -o FILE`), review it, then deploy that"
_RANK = {"False": 0, "Conditional": 1, "True": 2}


def moved_since(group: StackGroup, saved: SavedPlan) -> list[str]:
    """What no longer holds of the saved plan, one line per stack (empty: it can be applied)."""
    problems: list[str] = []
    outputs: dict[str, dict[str, str]] = {}
    group.seed_outputs(outputs)
    for name in saved.order:
        stack = group.stacks.get(name)
        if stack is None:
            problems.append(f"{name}: no longer a stack of the project")
            continue
        plan, runner = saved.plans[name], group.runner_for(stack)
        info = runner.cfn.describe(stack.stack_name)
        if info is not None and info.status != "REVIEW_IN_PROGRESS":
            outputs[name] = info.outputs
        if plan.kind == "create":
            if info is not None and info.status != "REVIEW_IN_PROGRESS":
                problems.append(f"{name}: the stack was created since the plan ({info.status})")
        elif info is None:
            problems.append(f"{name}: the stack was deleted since the plan")
        elif plan.stack_id and info.stack_id != plan.stack_id:
            problems.append(f"{name}: the stack was deleted and made again since the plan")
        elif info.stamp != plan.updated:
            problems.append(f"{name}: the stack was updated since the plan ({info.status} at {info.stamp}; "
                            f"planned at {plan.updated})")
        if plan.inputs_hash and runner.prepare(stack, outputs, partial=True).hash != plan.inputs_hash:
            problems.append(f"{name}: its inputs changed since the plan (template, parameters, tags, "
                            "options or an upstream output)")
        if plan.change_set_id:
            problem = _unusable(runner, plan.change_set_id)
            if problem:
                problems.append(f"{name}: {problem}")
        elif plan.kind not in SETTLED_PLANS and not plan.unknown_parameters:
            problems.append(f"{name}: the plan kept no change set for it ({plan.kind})")
    return problems


def _unusable(runner: StackRunner, change_set_id: str) -> str | None:
    try:
        desc = runner.cfn.describe_change_set(change_set_id)
    except ClientError:
        return f"its change set {change_set_id} is gone"
    status, execution = desc.get("Status"), desc.get("ExecutionStatus", "AVAILABLE")
    if status != "CREATE_COMPLETE" or execution != "AVAILABLE":
        return f"its change set is {status}/{execution}, not executable"
    return None


def apply_saved(group: StackGroup, saved: SavedPlan) -> dict[str, StackResult]:
    """Execute the saved plan's change sets in dependency order (after `moved_since` found nothing)."""
    return group.apply(lambda runner, stack, outputs: runner.guarded(
        stack, lambda: _apply_one(runner, stack, saved.plans[stack.name], outputs)))


def _apply_one(runner: StackRunner, stack: Stack, plan: StackPlan,
               outputs: dict[str, dict[str, str]]) -> StackResult:
    prep = runner.prepare(stack, outputs)
    info = runner.cfn.describe(stack.stack_name)
    if plan.inputs_hash and prep.hash != plan.inputs_hash:
        raise InputError("its inputs differ from the plan's now that the stacks before it are applied (an "
                         "upstream output the plan took as kept changed); nothing executed for it",
                         where=stack.name, hint=PLAN_AGAIN)
    if plan.kind in SETTLED_PLANS:
        return StackResult(stack.name, stack.stack_name, "unchanged", info.status if info else "",
                           outputs=info.outputs if info else {})
    if plan.change_set_id:
        return runner.execute(stack, info, prep, plan, plan.change_set_id, plan.stack_id or
                              (info.stack_id if info else stack.stack_name))
    fresh, change_set_id, stack_id = runner.change_set(stack, info, prep)
    if change_set_id is None:
        assert info is not None
        return StackResult(stack.name, stack.stack_name, "no changes", info.status, outputs=info.outputs,
                           plan=fresh)
    beyond = beyond_plan(plan, fresh)
    if beyond:
        runner.cfn.delete_change_set(change_set_id)
        raise InputError("its change set, made now that its inputs are known, does what the plan did not "
                         f"show: {'; '.join(beyond)}; nothing executed for it", where=stack.name,
                         hint=PLAN_AGAIN)
    runner.refuse_denied(stack, fresh, change_set_id)
    return runner.execute(stack, info, prep, fresh, change_set_id, stack_id)


def beyond_plan(planned: StackPlan, fresh: StackPlan) -> list[str]:
    """Each change of `fresh` the plan did not show: another resource or action, a worse replacement."""
    shown = {c.logical_id: c for c in planned.resources}
    found = []
    for change in fresh.resources:
        was = shown.get(change.logical_id)
        if was is None or was.action != change.action:
            found.append(f"{change.action.lower()} {change.logical_id}")
        elif _RANK.get(change.replacement, 0) > _RANK.get(was.replacement, 0):
            found.append(f"{change.logical_id} replacement {change.replacement} (planned {was.replacement})")
    return found
