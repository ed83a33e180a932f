"""The writer lock file: a second writer is refused naming the holder; a killed holder's lock is taken over.

Real child processes hold the lock (flock is per open file, so a child is the honest second writer).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from formwright.errors import EXIT_LOCKED, LockHeldError
from formwright.state.lock import WriterLock, read_holder

HOLD = """
import sys, time
from formwright.state.lock import WriterLock
lock = WriterLock(sys.argv[1], "deploy of demo")
lock.acquire()
print("held", flush=True)
time.sleep(60)
"""


def _holder(path: Path) -> subprocess.Popen:
    child = subprocess.Popen([sys.executable, "-c", HOLD, str(path)], stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None and child.stdout.readline().strip() == "held"
    return child


def test_second_writer_is_refused_naming_the_holder(tmp_path: Path) -> None:
    path = tmp_path / "state" / "deploy.lock"
    child = _holder(path)
    try:
        with pytest.raises(LockHeldError) as err:
            WriterLock(path, "deploy of demo").acquire()
        assert err.value.exit_code == EXIT_LOCKED
        assert f"pid {child.pid}" in str(err.value) and "deploy of demo" in str(err.value)
        assert "since" in str(err.value)
    finally:
        child.kill()
        child.wait()


def test_a_killed_holder_is_taken_over_with_a_note(tmp_path: Path) -> None:
    path = tmp_path / "deploy.lock"
    child = _holder(path)
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    lock = WriterLock(path, "delete of demo")
    note = lock.acquire()
    try:
        assert note is not None and f"pid {child.pid}" in note and "gone" in note
        holder = read_holder(path)
        assert holder is not None and holder["pid"] == os.getpid() and holder["what"] == "delete of demo"
    finally:
        lock.release()
    assert read_holder(path) is None  # released cleanly: the next writer gets no note
    with WriterLock(path, "again") as again:
        assert again.note is None


