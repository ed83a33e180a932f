"""Guards: `deny: {replacement: [TYPE, ...], removal: [TYPE, ...]}` on the project, a group or a stack.

A plan that would replace (Replacement True or Conditional, a "may change" one included: it may) or
remove a resource whose type matches a pattern (`AWS::RDS::*`, fnmatch style) fails before anything is
executed, naming the resource, unless `--allow-replacement LOGICAL_ID` (or `STACK/LOGICAL_ID`) lets it by.
Terraform's `prevent_destroy` fails at plan time the same way. CloudFormation stack policies are not
touched: they guard updates inside CloudFormation, these guard what formwright asks it to do.
"""

from __future__ import annotations

from fnmatch import fnmatchcase
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from formwright.engine.results import StackPlan

ALLOW_HINT = "if it is meant, pass --allow-replacement LOGICAL_ID; else change the template back"


def violations(plans: dict[str, StackPlan], configs: dict[str, Any], allowed: set[str]) -> list[str]:
    """`stack/Logical (Type): replacement denied by AWS::RDS::*` for every change a guard forbids."""
    found = []
    for name, plan in plans.items():
        deny = getattr(configs.get(name), "deny", None) or {}
        for change in plan.resources:
            replaced = change.action == "Modify" and change.replacement in ("True", "Conditional")
            guard = "removal" if change.action == "Remove" else "replacement" if replaced else None
            if guard is None or change.logical_id in allowed or f"{name}/{change.logical_id}" in allowed:
                continue
            pattern = next((p for p in deny.get(guard, []) if fnmatchcase(change.resource_type, p)), None)
            if pattern is not None:
                maybe = "possible " if change.may_change or change.replacement == "Conditional" else ""
                found.append(f"{name}/{change.logical_id} ({change.resource_type}): {maybe}{guard} denied "
                             f"by `deny: {{{guard}: [{pattern}]}}`")
    return found
