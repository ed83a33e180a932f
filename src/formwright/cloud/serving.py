"""The local cloud's HTTP layer around moto's: every request under the state lock, and the snapshot.

- each request runs holding `emulator.locking.STATE` (its body read before, so a slow client never
  holds it), which makes every API call on moto's backends and the emulator's records safe under the
  threads of moto's server;
- `POST /formwright-api/snapshot` writes the snapshot now and answers how many stacks it keeps (what
  `local-cloud stop` says); a snapshot is also written every `interval` seconds when requests came
  since the last one, and on SIGTERM (`local-cloud stop`, a reboot's shutdown);
- at start the snapshot, if any, is loaded whole before the first request is answered;
- the hot CloudFormation reads (DescribeStacks, ListStacks, DescribeStackEvents, DescribeChangeSet) are
  answered by `formwright.cloud.fast_reads` under the same lock, without moto's routing and
  serializer; they change nothing, so they do not count towards the next snapshot;
- moto routes each request by listing its own package's folders (twice for a request to 127.0.0.1, whose
  host names no service): listed once here, as the installed package does not change while it serves.
"""

from __future__ import annotations

import io
import json
import sys
import threading
from pathlib import Path
from typing import Any

from formwright.cloud import fast_reads, persistence
from formwright.cloud.emulator import locking

API = "/formwright-api/"


class Snapshots:
    """When and where the state is written."""

    def __init__(self, path: Path | None, interval: float) -> None:
        self.path = path
        self.interval = interval
        self.changes = 0  # requests since the last snapshot
        self.written_lock = threading.Lock()  # one writer at a time (the timer, a request, SIGTERM)

    def write(self, *, always: bool = False) -> dict[str, Any]:
        """Write the snapshot (when state may have changed, or `always`); say what it keeps."""
        with self.written_lock:
            with locking.hold():
                changed, self.changes = self.changes, 0
                stacks = persistence.stack_count()
                data = persistence.capture() if self.path and (changed or always) else None
            if data is not None and self.path is not None:
                persistence.write(self.path, data)
        return {"stacks": stacks, "path": str(self.path) if self.path else None,
                "written": data is not None}

    def every_interval(self) -> None:
        """Write the snapshot periodically (a daemon thread)."""
        stop = threading.Event()
        while not stop.wait(self.interval):
            try:
                self.write()
            except Exception as err:  # noqa: BLE001 - a failed periodic snapshot is logged, the next one tries
                print(f"formwright: snapshot failed: {type(err).__name__}: {err}", file=sys.stderr,
                      flush=True)


def _read_body(environ: dict[str, Any]) -> None:
    """Read the request body before the lock is taken (a slow client must not hold it)."""
    length = environ.get("CONTENT_LENGTH")
    if length and length.isdigit():
        environ["wsgi.input"] = io.BytesIO(environ["wsgi.input"].read(int(length)))


def _list_modules_once() -> None:
    """moto's `list_of_moto_modules` (an os.listdir and an isdir per entry, on every request) answered from
    one listing."""
    from moto import backends

    modules = tuple(backends.list_of_moto_modules())
    backends.list_of_moto_modules = lambda: modules  # type: ignore[assignment]  # moto has no hook for this


def install(snapshots: Snapshots) -> None:
    """Wrap moto's WSGI application: the lock, the snapshot endpoint, the snapshot on SIGTERM."""
    import moto.server
    from moto.moto_server.werkzeug_app import DomainDispatcherApplication

    _list_modules_once()
    original = DomainDispatcherApplication.__call__
    fast_on = fast_reads.enabled()

    def call(self: Any, environ: dict[str, Any], start_response: Any) -> Any:
        path = environ.get("PATH_INFO", "")
        if path == API + "snapshot":
            answer = json.dumps(snapshots.write(always=True)).encode()
            start_response("200 OK", [("Content-Type", "application/json"),
                                      ("Content-Length", str(len(answer)))])
            return [answer]
        _read_body(environ)
        with locking.hold():
            quick = fast_reads.answer(environ) if fast_on else None
            if quick is not None:  # a hot read, answered without moto's routing and serializer
                status, headers, body = quick
                start_response(status, [*headers, ("Content-Length", str(len(body)))])
                return [body]
            if not (path == "/moto-api/" and environ.get("REQUEST_METHOD") == "GET"):  # the health check
                snapshots.changes += 1
            result = original(self, environ, start_response)
            try:
                return [b"".join(result)]  # the body is made under the lock, as the state it shows
            finally:
                if hasattr(result, "close"):
                    result.close()

    DomainDispatcherApplication.__call__ = call  # type: ignore[method-assign]  # moto has no hook for this

    def on_signal(signum: Any, frame: Any) -> None:
        try:
            snapshots.write()
        finally:
            sys.exit(0)

    moto.server.signal_handler = on_signal  # moto.server.main installs it for SIGINT and SIGTERM
    if snapshots.path is not None and snapshots.interval > 0:
        threading.Thread(target=snapshots.every_interval, name="formwright-snapshot", daemon=True).start()


def restore(path: Path) -> int:
    """Load the snapshot at `path` (if any) into moto's backends; return how many stacks it held."""
    if not path.exists():
        return 0
    payload = persistence.load(path)
    with locking.hold():
        persistence.install(payload)
        return persistence.stack_count()
