"""A thin layer over the CloudFormation API: describe, change sets, execution, waits, events.

Every call counts itself in `CallCounter`, so benchmarks and tests can prove a no-op run made no
write call. Waits poll with backoff from 0.1 s to 5 s.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from botocore.exceptions import ClientError

from formwright.cloud.errors import error_code, error_message

WRITE_CALLS = {
    "create_change_set", "execute_change_set", "delete_change_set", "create_stack", "update_stack",
    "delete_stack", "continue_update_rollback", "update_termination_protection", "put_object",
    "create_bucket",
}

NO_CHANGES = ("didn't contain changes", "No updates are to be performed", "does not contain changes")


class CallCounter:
    """Counts API calls by operation; thread-safe."""

    def __init__(self) -> None:
        self.calls: Counter[str] = Counter()
        self._lock = threading.Lock()

    def add(self, operation: str) -> None:
        """Count one call of `operation`."""
        with self._lock:
            self.calls[operation] += 1

    @property
    def writes(self) -> int:
        """How many calls changed something."""
        return sum(n for op, n in self.calls.items() if op in WRITE_CALLS)

    @property
    def total(self) -> int:
        """How many calls in all."""
        return sum(self.calls.values())


@dataclass
class StackInfo:
    """What describe_stacks says of one stack."""

    name: str
    stack_id: str
    status: str
    reason: str = ""
    outputs: dict[str, str] = field(default_factory=dict)
    exports: dict[str, str] = field(default_factory=dict)
    parameters: dict[str, str] = field(default_factory=dict)
    tags: dict[str, str] = field(default_factory=dict)
    termination_protection: bool = False
    updated: datetime | None = None

    @classmethod
    def from_api(cls, data: dict[str, Any]) -> StackInfo:
        """Build from one element of describe_stacks' `Stacks`."""
        outputs, exports = {}, {}
        for out in data.get("Outputs") or []:
            outputs[out["OutputKey"]] = out.get("OutputValue", "")
            if out.get("ExportName"):
                exports[out["ExportName"]] = out.get("OutputValue", "")
        return cls(
            name=data["StackName"],
            stack_id=data.get("StackId", ""),
            status=data.get("StackStatus", ""),
            reason=data.get("StackStatusReason", "") or "",
            outputs=outputs,
            exports=exports,
            parameters={p["ParameterKey"]: p.get("ParameterValue", "") for p in data.get("Parameters") or []},
            tags={t["Key"]: t["Value"] for t in data.get("Tags") or []},
            termination_protection=bool(data.get("EnableTerminationProtection")),
            updated=data.get("LastUpdatedTime") or data.get("CreationTime"),
        )

    @property
    def in_progress(self) -> bool:
        """True while CloudFormation is still working on the stack."""
        return self.status.endswith("_IN_PROGRESS") and self.status != "REVIEW_IN_PROGRESS"

    @property
    def settled_ok(self) -> bool:
        """True in a *_COMPLETE state that leaves the stack usable."""
        return self.status in {"CREATE_COMPLETE", "UPDATE_COMPLETE", "UPDATE_ROLLBACK_COMPLETE",
                               "IMPORT_COMPLETE", "IMPORT_ROLLBACK_COMPLETE"}


def backoff_delays(first: float = 0.1, factor: float = 1.6, cap: float = 5.0):
    """0.1 s, 0.16 s, … up to 5 s, forever."""
    delay = first
    while True:
        yield delay
        delay = min(cap, delay * factor)


