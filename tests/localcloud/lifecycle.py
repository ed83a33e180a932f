"""Steps the per-type tests (test_types_*.py) repeat: deploy and expect a status, read drift, read ids.

Each per-type test walks one type through CloudFormation's lifecycle on the real local cloud — create,
update in place, replacement, drift, delete — and reads the resource back with the service's own API.
"""

from __future__ import annotations

from typing import Any


def deploy(cfn: Any, stack: str, template: dict, **kwargs: Any) -> dict[str, str]:
    """Deploy and insist on a settled success; return the outputs. A failure shows the stack's events."""
    described = cfn.deploy(stack, template, **kwargs)
    assert described["StackStatus"] in ("CREATE_COMPLETE", "UPDATE_COMPLETE"), [
        e for e in cfn.events(stack) if e[2]
    ][:4]
    return cfn.outputs(stack)


def failed(cfn: Any, stack: str, template: dict, **kwargs: Any) -> str:
    """Deploy a template the change set refuses; its reason."""
    desc = cfn.change_set(stack, template, **kwargs)
    assert desc["Status"] == "FAILED", desc["Status"]
    return str(desc["StatusReason"])


def drift(cfn: Any, stack: str, logical: str) -> tuple[str, list[tuple[str, str]]]:
    """DetectStackResourceDrift of one resource: its status and (path, difference type) of each change."""
    found = cfn.client.detect_stack_resource_drift(StackName=stack, LogicalResourceId=logical)[
        "StackResourceDrift"
    ]
    return found["StackResourceDriftStatus"], sorted(
        (d["PropertyPath"], d["DifferenceType"]) for d in found.get("PropertyDifferences") or []
    )


def delete(cfn: Any, stack: str) -> None:
    """Delete the stack and insist every resource went (DELETE_COMPLETE, no DELETE_FAILED event)."""
    stack_id = cfn.stack(stack)["StackId"]
    cfn.client.delete_stack(StackName=stack)
    assert cfn.client.describe_stacks(StackName=stack_id)["Stacks"][0]["StackStatus"] == "DELETE_COMPLETE"
    events = cfn.client.describe_stack_events(StackName=stack_id)["StackEvents"]
    assert not [e for e in events if e["ResourceStatus"] == "DELETE_FAILED"]


def with_props(template: dict, logical: str, **props: Any) -> dict:
    """A copy of `template` whose resource `logical` has these properties set (None removes one)."""
    import copy

    out = copy.deepcopy(template)
    body = out["Resources"][logical].setdefault("Properties", {})
    for name, value in props.items():
        if value is None:
            body.pop(name, None)
        else:
            body[name] = value
    return out
