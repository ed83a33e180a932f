"""How often the engine's waits read: the cadence, and what earlier waits of a run teach the next.

docs/architecture.md, "Polling cadence", tells the whole of it.
"""

from __future__ import annotations

import random
import statistics
import threading
from dataclasses import dataclass

TOLERANCE = 0.001  # seconds: a wait this close to a point it slept to is there (float sums)


@dataclass(frozen=True)
class Cadence:
    """How often a wait reads (docs/architecture.md, "Polling cadence"). The next read comes after
    `fraction` of the time waited so far, within [`minimum`, `cap`] and ±`jitter`: quick answers are
    seen quickly, a long operation is read every `cap` seconds. A change set, quick to make, is read
    from `quick` seconds on. The first read waits `first` seconds (0 on the synchronous local cloud; on
    AWS nothing is ever done at once). A wait whose kind of operation was seen before (`Durations`)
    reads `near` seconds apart from the start of the window where earlier ones ended (`window`), then
    `settling` of the time since that start apart (few reads when this one runs late), and at the plain
    cadence outside the window. Stacks waited on together share one
    listing, read at most every `shared_minimum` seconds (engine/watch.py); a stack coming to its deploy
    is taken as a listing begun at most `listed_within` seconds before showed it. Resource events are read
    on every `events_every`-th poll, and `events_interval` seconds apart at least. A failed read
    (throttled, 5xx, dropped) is retried after an exponential, jittered delay; a wait that meets
    nothing but failures for `give_up_after` seconds ends with an error."""

    minimum: float = 0.2
    fraction: float = 0.2
    first: float = 0.0
    cap: float = 5.0
    jitter: float = 0.1
    quick: float = 0.1
    lead: float = 0.5
    near: float = 0.02
    settling: float = 0.5
    shared_minimum: float = 0.1
    listed_within: float = 5.0
    events_every: int = 4
    events_interval: float = 2.0
    give_up_after: float = 600.0

    def base(self, waited: float, minimum: float | None = None) -> float:
        """The delay before the next read of a wait that has lasted `waited` seconds, without jitter."""
        return min(self.cap, max(self.minimum if minimum is None else minimum, self.fraction * waited))

    def delay(self, waited: float, minimum: float | None = None) -> float:
        """Seconds until the next read of a wait that has lasted `waited` seconds (jittered)."""
        return self.base(waited, minimum) * random.uniform(1 - self.jitter, 1 + self.jitter)  # noqa: S311

    def window(self, expected: float, earliest: float) -> tuple[float, float]:
        """Seconds into a wait between which an operation that took about `expected` seconds before
        (typically last seen still going at `earliest`) is likely to end: from `earliest`, but not
        before `lead` of `expected`, to half again past `expected`. (0, 0): nothing seen yet."""
        if expected <= 0:
            return 0.0, 0.0
        return min(expected, max(self.lead * expected, earliest)), 1.5 * expected

    def expecting(self, waited: float, expected: float, earliest: float = 0.0,
                  minimum: float | None = None) -> float:
        """The delay of a wait whose kind of operation took about `expected` seconds before: never
        longer than `delay(waited, minimum)`; a read at the start of `window`, and inside it reads `near`
        seconds apart, growing to `settling` of the time since the window's start: where earlier ones
        typically ended the end is seen within ~`near` seconds, and one running late is read at a pace
        falling geometrically (~10 reads in its window's first second), not `near` apart throughout."""
        plain = self.delay(waited, minimum)
        start, end = self.window(expected, earliest)
        if expected <= 0 or waited >= end:
            return plain
        if start - waited > TOLERANCE:
            return min(plain, start - waited)
        return min(plain, max(self.near, self.settling * (waited - start)))

    def retry_delay(self, failures: int) -> float:
        """Seconds before retrying after `failures` failed reads in a row (equal jitter)."""
        ceiling = min(self.cap * 4, self.minimum * 2 ** failures)
        return ceiling / 2 + random.uniform(0, ceiling / 2)  # noqa: S311 - jitter, not crypto


class Durations:
    """How long operations of one kind took in this run, as seen by their waits; thread-safe.

    A wait records the span in which its operation ended: its last read that found it still going and
    its first that found it done. `expected` is the middle of that span (the median of the latest
    `keep`), and `expectation` adds the median of the last reads that found them still going. Change
    sets of one project take much the same time, so the next wait can read often near their end:
    the end seen sooner, for few reads.
    """

    def __init__(self, keep: int = 20) -> None:
        self.keep = keep
        self._seen: list[tuple[float, float]] = []
        self._lock = threading.Lock()

    def add(self, still_going: float, done: float) -> None:
        """One operation: its wait's last read that found it going and first that found it done
        (seconds into the wait)."""
        with self._lock:
            self._seen = [*self._seen[-(self.keep - 1):], (still_going, done)]

    def expected(self) -> float:
        """The typical duration so far (0 before any)."""
        return self.expectation()[0]

    def expectation(self) -> tuple[float, float]:
        """The typical duration and the typical time they were last seen still going (0, 0 before
        any): reading often from there on sees the end of one like them soon."""
        with self._lock:
            if not self._seen:
                return 0.0, 0.0
            middle = statistics.median((going + done) / 2 for going, done in self._seen)
            return middle, statistics.median(going for going, _ in self._seen)