class CloudFormation:
    """The CloudFormation calls the engine makes, counted, with waits."""

    def __init__(self, client: Any, counter: CallCounter | None = None,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        self.client = client
        self.counter = counter or CallCounter()
        self.sleep = sleep

    def call(self, operation: str, **kwargs: Any) -> Any:
        """Call `operation` on the client and count it."""
        self.counter.add(operation)
        return getattr(self.client, operation)(**kwargs)

    def describe(self, stack_name: str) -> StackInfo | None:
        """The stack, or None when it does not exist (or was deleted)."""
        try:
            stacks = self.call("describe_stacks", StackName=stack_name)["Stacks"]
        except ClientError as err:
            if error_code(err) == "ValidationError" and "does not exist" in error_message(err):
                return None
            raise
        if not stacks or stacks[0].get("StackStatus") == "DELETE_COMPLETE":
            return None
        return StackInfo.from_api(stacks[0])

    def wait_stack(self, stack_name: str, on_poll: Callable[[StackInfo | None], None] | None = None,
                   timeout: float | None = None) -> StackInfo | None:
        """Poll until the stack is no longer *_IN_PROGRESS (CloudFormation ends every operation; a
        `timeout` in seconds gives up earlier); None when it is gone."""
        deadline = time.monotonic() + timeout if timeout is not None else float("inf")
        delays = backoff_delays()
        while True:
            info = self.describe(stack_name)
            if on_poll:
                on_poll(info)
            if info is None or not info.in_progress:
                return info
            if time.monotonic() > deadline:
                raise TimeoutError(f"{stack_name} still {info.status} after {timeout:.0f} s")
            self.sleep(next(delays))

    def create_change_set(self, **kwargs: Any) -> str:
        """Create a change set; return its id."""
        return str(self.call("create_change_set", **kwargs)["Id"])

    def wait_change_set(self, change_set_id: str, timeout: float = 1800.0) -> dict[str, Any]:
        """Poll until the change set is CREATE_COMPLETE or FAILED; return its full description."""
        deadline = time.monotonic() + timeout
        delays = backoff_delays()
        while True:
            desc = self.describe_change_set(change_set_id)
            if desc["Status"] in ("CREATE_COMPLETE", "FAILED", "DELETE_COMPLETE", "DELETE_FAILED"):
                return desc
            if time.monotonic() > deadline:
                raise TimeoutError(f"change set still {desc['Status']} after {timeout:.0f} s")
            self.sleep(next(delays))

    def describe_change_set(self, change_set_id: str) -> dict[str, Any]:
        """The change set with every page of its Changes."""
        desc = self.call("describe_change_set", ChangeSetName=change_set_id)
        changes = list(desc.get("Changes") or [])
        token = desc.get("NextToken")
        while token:
            page = self.call("describe_change_set", ChangeSetName=change_set_id, NextToken=token)
            changes.extend(page.get("Changes") or [])
            token = page.get("NextToken")
        desc["Changes"] = changes
        return desc

    def delete_change_set(self, change_set_id: str) -> None:
        """Delete a change set; one already gone is fine."""
        try:
            self.call("delete_change_set", ChangeSetName=change_set_id)
        except ClientError as err:
            if error_code(err) not in ("ChangeSetNotFound", "ChangeSetNotFoundException"):
                raise

    def events_since(self, stack_name: str, since: datetime | None, limit_pages: int = 3) -> list[dict]:
        """Stack events newer than `since`, newest first (a few pages at most)."""
        events: list[dict] = []
        token = None
        for _ in range(limit_pages):
            kwargs: dict[str, Any] = {"StackName": stack_name}
            if token:
                kwargs["NextToken"] = token
            try:
                page = self.call("describe_stack_events", **kwargs)
            except ClientError:
                return events
            for event in page.get("StackEvents", []):
                if since is not None and event["Timestamp"] < since:
                    return events
                events.append(event)
            token = page.get("NextToken")
            if not token:
                break
        return events


def is_no_change(description: dict[str, Any]) -> bool:
    """True when a FAILED change set failed only because there was nothing to change."""
    reason = description.get("StatusReason") or ""
    return description.get("Status") == "FAILED" and any(text in reason for text in NO_CHANGES)


def failure_reasons(events: list[dict]) -> list[str]:
    """`Logical: reason` for every failed resource event, oldest first."""
    reasons = []
    for event in reversed(events):
        status = event.get("ResourceStatus", "")
        if status.endswith("_FAILED") and event.get("ResourceStatusReason"):
            reasons.append(f"{event.get('LogicalResourceId')}: {event['ResourceStatusReason']}")
    return reasons
