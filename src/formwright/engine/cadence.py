"""How often the engine's waits read: the cadence, and what earlier waits of a run teach the next.

docs/architecture.md, "Polling cadence", tells the whole of it.
"""

from __future__ import annotations

import random
import statistics
import threading
from dataclasses import dataclass


@dataclass(frozen=True)
class Cadence:
    """How often a wait reads (docs/architecture.md, "Polling cadence"). The next read comes after
    `fraction` of the time waited so far, within [`minimum`, `cap`] and ±`jitter`: quick answers are
    seen quickly, a long operation is read every `cap` seconds. A change set, quick to make, is read
    from `quick` seconds on. The first read waits `first` seconds (0 on the synchronous local cloud; on
    AWS nothing is ever done at once); a change set's first read comes at `lead` of the time earlier
    ones took (`Durations`). Stacks waited on together share one listing, read at most every
    `shared_minimum` seconds (engine/watch.py). Resource events are read on every `events_every`-th
    poll, and `events_interval` seconds apart at least. A failed read (throttled, 5xx, dropped) is
    retried after an exponential, jittered delay; a wait that meets nothing but failures for
    `give_up_after` seconds ends with an error."""

    minimum: float = 0.2
    fraction: float = 0.2
    first: float = 0.0
    cap: float = 5.0
    jitter: float = 0.1
    quick: float = 0.1
    lead: float = 0.8
    shared_minimum: float = 0.1
    events_every: int = 4
    events_interval: float = 2.0
    give_up_after: float = 600.0

    def base(self, waited: float, minimum: float | None = None) -> float:
        """The delay before the next read of a wait that has lasted `waited` seconds, without jitter."""
        return min(self.cap, max(self.minimum if minimum is None else minimum, self.fraction * waited))

    def delay(self, waited: float, minimum: float | None = None) -> float:
        """Seconds until the next read of a wait that has lasted `waited` seconds (jittered)."""
        return self.base(waited, minimum) * random.uniform(1 - self.jitter, 1 + self.jitter)  # noqa: S311

    def expecting(self, waited: float, expected: float) -> float:
        """The delay of a wait whose kind of operation took about `expected` seconds before: never
        longer than `delay`, with a read at `lead` of `expected` and reads `quick` seconds (or a
        twentieth of it) apart from there until half again past it."""
        plain = self.delay(waited)
        if expected <= 0 or waited >= 1.5 * expected:
            return plain
        if waited < self.lead * expected:
            return min(plain, self.lead * expected - waited)
        return min(plain, max(self.quick, expected / 20))

    def retry_delay(self, failures: int) -> float:
        """Seconds before retrying after `failures` failed reads in a row (equal jitter)."""
        ceiling = min(self.cap * 4, self.minimum * 2 ** failures)
        return ceiling / 2 + random.uniform(0, ceiling / 2)  # noqa: S311 - jitter, not crypto


class Durations:
    """How long operations of one kind took in this run, as seen by their waits; thread-safe.

    A wait records the middle of the span in which its operation ended (between its last read that
    found it still going and its first that found it done); `expected` is the median of the latest
    `keep`. Change sets of one project take much the same time, so the next wait can sleep through
    most of it and read often near its end: fewer reads, and the end seen sooner.
    """

    def __init__(self, keep: int = 20) -> None:
        self.keep = keep
        self._seen: list[float] = []
        self._lock = threading.Lock()

    def add(self, still_going: float, done: float) -> None:
        """One operation: its wait's last read that found it going and first that found it done
        (seconds into the wait)."""
        with self._lock:
            self._seen = [*self._seen[-(self.keep - 1):], (still_going + done) / 2]

    def expected(self) -> float:
        """The typical duration so far (0 before any)."""
        with self._lock:
            return statistics.median(self._seen) if self._seen else 0.0
