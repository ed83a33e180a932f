"""What the emulator keeps of a stack beside moto's objects, and the small facts read off it: its
events, the dependency order of its resources, its pseudo parameters, the stacks importing an export."""

from __future__ import annotations

import graphlib
from dataclasses import dataclass, field
from typing import Any

from formwright.cloud.emulator.changes import Desired
from formwright.cloud.emulator.context import request
from formwright.cloud.emulator.resolve import dependencies, imported_exports


@dataclass
class Record:
    """What the emulator keeps per stack beside moto's objects."""

    desired: Desired | None = None
    props: dict[str, dict[str, Any]] = field(default_factory=dict)  # live properties per logical id
    outputs: list[dict[str, Any]] = field(default_factory=list)
    stub: set[str] = field(default_factory=set)
    # resources a delete failed to remove (logical id -> Type): still the stack's, so a later DeleteStack
    # tries them again rather than ending DELETE_COMPLETE with them left behind
    left: dict[str, str] = field(default_factory=dict)


def record(stack: Any) -> Record:
    """The emulator's record of a moto stack (made on first use)."""
    found = getattr(stack, "fw_record", None)
    if found is None:
        found = Record()
        stack.fw_record = found
    return found


def event(stack: Any, logical: str, physical: str | None, kind: str, status: str,
          reason: str | None = None) -> None:
    """Add one stack event (DescribeStackEvents lists them newest first)."""
    from moto.cloudformation.models import Event

    made = Event(stack_id=stack.stack_id, stack_name=stack.name, logical_resource_id=logical,
                 physical_resource_id=physical or "", resource_type=kind, resource_status=status,
                 resource_status_reason=reason, resource_properties=None)
    made.client_request_token = getattr(request, "token", None)  # the operation's, as CloudFormation's
    stack.events.append(made)


def order(resources: dict[str, dict[str, Any]], late: dict[str, int] | None = None) -> list[str]:
    """Logical ids in dependency order (DependsOn, Ref, Fn::GetAtt, Fn::Sub). `late`: resources that wait
    (for signals), by rank, come as late as their dependents allow, higher ranks later: CloudFormation creates
    what does not depend on a waiting resource while it waits (in parallel), and this one-at-a-time execution
    must have made those first, or a WaitCondition would wait for an instance not made yet."""
    graph = dependencies(resources)
    for logical, needs in graph.items():
        needs.discard(logical)
    if not graph:
        return []
    if not late:
        return list(graphlib.TopologicalSorter(graph).static_order())
    sorter = graphlib.TopologicalSorter(graph)
    sorter.prepare()
    ready: list[str] = []
    found: list[str] = []
    while sorter.is_active():
        ready.extend(sorter.get_ready())
        pick = min(ready, key=lambda n: late.get(n, 0))  # the first ready of the lowest rank
        ready.remove(pick)
        found.append(pick)
        sorter.done(pick)
    return found


def pseudo_parameters(stack: Any) -> dict[str, Any]:
    """AWS::* pseudo parameters of a stack."""
    return {"AWS::AccountId": stack.account_id, "AWS::Region": stack.region_name,
            "AWS::StackId": stack.stack_id, "AWS::StackName": stack.name, "AWS::URLSuffix": "amazonaws.com",
            "AWS::Partition": "aws", "AWS::NotificationARNs": list(stack.notification_arns or [])}


def importers(backend: Any, export: str, skip: str | None = None) -> list[str]:
    """Names of live stacks that import `export` (by its resolved name: Sub, Join and Ref count)."""
    users = []
    for stack in backend.stacks.values():
        if stack.stack_id == skip or stack.status in ("DELETE_COMPLETE", "REVIEW_IN_PROGRESS"):
            continue
        desired = getattr(getattr(stack, "fw_record", None), "desired", None)
        names = desired.imports if desired is not None else imported_exports(stack.template_dict or {})
        if export in names:
            users.append(stack.name)
    return sorted(users)
