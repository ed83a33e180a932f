"""The reads of the engine's stack waits: one DescribeStacks listing for every stack being waited on
through one client, each wait's own reads, and the progress an operation's wait shows.

A DescribeStacks without a name returns every stack of the region (page by page). While more stacks
wait than the listing has pages, one listing serves them all: it is read as often as the waits' own
cadences would have read in sum (`pages / sum(1 / delay)`, never more often than every
`Cadence.shared_minimum` seconds), so the read budget stays that of the waits while each of them sees
a newer answer. Fewer waits than pages, a stack the listing does not show (deleted, or not yet
visible), and a wait inside the window where the target's earlier operations of its kind ended
(`Cadence.window`: there it reads often, and one small answer is sooner than a listing) are read by
stack id. A failed listing (throttled, 5xx) is sat out by the waits
up to PATIENCE in a row; after that they and the listings back off as failed reads do.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from formwright.engine.cadence import TOLERANCE
from formwright.engine.results import ProgressEvent
from formwright.engine.stack_info import StackInfo

if TYPE_CHECKING:
    from formwright.engine.cadence import Cadence, Durations


class StackCalls(Protocol):
    """What the reads of a wait need of the CloudFormation layer (engine/cfn.py's CloudFormation), named
    here so that this module does not import the one that imports it."""

    cadence: Cadence
    watch: StackWatch | None
    sleep: Callable[[float], None]

    def read(self, operation: str, **kwargs: Any) -> Any: ...

    def describe(self, stack_name: str, *, polling: bool = False) -> StackInfo | None: ...

    def operation_events(self, stack_name: str, token: str | None = None, *, polling: bool = False,
                         limit_pages: int = 3) -> list[dict]: ...


PATIENCE = 2  # failed listings in a row that waits sit out before they back off as failed reads


@dataclass(frozen=True)
class Listing:
    """One DescribeStacks listing: its number, the stacks by id, or what it failed with."""

    generation: int
    started: float  # monotonic: when its first page was asked for
    stacks: dict[str, StackInfo]
    error: Exception | None = None
    failures: int = 0  # listings failed in a row, this one included


class StackWatch:
    """The shared listing of one CloudFormation client; thread-safe."""

    def __init__(self, cfn: StackCalls) -> None:
        self.cfn = cfn
        self._cond = threading.Condition()
        self._waits: dict[int, float] = {}  # wait -> when it began (monotonic)
        self._alone: set[int] = set()  # waits reading by stack id for now
        self._next_id = 0
        self._generation = 0  # listings completed
        self._started = 0.0  # when the latest one began
        self._stacks: dict[str, StackInfo] = {}  # stack id and name -> as the latest listing showed it
        self._error: Exception | None = None  # what the latest listing failed with
        self._failures = 0  # listings failed in a row
        self._running = False
        self._pages = 1

    @contextmanager
    def waiting(self) -> Iterator[int]:
        """Count one wait for as long as the block runs; yields its id."""
        wait_id = self.join()
        try:
            yield wait_id
        finally:
            self.leave(wait_id)

    def join(self) -> int:
        """Count one more wait (until `leave`); return its id."""
        with self._cond:
            self._next_id += 1
            self._waits[self._next_id] = time.monotonic()
            return self._next_id

    def leave(self, wait_id: int) -> None:
        """The wait `wait_id` is over."""
        with self._cond:
            self._waits.pop(wait_id, None)
            self._alone.discard(wait_id)

    def read_alone(self, wait_id: int, alone: bool) -> None:
        """Whether the wait `wait_id` reads by stack id for now: it neither counts towards the listing
        being worth it nor hastens it."""
        with self._cond:
            (self._alone.add if alone else self._alone.discard)(wait_id)

    def shared(self) -> bool:
        """True while a listing is cheaper than one read per waiting stack."""
        with self._cond:
            return len(self._waits) - len(self._alone) > self._pages

    def next_listing(self, after: int, since: float, until: float) -> Listing | None:
        """The first listing after listing number `after` that began at `since` or later (monotonic):
        a listing asked for before an execution returned tells nothing of it. This thread makes it
        when it is due and nobody else is; None when `until` comes first."""
        with self._cond:
            while self._generation <= after or self._started < since:
                now = time.monotonic()
                if now >= until:
                    return None
                # the next listing's time, from the waits there are now (a new one may hasten it)
                next_start = self._started + self._interval(now)
                if not self._running and now >= next_start:
                    self._running = True
                    break
                due = next_start - now if not self._running else 1.0  # woken when it is done
                self._cond.wait(max(0.005, min(due, until - now)))
            else:
                return self._answer()
        self._list()
        with self._cond:
            return self._answer()

    def recent(self, name: str, within: float) -> tuple[bool, StackInfo | None]:
        """What the latest listing, if it began at most `within` seconds ago and succeeded, says of the
        stack `name`: (True, it) or (True, None: not there); (False, None) without such a listing."""
        with self._cond:
            if not self._generation or self._error is not None or time.monotonic() - self._started > within:
                return False, None
            info = self._stacks.get(name)
            return True, (info if info is not None and info.status != "DELETE_COMPLETE" else None)

    def _answer(self) -> Listing:
        return Listing(self._generation, self._started, self._stacks, self._error, self._failures)

    def _list(self) -> None:
        """Read every page of DescribeStacks (this thread was chosen to)."""
        started = time.monotonic()
        stacks: dict[str, StackInfo] = {}
        error: Exception | None = None
        pages = 0
        try:
            kwargs: dict[str, Any] = {}
            while True:
                page = self.cfn.read("describe_stacks", **kwargs)
                pages += 1
                for data in page.get("Stacks") or []:
                    info = StackInfo.from_api(data)
                    stacks[info.stack_id] = info
                    if info.status != "DELETE_COMPLETE":  # an active stack's name is its own
                        stacks[info.name] = info
                if not page.get("NextToken"):
                    break
                kwargs["NextToken"] = page["NextToken"]
        except Exception as err:  # noqa: BLE001 - handed to every waiter, whose wait loop judges it
            error = err
        finally:
            with self._cond:
                self._generation += 1
                self._started = started
                self._running = False
                if error is None:
                    self._stacks, self._pages = stacks, max(1, pages)
                self._error = error
                self._failures = self._failures + 1 if error is not None else 0
                self._cond.notify_all()

    def _interval(self, now: float) -> float:
        """Seconds between listings: the waits' summed read rate, paid in pages; after more than
        PATIENCE failed listings in a row, the backoff of a failed read as well."""
        cadence = self.cfn.cadence
        rate = sum(1 / cadence.base(now - began) for wait, began in self._waits.items()
                   if wait not in self._alone)
        interval = max(cadence.shared_minimum, self._pages / rate) if rate else cadence.shared_minimum
        if self._failures > PATIENCE:
            interval = max(interval, cadence.retry_delay(self._failures - PATIENCE))
        return interval


class StackReads:
    """The reads of one stack's wait: from the shared listing while it pays, else by stack id.

    Used as a context manager around the wait, which it counts in the shared listing's waits. `pause`
    comes between reads (the wait loop's sleep); `read` blocks for the next listing in shared mode,
    whose own schedule paces the wait. With `durations` (of operations like this one) a wait reads by
    id, often, inside the window where they ended (`Cadence.expecting`), and `record` adds this one.
    """

    def __init__(self, cfn: StackCalls, stack_id: str, until: float,
                 durations: Durations | None = None) -> None:
        self.cfn, self.stack_id, self.until, self.durations = cfn, stack_id, until, durations
        self.watch = cfn.watch
        self.wait_id: int | None = None
        self.seen = 0  # the latest listing this wait has read
        self.since = time.monotonic()  # listings begun before the wait tell nothing of it
        self.shared = self.watch is not None and self.watch.shared()
        self.window_starts = until  # monotonic: where a shared read gives way to reads by id
        self.asked = {"going": 0.0, "last": 0.0}  # seconds into the wait: latest read finding it going

    def __enter__(self) -> StackReads:
        if self.watch is not None:
            self.wait_id = self.watch.join()
            self.shared = self.watch.shared()
        return self

    def __exit__(self, *_: object) -> None:
        if self.watch is not None and self.wait_id is not None:
            self.watch.leave(self.wait_id)
            self.wait_id = None

    def read(self) -> StackInfo | None:
        """The stack as the next listing shows it, or as DescribeStacks by id shows it."""
        info: StackInfo | None = None
        asked = time.monotonic()
        while self.shared and self.watch is not None:
            listing = self.watch.next_listing(self.seen, self.since, min(self.until, self.window_starts))
            if listing is None:  # the bound, or the window where a read by id is sooner
                break
            self.seen = listing.generation
            if listing.error is not None:  # throttled, 5xx …: the next listing comes at its time;
                if listing.failures > PATIENCE:  # failing on, the wait loop retries with backoff
                    raise listing.error
                continue
            info, asked = listing.stacks.get(self.stack_id), listing.started
            break
        if info is None:
            asked = time.monotonic()
            info = self.cfn.describe(self.stack_id, polling=True)
        self.asked["last"] = asked - self.since
        if info is not None and info.in_progress:
            self.asked["going"] = self.asked["last"]
        return info

    def pause(self, waited: float | None, limit: float) -> None:
        """Sleep the cadence's delay (`waited` None: before the first read) ahead of a read by id;
        none ahead of a shared read, which waits for the listing's turn."""
        cadence = self.cfn.cadence
        expected, earliest = (self.durations.expectation() if self.durations is not None and cadence.first
                              else (0.0, 0.0))  # (not on the synchronous local cloud)
        start, end = cadence.window(expected, earliest)
        inside = bool(expected) and start - TOLERANCE <= (waited or 0.0) < end
        self.window_starts = self.since + start if expected and not inside else self.until
        if self.watch is not None and self.wait_id is not None:
            self.watch.read_alone(self.wait_id, inside)
        self.shared = self.watch is not None and not inside and self.watch.shared()
        if self.shared:
            return
        if waited is None:
            wanted = cadence.first
        elif expected:
            wanted = cadence.expecting(waited, expected, earliest)
        else:
            wanted = cadence.delay(waited)
        if wanted:
            self.cfn.sleep(min(wanted, limit))

    def record(self) -> None:
        """Add this wait's operation to `durations`."""
        if self.durations is not None:
            self.durations.add(self.asked["going"], self.asked["last"])


class OperationPolls:
    """The progress of one operation's wait: the status on every poll, the latest resource event of
    this operation (by its token) only on every `events_every`-th poll while it is in progress, and
    `events_interval` seconds after the wait began or the last events read at the soonest."""

    def __init__(self, cfn: StackCalls, stack: str, phase: str, token: str,
                 progress: Callable[[ProgressEvent], None]) -> None:
        self.cfn, self.stack, self.phase, self.token, self.progress = cfn, stack, phase, token, progress
        self.count = 0
        self.message = ""
        self.events_read = time.monotonic()

    def __call__(self, info: StackInfo | None) -> None:
        self.count += 1
        cfn = self.cfn
        due = time.monotonic() - self.events_read >= cfn.cadence.events_interval
        if info is not None and info.in_progress and self.count % cfn.cadence.events_every == 0 and due:
            self.events_read = time.monotonic()
            try:
                events = cfn.operation_events(info.stack_id, self.token, polling=True, limit_pages=1)
            except Exception:  # noqa: BLE001 - progress only: a failed read must not end the wait
                events = []
            if events:
                self.message = f"{events[0].get('LogicalResourceId')} {events[0].get('ResourceStatus')}"
        self.progress(ProgressEvent(self.stack, self.phase, info.status if info else "DELETE_COMPLETE",
                                    self.message))
