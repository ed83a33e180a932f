"""`formwright events`: a stack's CloudFormation events, and --follow to watch them come."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from rich.markup import escape

from formwright.cli.common import Output, console, emit_json_line

if TYPE_CHECKING:
    from formwright.engine.cfn import CloudFormation
    from formwright.model.project import Project

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


def watch(project: Project, cfn: dict[str, CloudFormation], names: list[str], *, limit: int, follow: bool,
          output: Output) -> list[dict[str, Any]]:
    """Print the last `limit` events of each stack (read through `cfn[name]`, in its own account and
    region); with `follow`, new ones as they come until every stack has settled. Returns every row printed
    (for JSON)."""
    rows: list[dict[str, Any]] = []
    seen: set[str] = set()
    for name in names:
        for event in recent_events(cfn[name], project.stacks[name].stack_name, limit):
            row = event_row(name, event)
            seen.add(row["id"])
            rows.append(row)
            print_event(row, output, stream=follow)
    while follow:
        busy = False
        for name in names:
            info = cfn[name].describe(project.stacks[name].stack_name)
            busy = busy or (info is not None and info.status.endswith("_IN_PROGRESS"))
            fresh = [e for e in recent_events(cfn[name], project.stacks[name].stack_name, 100)
                     if e.get("EventId") not in seen]
            for event in fresh:
                row = event_row(name, event)
                seen.add(row["id"])
                rows.append(row)
                print_event(row, output, stream=True)
        if not busy:
            break
        time.sleep(POLL_SECONDS)
    return rows
