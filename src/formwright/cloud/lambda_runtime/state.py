"""How the Lambda runtime shares the local cloud's state with the requests it serves.

A function calls the local cloud back (its SDK calls, a custom resource's response PUT), so nothing may
be held while it runs; and the runtime's own threads (the SQS poller, S3 and Event invocations, a custom
resource's provider) touch moto's backends outside any request. When the local cloud serialises its
state with one lock (`formwright.cloud.emulator.locking`: `hold()` around state access, `released()`
around a wait inside a request), these two helpers use it; without that module there is no lock to
take and they do nothing.
"""

from __future__ import annotations

import contextlib
from typing import Any


def _locking() -> Any:
    try:
        from formwright.cloud.emulator import locking  # type: ignore[attr-defined]  # where the lock lives
    except ImportError:
        return None
    return locking


def held() -> Any:
    """A context holding the state lock (re-entrant), around moto state read or written by our threads."""
    locking = _locking()
    return locking.hold() if locking is not None else contextlib.nullcontext()


def released() -> Any:
    """A context letting other requests run while a function runs (a no-op when nothing is held)."""
    locking = _locking()
    return locking.released() if locking is not None else contextlib.nullcontext()
