"""A thin layer over the CloudFormation API: describe, change sets, execution, waits, events.

Every call counts itself in `CallCounter`, so benchmarks and tests can prove a no-op run made no
write call. Waits poll at the `Cadence` (docs/architecture.md, "Polling cadence"): a read that is
throttled or fails with 5xx is retried with backoff and jitter inside the wait, never its outcome.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import datetime
from typing import Any, TypeVar

from botocore.exceptions import ClientError

from formwright.cloud.errors import error_code, error_message, is_transient
from formwright.engine.cadence import TOLERANCE, Cadence, Durations
from formwright.engine.stack_info import StackInfo
from formwright.engine.watch import StackReads, StackWatch
from formwright.errors import CloudError

__all__ = ["StackInfo"]  # where the engine's callers have always found it

T = TypeVar("T")

WRITE_CALLS = {
    "create_change_set", "execute_change_set", "delete_change_set", "create_stack", "update_stack",
    "delete_stack", "continue_update_rollback", "update_termination_protection", "put_object",
    "create_bucket",
}

NO_CHANGES = ("didn't contain changes", "No updates are to be performed", "does not contain changes")

# The deadline of the waits of the stack this thread works on (monotonic seconds, and what set it)
_DEADLINE: ContextVar[tuple[float, str] | None] = ContextVar("formwright_wait_deadline", default=None)


class WaitTimeout(CloudError):
    """A wait that ran past its bound (a stack's `stack_timeout`): CloudFormation carries on, and
    `status` is the last status a read returned ("" when no read succeeded)."""

    def __init__(self, message: str, *, status: str = "", where: str | None = None,
                 hint: str | None = None) -> None:
        super().__init__(message, where=where, hint=hint)
        self.status = status


@contextmanager
def bounded(seconds: float | None, why: str) -> Iterator[None]:
    """Bound every wait made in this block (in this thread) to `seconds` from now; `why` names the
    bound in the error (`5 min (stack_timeout)`). None: no bound."""
    token = _DEADLINE.set((time.monotonic() + seconds, why) if seconds else None)
    try:
        yield
    finally:
        _DEADLINE.reset(token)


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


class CloudFormation:
    """The CloudFormation calls the engine makes, counted, with waits.

    `poll_client` (default: `client`) serves the reads inside waits; give it one without botocore
    retries so the wait loop keeps its own cadence and deadline through throttling.
    """

    def __init__(self, client: Any, counter: CallCounter | None = None,
                 sleep: Callable[[float], None] = time.sleep, *, poll_client: Any = None,
                 cadence: Cadence | None = None, shared_reads: bool = False) -> None:
        self.client = client
        self.poll_client = poll_client or client
        self.counter = counter or CallCounter()
        self.sleep = sleep
        self.cadence = cadence or Cadence()
        self.watch = StackWatch(self) if shared_reads else None
        self.change_sets = Durations()  # how long this target's change sets took to make
        self.executions = Durations()  # … and to execute

    def call(self, operation: str, **kwargs: Any) -> Any:
        """Call `operation` on the client and count it."""
        self.counter.add(operation)
        return getattr(self.client, operation)(**kwargs)

    def read(self, operation: str, **kwargs: Any) -> Any:
        """One read inside a wait, on the poll client, counted."""
        self.counter.add(operation)
        return getattr(self.poll_client, operation)(**kwargs)

    def describe(self, stack_name: str, *, polling: bool = False) -> StackInfo | None:
        """The stack, or None when it does not exist (or was deleted)."""
        try:
            call = self.read if polling else self.call
            stacks = call("describe_stacks", StackName=stack_name)["Stacks"]
        except ClientError as err:
            if error_code(err) == "ValidationError" and "does not exist" in error_message(err):
                return None
            raise
        if not stacks or stacks[0].get("StackStatus") == "DELETE_COMPLETE":
            return None
        return StackInfo.from_api(stacks[0])

    def describe_known(self, stack_name: str) -> tuple[StackInfo | None, bool]:
        """The stack as the shared listing showed it at most `Cadence.listed_within` seconds ago (no
        call), else as DescribeStacks by name shows it now; and whether it came from the listing. A stack
        comes to its deploy when the stacks it takes outputs from are done, which a listing usually
        has just seen: its own DescribeStacks would be one more call on the way to its change set."""
        if self.watch is not None:
            listed, info = self.watch.recent(stack_name, self.cadence.listed_within)
            if listed:
                return info, True
        return self.describe(stack_name), False

    def poll(self, read: Callable[[], T], done: Callable[[T], bool], *, what: str,
             timeout: float | None = None, minimum: float | None = None,
             pause: Callable[[float | None, float], None] | None = None, since: float | None = None) -> T:
        """Call `read` at the cadence until `done` says yes; return that value.

        Between reads `pause(waited, limit)` sleeps (default: the cadence's delay, from `minimum`
        seconds; `waited` None before the first read). `waited` counts from `since`, when the awaited
        operation began (monotonic; default: now): the default pause sleeps before the first read only
        what is left of the cadence's `first` (nothing for an operation begun that long ago), and later
        as far apart as the operation's age puts its reads. A transient failure (throttling, 5xx, a
        dropped connection) is retried with backoff and jitter; only a wait past its bound (`timeout`
        seconds, or the `bounded` block's deadline) or failing for the cadence's `give_up_after` seconds
        ends in error. Past the bound it raises WaitTimeout with the last status read.
        """
        started = time.monotonic()
        began = started if since is None else min(since, started)
        deadline, why = self.deadline(timeout)
        if pause is None:
            def pause(waited: float | None, limit: float) -> None:
                if waited is None:
                    first = self.cadence.first if minimum is None else min(self.cadence.first, minimum)
                    wanted = max(0.0, first - (time.monotonic() - began))
                else:
                    wanted = self.cadence.delay(waited, minimum)
                if wanted:
                    self.sleep(min(wanted, limit))
        failures, failing_since = 0, 0.0
        last: Any = _NOTHING
        pause(None, max(0.0, deadline - started))
        while True:
            try:
                value = read()
            except Exception as err:
                if not is_transient(err):
                    raise
                now = time.monotonic()
                failing_since = failing_since if failures else now
                failures += 1
                if now >= deadline:
                    raise _timeout(what, why, last, err) from None
                if now - failing_since > self.cadence.give_up_after:
                    raise CloudError(f"{what}: every read failed for {now - failing_since:.0f} s "
                                     f"({type(err).__name__}: {err})".replace("\n", " ")) from None
                self.sleep(min(self.cadence.retry_delay(failures), deadline - now))
                continue
            failures, last = 0, value
            if done(value):
                return value
            now = time.monotonic()
            if now >= deadline:
                raise _timeout(what, why, last, None)
            pause(now - began, deadline - now)

    @staticmethod
    def deadline(timeout: float | None = None) -> tuple[float, str]:
        """When a wait starting now must end (monotonic; inf: never) and what set it: `timeout`
        seconds, or the `bounded` block's deadline when sooner."""
        deadline = time.monotonic() + timeout if timeout is not None else float("inf")
        why = f"{timeout or 0:.0f} s"
        bound = _DEADLINE.get()
        if bound is not None and bound[0] < deadline:
            deadline, why = bound
        return deadline, why

    def _stack_reads(self, stack_id: str, timeout: float | None,
                     on_poll: Callable[[StackInfo | None], None] | None,
                     durations: Durations | None = None) -> tuple[StackReads, Callable]:
        """The reads of one stack's wait (shared listing or by id) and the read function for `poll`."""
        reads = StackReads(self, stack_id, self.deadline(timeout)[0], durations)

        def read() -> StackInfo | None:
            info = reads.read()
            if on_poll:
                on_poll(info)
            return info

        return reads, read

    def wait_stack(self, stack_name: str, on_poll: Callable[[StackInfo | None], None] | None = None,
                   timeout: float | None = None) -> StackInfo | None:
        """Poll until the stack is no longer *_IN_PROGRESS (CloudFormation ends every operation; a
        `timeout` in seconds gives up earlier); None when it is gone."""
        reads, read = self._stack_reads(stack_name, timeout, on_poll)
        with reads:
            return self.poll(read, lambda info: info is None or not info.in_progress,
                             what=f"waiting for {stack_name}", timeout=timeout, pause=reads.pause)

    def create_change_set(self, **kwargs: Any) -> str:
        """Create a change set; return its id."""
        return str(self.call("create_change_set", **kwargs)["Id"])

    def wait_change_set(self, change_set_id: str, timeout: float = 1800.0) -> dict[str, Any]:
        """Poll until the change set is CREATE_COMPLETE or FAILED; return its full description.

        Reads come at the cadence from `Cadence.quick` seconds on; once the target's change sets were
        seen to end (`Durations`, asked again before every read: change sets made together learn
        from the first of them to end), the wait sleeps to the start of their `Cadence.window` and
        reads from `Cadence.near` seconds apart in it (`Cadence.expecting`): the end is seen soon, with few
        reads."""
        began = time.monotonic()
        asked = {"going": 0.0, "last": 0.0}  # seconds into the wait: the latest read finding it going

        def read() -> dict[str, Any]:
            asked["last"] = time.monotonic() - began
            desc = self.describe_change_set(change_set_id, polling=True)
            if desc["Status"] in ("CREATE_PENDING", "CREATE_IN_PROGRESS"):
                asked["going"] = asked["last"]
            return desc

        def pause(waited: float | None, limit: float) -> None:
            if waited is None and not self.cadence.first:
                return  # the synchronous local cloud: read at once
            expected, earliest = self.change_sets.expectation()
            start, _ = self.cadence.window(expected, earliest)
            if expected and start - (waited or 0.0) > TOLERANCE:  # a target's change sets take much the
                wanted = start - (waited or 0.0)  # same time: sleep through to where earlier ones ended
            else:
                wanted = self.cadence.expecting(waited or 0.0, expected, earliest, self.cadence.quick)
            self.sleep(min(wanted, limit))

        desc = self.poll(read, lambda desc: desc["Status"] in ("CREATE_COMPLETE", "FAILED", "DELETE_COMPLETE",
                                                               "DELETE_FAILED"),
                         what="waiting for the change set", timeout=timeout, pause=pause)
        self.change_sets.add(asked["going"], asked["last"])
        return desc

    def describe_change_set(self, change_set_id: str, *, polling: bool = False) -> dict[str, Any]:
        """The change set with every page of its Changes."""
        call = self.read if polling else self.call
        desc = call("describe_change_set", ChangeSetName=change_set_id)
        changes = list(desc.get("Changes") or [])
        token = desc.get("NextToken")
        while token:
            page = call("describe_change_set", ChangeSetName=change_set_id, NextToken=token)
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

    def wait_operation(self, stack_id: str, before: StackInfo | None, *, change_set_id: str | None = None,
                       on_poll: Callable[[StackInfo | None], None] | None = None,
                       timeout: float | None = None) -> StackInfo | None:
        """Wait for the operation just started on the stack `stack_id` (an execution of `change_set_id`,
        a delete, a rollback) to end; return the stack as it left it (None: deleted).

        DescribeStacks is eventually consistent: right after ExecuteChangeSet it may still show the stack
        as it was (`before`): REVIEW_IN_PROGRESS for a create, the old status, LastUpdatedTime and
        outputs for an update (aws-cdk-cli#1802, fixed in #1848). Such a read means "still starting":
        a settled read counts only when it provably comes from after the operation started
        (`shows_execution`). An endpoint that never shows that (no LastUpdatedTime) is believed after
        repeated reads once the change set reports its execution over, or, with no change set, after
        three rounds of `events_every` stale reads.
        """
        seen = {"stale": 0, "after_report": 0}
        patience = self.cadence.events_every
        reads, read = self._stack_reads(stack_id, timeout, on_poll,
                                        self.executions if change_set_id else None)

        def done(info: StackInfo | None) -> bool:
            if info is None:  # read by stack id: DELETE_COMPLETE (a delete, or a failed create deleted)
                return True
            if info.in_progress:
                return False
            if shows_execution(info, before):
                return True
            seen["stale"] += 1
            if change_set_id is None:
                return seen["stale"] > 3 * patience
            if seen["after_report"]:
                seen["after_report"] += 1
                return seen["after_report"] > patience
            if seen["stale"] % patience == 0 and self._execution_over(change_set_id):
                seen["after_report"] = 1
            return False

        name = stack_id.split("/")[-2] if stack_id.count("/") >= 2 else stack_id  # …:stack/<name>/<id>
        with reads:
            final = self.poll(read, done, what=f"waiting for {name}", timeout=timeout, pause=reads.pause)
        reads.record()
        return final

    def _execution_over(self, change_set_id: str) -> bool:
        """True when the change set reports its execution finished (or is gone with its stack)."""
        try:
            desc = self.read("describe_change_set", ChangeSetName=change_set_id)
        except ClientError as err:
            if error_code(err) in ("ChangeSetNotFound", "ChangeSetNotFoundException"):
                return True
            raise
        return desc.get("ExecutionStatus") in ("EXECUTE_COMPLETE", "EXECUTE_FAILED", "OBSOLETE")

    def operation_events(self, stack_name: str, token: str | None = None, *, polling: bool = False,
                         limit_pages: int = 3) -> list[dict]:
        """The events of the stack's latest operation, newest first: those carrying `token` (the
        operation's ClientRequestToken) when events carry tokens, else every event back to the stack's
        own event that started the operation. Never bounded by the local clock."""
        call = self.read if polling else self.call
        events: list[dict] = []
        kwargs: dict[str, Any] = {"StackName": stack_name}
        for _ in range(limit_pages):
            try:
                page = call("describe_stack_events", **kwargs)
            except ClientError:
                return events
            for event in page.get("StackEvents", []):
                theirs = event.get("ClientRequestToken")
                if token and theirs and theirs != token:
                    if events:
                        return events  # reached the operation before ours
                    continue  # a later operation's event
                events.append(event)
                if _starts_operation(event):
                    return events
            if not page.get("NextToken"):
                break
            kwargs["NextToken"] = page["NextToken"]
        return events

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


_NOTHING = object()  # no read of a wait has succeeded yet


def _timeout(what: str, why: str, last: Any, err: Exception | None) -> WaitTimeout:
    """The WaitTimeout of a wait `what` past its bound `why`, naming the cloud's last known status."""
    if isinstance(last, StackInfo):
        status, state = last.status, f"still {last.status} in the cloud"
    elif isinstance(last, dict) and last.get("Status"):
        status = str(last["Status"])
        state = f"the change set is still {status} in the cloud"
    elif last is None or last is _NOTHING:
        status = ""
        failed = f" (every read failed: {type(err).__name__}: {err})".replace("\n", " ") if err else ""
        state = f"its status in the cloud is unknown{failed}"
    else:
        status, state = "", f"last read: {last}"
    return WaitTimeout(f"{what}: timed out after {why}: {state}", status=status,
                       hint="CloudFormation carries on with it; deploy again to wait for its end")


_OPERATION_STARTS = {"CREATE_IN_PROGRESS", "UPDATE_IN_PROGRESS", "DELETE_IN_PROGRESS", "IMPORT_IN_PROGRESS",
                     "ROLLBACK_IN_PROGRESS", "UPDATE_ROLLBACK_IN_PROGRESS", "IMPORT_ROLLBACK_IN_PROGRESS"}


def _starts_operation(event: dict[str, Any]) -> bool:
    """True for the stack's own event that opens an operation (`User Initiated`)."""
    return (event.get("ResourceType") == "AWS::CloudFormation::Stack"
            and event.get("LogicalResourceId") == event.get("StackName")
            and event.get("ResourceStatus") in _OPERATION_STARTS
            and (event.get("ResourceStatusReason") or "User Initiated") == "User Initiated")


def shows_execution(info: StackInfo, before: StackInfo | None) -> bool:
    """True when the settled stack `info` provably comes from after an execution started on the stack
    that was `before` (None or REVIEW_IN_PROGRESS: a create)."""
    if info.status == "REVIEW_IN_PROGRESS":
        return False
    if before is None or before.status == "REVIEW_IN_PROGRESS":
        return True
    if info.status != before.status:
        return True
    return info.updated is not None and before.updated is not None and info.updated > before.updated


def is_no_change(description: dict[str, Any]) -> bool:
    """True when a FAILED change set failed only because there was nothing to change."""
    reason = description.get("StatusReason") or ""
    return description.get("Status") == "FAILED" and any(text in reason for text in NO_CHANGES)


def failure_reasons(events: list[dict]) -> list[str]:
    """`Logical: reason` for every failed resource event, oldest first, and the stack's own reason for
    rolling back where no resource failed for it (an export in use, a duplicate export name: CloudFormation
    gives those on the stack's ROLLBACK_IN_PROGRESS / UPDATE_ROLLBACK_IN_PROGRESS event only)."""
    reasons = []
    for event in reversed(events):
        status = event.get("ResourceStatus", "")
        reason = event.get("ResourceStatusReason")
        stack_rollback = (status in ("ROLLBACK_IN_PROGRESS", "UPDATE_ROLLBACK_IN_PROGRESS")
                          and event.get("ResourceType") == "AWS::CloudFormation::Stack"
                          and not str(reason).startswith("The following resource(s) failed"))
        if reason and (status.endswith("_FAILED") or stack_rollback):
            reasons.append(f"{event.get('LogicalResourceId')}: {reason}")
    return reasons


def poll_client(target: Any) -> Any:
    """The CloudFormation client for reads inside waits: no botocore retries, the wait loop retries.
    Made on the first read (the first wait comes after a CreateChangeSet: not on the way to it)."""
    from formwright.cloud.session import LazyClient

    def make() -> Any:
        try:
            return target.client("cloudformation", max_attempts=1)
        except TypeError:  # a target whose client() takes no options (tests' stand-ins)
            return target.client("cloudformation")

    return LazyClient(make)


def cloudformation_of(target: Any, counter: CallCounter | None = None) -> CloudFormation:
    """The engine's CloudFormation of a target, its waits at the target's cadence: the local cloud finishes
    every operation synchronously (read at once there, one stack at a time); on AWS nothing is done at
    once, and stacks waited on together share a listing."""
    local = target.kind == "local"
    cadence = Cadence(first=0.0 if local else Cadence.minimum)
    return CloudFormation(target.client("cloudformation"), counter, poll_client=poll_client(target),
                          cadence=cadence, shared_reads=not local)
