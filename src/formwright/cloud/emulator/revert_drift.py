"""Drift-aware change sets: CreateChangeSet with `DeploymentMode: REVERT_DRIFT`.

Follows "Using drift-aware change sets" (AWS CloudFormation User Guide) and the API Reference's
ResourceChange / ResourceTargetDefinition: the change set compares the template with the resources' actual
state; a drifted property becomes a Modify detail whose BeforeValue is the actual value
(`BeforeValueFrom: ACTUAL_STATE`), AfterValue the template's, with `Drift: {PreviousValue, ActualValue}`,
and the resource carries `ResourceDriftStatus`. Executing it sets the drifted properties back (only the
properties the local cloud's drift detection reads, `drift_readers.py`). A resource deleted outside
CloudFormation (drift status DELETED) that the template still holds is created again, as CloudFormation
does (an `Add` carrying `ResourceDriftStatus: DELETED`; aws-cloudformation/cloudformation-coverage-roadmap
#2455 reports the one type where AWS fails to): a plain update never notices it is gone.
"""

from __future__ import annotations

import json
from typing import Any

from formwright.cloud.emulator.changes import Desired, recreation

MODE = "REVERT_DRIFT"


def _value(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text


def _at(props: dict[str, Any], path: str) -> Any:
    """The value at a PropertyPath (/A/B/0) of resolved properties (None when absent)."""
    node: Any = props
    for part in path.strip("/").split("/"):
        if isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        elif isinstance(node, dict):
            node = node.get(part)
        else:
            return None
    return node


def drift_details(stack: Any, logical: str, new: Desired) -> tuple[str, list[dict[str, Any]]]:
    """The resource's drift status and one Modify detail per drifted property (actual -> template)."""
    from formwright.cloud.emulator.drift import resource_drift  # drift reads execute's record: late

    drift = resource_drift(stack, logical)
    status = str(drift["StackResourceDriftStatus"])
    if status != "MODIFIED":
        return status, []
    kind = str(new.resources[logical]["Type"])
    props = new.resources[logical].get("Properties") or {}
    details = []
    for difference in drift["PropertyDifferences"]:
        path = difference["PropertyPath"]
        name = path.strip("/").split("/")[0]
        actual = _value(difference["ActualValue"]) if difference["ActualValue"] != "" else None
        wanted = _at(props, path)
        target = {"Attribute": "Tags" if name == "Tags" else "Properties", "Name": name, "Path": path,
                  "RequiresRecreation": recreation(kind, (name,)), "BeforeValue": difference["ActualValue"],
                  "AfterValue": json.dumps(wanted) if isinstance(wanted, dict | list) else str(wanted),
                  "BeforeValueFrom": "ACTUAL_STATE", "AttributeChangeType": "Modify",
                  "Drift": {"PreviousValue": difference["ExpectedValue"],
                            "ActualValue": difference["ActualValue"]}}
        if actual is None:
            target["AttributeChangeType"] = "Add"
        details.append({"Target": target, "Evaluation": "Static", "ChangeSource": "DirectModification"})
    return status, details


def revert(stack: Any, new: Desired, computed: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The change set's changes with each drifted resource that stays (not added or removed) set back to the
    template: its drifted properties joined to its Modify, or a Modify of their own."""
    by_logical = {c["LogicalResourceId"]: c for c in computed}
    for logical in new.resources:
        change = by_logical.get(logical)
        if change is not None and change["Action"] != "Modify":
            continue
        status, details = drift_details(stack, logical, new)
        if status == "DELETED":  # gone from its service: created again, with the template's properties
            by_logical[logical] = {"Action": "Add", "LogicalResourceId": logical, "PhysicalResourceId": None,
                                   "ResourceType": new.resources[logical]["Type"], "Replacement": "False",
                                   "Scope": [], "Details": [], "ResourceDriftStatus": status}
            continue
        if not details:
            continue
        if change is None:
            from formwright.cloud.emulator import resources as res

            obj = stack.resource_map._parsed_resources.get(logical)
            change = by_logical[logical] = {
                "Action": "Modify", "LogicalResourceId": logical,
                "PhysicalResourceId": res.physical_id(obj) if obj is not None else None,
                "ResourceType": new.resources[logical]["Type"], "Replacement": "False", "Scope": [],
                "Details": []}
        written = {d["Target"].get("Name") for d in change["Details"]}
        change["Details"] = [*change["Details"], *(d for d in details if d["Target"]["Name"] not in written)]
        change["Scope"] = sorted({*change["Scope"], *(d["Target"]["Attribute"] for d in details)})
        change["ResourceDriftStatus"] = status
    return [by_logical[name] for name in sorted(by_logical)]


def reverted(change: Any) -> set[str]:
    """The properties a change's drift details set back (for the execution to apply)."""
    return {d["Target"]["Name"] for d in getattr(change, "details", None) or [] if "Drift" in d["Target"]}
