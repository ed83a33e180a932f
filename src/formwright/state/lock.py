"""A lock file for one writer at a time: `with WriterLock(path, "deploy of app"):`.

The lock is an exclusive `flock` on the file, so the kernel drops it when its holder dies, whatever
the way. The file names the holder (pid, host, start time, what it does) so that a second writer is
told who holds it (LockHeldError, exit 3). A file still naming a process that is gone (it was killed)
is a stale lock: it is taken over and `note` says so.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import socket
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from formwright.errors import LockHeldError


def describe_holder(holder: dict[str, Any]) -> str:
    """`pid 123 on host, since 2026-11-22 11:03:12 UTC`."""
    since = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(float(holder.get("started_at", 0))))
    return f"pid {holder.get('pid', '?')} on {holder.get('host', '?')}, since {since}"


def read_holder(path: Path) -> dict[str, Any] | None:
    """What the lock file says about its holder (None when empty or unreadable)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8") or "null")
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


class WriterLock:
    """An exclusive lock on `path` for one writer; `what` says what the holder does."""

    def __init__(self, path: Path, what: str) -> None:
        self.path = Path(path)
        self.what = what
        self.note: str | None = None
        self._fd: int | None = None

    def acquire(self) -> str | None:
        """Take the lock, or raise LockHeldError naming its holder. Returns a note on a stale takeover."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            holder = None
            for _ in range(20):  # the holder may be writing its name right now
                holder = read_holder(self.path)
                if holder:
                    break
                time.sleep(0.05)
            who = f"{holder.get('what', 'another writer')} ({describe_holder(holder)})" if holder \
                else "another writer"
            raise LockHeldError(f"locked by {who}", file=str(self.path),
                                hint="wait for it to finish; the lock is released when it ends") from None
        previous = read_holder(self.path)
        self.note = None
        if previous:  # a holder that never released: the flock is free, so its process is gone
            self.note = (f"took over a stale lock of {previous.get('what', 'a writer')} "
                         f"({describe_holder(previous)}): its process is gone")
        me = {"pid": os.getpid(), "host": socket.gethostname(), "started_at": time.time(), "what": self.what}
        os.ftruncate(fd, 0)
        # not fsynced (5-30 ms on the way to a deploy's first change set): other processes read it from the
        # page cache, and a power cut ends every holder, and the flock with it, anyway
        os.pwrite(fd, json.dumps(me).encode("utf-8"), 0)
        self._fd = fd
        _live.add(self)
        return self.note

    def release(self) -> None:
        """Clear the holder's name and drop the lock."""
        if self._fd is None:
            return
        _live.discard(self)
        try:
            os.ftruncate(self._fd, 0)
            fcntl.flock(self._fd, fcntl.LOCK_UN)
        finally:
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> WriterLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


_live: set[WriterLock] = set()  # the locks this process holds now


def release_all() -> None:
    """Release every lock this process holds: for an exit that skips `with` blocks (Ctrl-C's os._exit),
    so that the next run finds the lock free instead of taking over a stale one."""
    for lock in list(_live):
        lock.release()


_held: dict[Path, int] = {}
_held_mutex = threading.Lock()


def project_lock_path(state_dir: Path, target_key: str) -> Path:
    """The writer lock of a project's state folder on one target."""
    return state_dir / "locks" / f"{target_key}.lock"


@contextlib.contextmanager
def project_lock(state_dir: Path, target_key: str, what: str) -> Iterator[None]:
    """Hold the project's writer lock on a target while the block runs (deploy, delete, sync).

    Re-entrant within one process, so an operation that calls another (a deploy inside an instance
    operation) holds it once. A stale takeover is reported on stderr.
    """
    path = project_lock_path(state_dir, target_key).resolve()
    with _held_mutex:
        nested = path in _held
        _held[path] = _held.get(path, 0) + 1
    try:
        if nested:
            yield
            return
        with WriterLock(path, what) as lock:
            if lock.note:
                sys.stderr.write(f"note: {lock.note}\n")
            yield
    finally:
        with _held_mutex:
            _held[path] -= 1
            if not _held[path]:
                del _held[path]
