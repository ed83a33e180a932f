"""Pausing Python's cyclic garbage collector while a transform runs.

A transform allocates many small, long-lived objects (tosca-parser's type objects, the model,
troposphere's resources); each full collection walks all of them again, which grows faster than the
topology (at 1,000 nodes about a sixth of the run). Reference counting still frees almost
everything at once; the few cycles are collected as usual once the transform is over. Nested and
concurrent transforms share the pause: the collector is re-enabled when the last one ends, and only
if it was enabled when the first one began.
"""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Iterator

_lock = threading.Lock()
_depth = 0
_was_enabled = False


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Run the body with the cyclic garbage collector disabled (re-enabled as it was afterwards)."""
    global _depth, _was_enabled
    with _lock:
        if _depth == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _was_enabled:
                gc.enable()
