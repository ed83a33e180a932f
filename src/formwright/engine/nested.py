"""Nested stacks in a plan: each nested stack's resource changes under its parent, as `Network/Subnet`.

A change set made with IncludeNestedStacks has, for each nested stack it changes, a change set of its own
whose id is the parent change's `ResourceChange.ChangeSetId` (CreateChangeSet, "IncludeNestedStacks";
"Change sets for nested stacks" in the CloudFormation User Guide): it is read, recursively. A nested
stack the change set adds and names no change set for is listed from its packaged template (every
resource an Add).
"""

from __future__ import annotations

from typing import Any

from formwright.engine.results import ResourceChange

NESTED = "AWS::CloudFormation::Stack"


def nested_stacks(template: Any) -> bool:
    """True when the template has an AWS::CloudFormation::Stack resource."""
    resources = template.get("Resources") if isinstance(template, dict) else None
    return isinstance(resources, dict) and any(
        isinstance(body, dict) and body.get("Type") == NESTED for body in resources.values())


def nested_changes(cfn: Any, desc: dict[str, Any], template: Any, nested: list[Any],
                   prefix: str = "") -> list[ResourceChange]:
    """The change set's resource changes, each nested stack's own following it with its path as prefix."""
    out: list[ResourceChange] = []
    for change in desc.get("Changes") or []:
        if change.get("Type") != "Resource":
            continue
        row = ResourceChange.from_change_set(change)
        logical = row.logical_id
        row.logical_id = f"{prefix}{logical}"
        out.append(row)
        if row.resource_type != NESTED:
            continue
        child_template = _nested_template(template, logical, nested)
        child_id = (change.get("ResourceChange") or {}).get("ChangeSetId")
        if child_id:
            child = cfn.describe_change_set(child_id)
            out.extend(nested_changes(cfn, child, child_template, nested, f"{row.logical_id}/"))
        elif row.action == "Add" and child_template is not None:
            out.extend(_all_added(child_template, nested, f"{row.logical_id}/"))
    return out


def _all_added(template: dict[str, Any], nested: list[Any], prefix: str) -> list[ResourceChange]:
    out: list[ResourceChange] = []
    for logical, body in (template.get("Resources") or {}).items():
        if not isinstance(body, dict):
            continue
        out.append(ResourceChange("Add", f"{prefix}{logical}", str(body.get("Type", ""))))
        child = _nested_template(template, logical, nested) if body.get("Type") == NESTED else None
        if child is not None:
            out.extend(_all_added(child, nested, f"{prefix}{logical}/"))
    return out


def _nested_template(template: Any, logical: str, nested: list[Any]) -> dict[str, Any] | None:
    """The packaged template a nested stack resource names (by its TemplateURL's key), if formwright
    packaged it."""
    resources = template.get("Resources") if isinstance(template, dict) else None
    body = resources.get(logical) if isinstance(resources, dict) else None
    url = ((body or {}).get("Properties") or {}).get("TemplateURL") if isinstance(body, dict) else None
    if not isinstance(url, str):
        return None
    return next((n.template for n in nested if url.endswith("/" + n.key)), None)


def deep_failure_reasons(cfn: Any, events: list[dict[str, Any]], prefix: str = "",
                         depth: int = 0) -> list[str]:
    """`failure_reasons` of the events, a failed nested stack's own reasons in place of CloudFormation's
    "Embedded stack … was not successfully created/updated": its events are read, down to the resource
    that failed (`Network/Leaf/Queue: reason`)."""
    from formwright.engine.cfn import failure_reasons

    reasons: list[str] = []
    followed: set[str] = set()
    # a failed event may carry no physical id (the stack's id is on the resource's other events)
    known = {e.get("LogicalResourceId"): e.get("PhysicalResourceId") for e in reversed(events)
             if e.get("PhysicalResourceId")}
    for event in reversed(events):
        physical = str(event.get("PhysicalResourceId") or known.get(event.get("LogicalResourceId")) or "")
        failed = str(event.get("ResourceStatus", "")).endswith("_FAILED")
        nested = (event.get("ResourceType") == NESTED and physical.startswith("arn:")
                  and physical != event.get("StackId") and failed)
        if nested and depth < 10:
            if physical in followed:
                continue
            followed.add(physical)
            path = f"{prefix}{event.get('LogicalResourceId')}/"
            inner = deep_failure_reasons(cfn, cfn.operation_events(physical), path, depth + 1)
            if inner:
                reasons.extend(inner)
                continue
        for reason in failure_reasons([event]):
            if prefix and physical == event.get("StackId"):  # the nested stack's own reason: its path
                reason = f"{prefix.rstrip('/')}: {reason.split(': ', 1)[1]}"
            else:
                reason = f"{prefix}{reason}"
            reasons.append(reason)
    return reasons


def fill_nested_values(cfn: Any, plan: Any, stack: Any) -> None:
    """Old and new values of the plan's nested rows (`Network/Leaf/Queue`) where the change set gave none:
    from each nested stack's deployed template (its physical id found down the path) and the packaged one."""
    from botocore.exceptions import ClientError

    from formwright.template import loads

    rows = [c for c in plan.resources if "/" in c.logical_id and c.action == "Modify"
            and (not c.details or any(not p.known for p in c.details))]
    templates: dict[str, tuple[Any, Any]] = {}
    for row in rows:
        path, logical = row.logical_id.rsplit("/", 1)
        if path not in templates:
            old = new = None
            try:
                current = plan.stack_name
                for segment in path.split("/"):
                    detail = cfn.call("describe_stack_resource", StackName=current, LogicalResourceId=segment)
                    current = detail["StackResourceDetail"]["PhysicalResourceId"]
                body = cfn.call("get_template", StackName=current, TemplateStage="Processed")["TemplateBody"]
                old = loads(body) if isinstance(body, str) else body
            except (ClientError, KeyError):
                old = None
            new = getattr(stack, "original", None)
            for segment in path.split("/"):
                if new is not None:
                    new = _nested_template(new, segment, getattr(stack, "nested", []))
            templates[path] = (old, new)
        old, new = templates[path]
        row.logical_id = logical
        try:
            row.fill_values(old, new)
        finally:
            row.logical_id = f"{path}/{logical}"
