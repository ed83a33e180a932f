"""`formwright events`: a stack's CloudFormation events, and --follow to watch them come."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from rich.markup import escape

from formwright.cli.common import Output, console, emit_json_line

if TYPE_CHECKING:
    from formwright.engine.cfn import CloudFormation

POLL_SECONDS = 2.0


def event_row(stack: str, event: dict[str, Any]) -> dict[str, Any]:
    """One event as plain data."""
    stamp: Any = event.get("Timestamp")
    return {"stack": stack, "time": stamp.isoformat() if hasattr(stamp, "isoformat") else str(stamp),
            "logical_id": event.get("LogicalResourceId", ""), "type": event.get("ResourceType", ""),
            "status": event.get("ResourceStatus", ""), "reason": event.get("ResourceStatusReason", "") or "",
            "id": event.get("EventId", "")}


def _style(status: str) -> str:
    if status.endswith("FAILED") or "ROLLBACK" in status:
        return "red"
    if status.endswith("COMPLETE"):
        return "green"
    return "yellow"


def print_event(row: dict[str, Any], output: Output, *, stream: bool) -> None:
    """A line per event (text), or a JSON line per event when following in JSON mode."""
    if output is Output.json:
        if stream:
            emit_json_line({k: v for k, v in row.items() if k != "id"})
        return
    reason = f"  {escape(row['reason'])}" if row["reason"] else ""
    status = f"[{_style(row['status'])}]{row['status']}[/]"
    console.print(f"{row['time'][:19]}  {escape(row['stack'])}  {status}  "
                  f"{escape(row['logical_id'])} ({escape(row['type'])}){reason}",
                  highlight=False, soft_wrap=True)


def recent_events(cfn: CloudFormation, stack_name: str, limit: int) -> list[dict[str, Any]]:
    """The stack's last `limit` events, oldest first."""
    return list(reversed(cfn.events_since(stack_name, None, limit_pages=max(1, limit // 100 + 1))[:limit]))


def events_after(cfn: CloudFormation, stack_name: str, newest: str | None) -> list[dict[str, Any]]:
    """The stack's events after the one with id `newest` (its whole last page without it), oldest first.
    CloudFormation's DescribeStackEvents lists a stack's events newest first, so the new ones are those
    above the newest already printed: an older one left out by --limit is never new."""
    fresh: list[dict[str, Any]] = []
    for event in cfn.events_since(stack_name, None, limit_pages=1):
        if event.get("EventId") == newest:
            break
        fresh.append(event)
    return list(reversed(fresh))


def with_nested(cfn: CloudFormation, label: str, events: list[dict[str, Any]], limit: int,
                depth: int = 0) -> list[tuple[str, dict[str, Any]]]:
    """(label, event) pairs of a stack's events and, under `label/Logical`, those of each nested stack they
    name (by its physical id, the nested stack's id), recursively: a nested stack's failure is shown down
    to the resource that failed."""
    pairs = [(label, e) for e in events]
    nested = {e.get("LogicalResourceId"): e.get("PhysicalResourceId") for e in events
              if e.get("ResourceType") == "AWS::CloudFormation::Stack"
              and str(e.get("PhysicalResourceId") or "").startswith("arn:")
              and e.get("PhysicalResourceId") != e.get("StackId")}
    for logical, physical in nested.items():
        if depth < 10:
            inner = recent_events(cfn, str(physical), max(limit, 1))
            pairs += with_nested(cfn, f"{label}/{logical}", inner, limit, depth + 1)
    return pairs


def _in_time_order(batch: list[tuple[str, dict[str, Any]]]) -> list[tuple[str, dict[str, Any]]]:
    """(stack, event) pairs of several stacks, each stack's oldest first, merged into one timeline; the
    sort is stable, so a stack's events of one instant keep CloudFormation's order."""
    return sorted(batch, key=lambda pair: pair[1]["Timestamp"])  # a required field of every event


def watch(cloud_names: dict[str, str], cfn: dict[str, CloudFormation], names: list[str], *, limit: int,
          follow: bool, output: Output) -> list[dict[str, Any]]:
    """Print the last `limit` events of each stack (CloudFormation stack `cloud_names[name]`, read through
    `cfn[name]`, in its own account and region), the stacks' events merged oldest first; with `follow`, new
    ones as they come until every stack has settled. Returns every row printed (for JSON)."""
    rows: list[dict[str, Any]] = []
    seen: set[str] = set()
    newest: dict[str, str | None] = {}  # per stack, the id of its newest event read

    def show(batch: list[tuple[str, dict[str, Any]]]) -> None:
        for name, event in _in_time_order(batch):
            if event.get("EventId") in seen:
                continue
            row = event_row(name, event)
            seen.add(row["id"])
            rows.append(row)
            print_event(row, output, stream=follow)

    listing: list[tuple[str, dict[str, Any]]] = []
    for name in names:
        events = recent_events(cfn[name], cloud_names[name], max(limit, 1))
        newest[name] = events[-1].get("EventId") if events else None
        listing += with_nested(cfn[name], name, events, limit) if limit > 0 else []  # -n 0: only what comes
    show(listing)
    while follow:
        busy = False
        fresh: list[tuple[str, dict[str, Any]]] = []
        for name in names:
            info = cfn[name].describe(cloud_names[name])  # before the events: none is missed
            busy = busy or (info is not None and info.status.endswith("_IN_PROGRESS"))
            after = events_after(cfn[name], cloud_names[name], newest[name])
            if after:
                newest[name] = after[-1].get("EventId")
            fresh += [(name, e) for e in after]
        show(fresh)
        if not busy:
            break
        time.sleep(POLL_SECONDS)
    return rows
