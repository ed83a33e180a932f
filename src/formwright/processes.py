"""Small facts about processes shared by the local cloud and the journal's locks."""

from __future__ import annotations

import os


def pid_alive(pid: int) -> bool:
    """True when a process with this id exists (it may belong to another user)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
