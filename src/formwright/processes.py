"""Small facts about processes shared by the local cloud, the journal's locks and the code formwright runs
in child processes (local macros, the local cloud's Lambda functions)."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess


def pid_alive(pid: int) -> bool:
    """True when a process with this id exists (it may belong to another user)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def kill_group(child: subprocess.Popen) -> None:
    """Kill a child started with `start_new_session` and everything in its process group."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(child.pid, signal.SIGKILL)
    child.wait()


def wait_or_kill_group(child: subprocess.Popen, timeout: float) -> bool:
    """Wait for the child; past the timeout kill its whole process group. True when it timed out."""
    try:
        child.wait(timeout=timeout)
        return False
    except subprocess.TimeoutExpired:
        kill_group(child)
        return True
