"""The local cloud's one state lock, and the stacks an operation is running on.

Every request the local cloud answers (any service, not only CloudFormation) runs holding `STATE`:
moto's backends and the emulator's records are plain dicts and objects shared by the threads of
moto's HTTP server, and one lock over all of them is the only order that cannot deadlock (an
execution touches EC2, IAM, S3 and the exports of other stacks at once). Its work is pure Python
under the GIL, so finer locks would buy no throughput. What must not hold it is waiting: code that
waits on something outside the state (a Lambda invocation, a signal) wraps the wait in `released()`,
and the stack's *_IN_PROGRESS status keeps it marked busy meanwhile, so a second operation on it is
refused as CloudFormation refuses it while requests on other stacks go on.

Use: `with locking.hold(): ...` around state access (re-entrant in a thread; the HTTP layer already
holds it around every request, see `formwright.cloud.serving`); `with locking.released(): ...` around a
wait inside it. A stack an operation runs on is marked by its *_IN_PROGRESS status while the lock is
released, and `api.refuse_in_progress` refuses a second operation on it as CloudFormation does.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

STATE = threading.Lock()
_depth = threading.local()  # how many times this thread holds STATE (hold() nests)


def _held() -> int:
    return getattr(_depth, "n", 0)


@contextmanager
def hold() -> Iterator[None]:
    """Hold the state lock (re-entrant within one thread)."""
    if _held() == 0:
        STATE.acquire()
    _depth.n = _held() + 1
    try:
        yield
    finally:
        _depth.n -= 1
        if _depth.n == 0:
            STATE.release()


@contextmanager
def released() -> Iterator[None]:
    """Let other requests run while this one waits; the lock is held again afterwards."""
    depth = _held()
    if depth:
        _depth.n = 0
        STATE.release()
    try:
        yield
    finally:
        if depth:
            STATE.acquire()
            _depth.n = depth
