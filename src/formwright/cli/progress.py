"""Live progress for stack operations: a rich table on a terminal, plain lines otherwise."""

from __future__ import annotations

import sys
import threading
import time
from dataclasses import dataclass, field

from rich.console import Console
from rich.live import Live
from rich.markup import escape
from rich.table import Table

from formwright.cli.common import err_console
from formwright.engine.results import ProgressEvent

_STYLE = {"done": "green", "failed": "red", "skipped": "yellow", "waiting": "dim"}


@dataclass
class _Line:
    phase: str = "waiting"
    status: str = ""
    message: str = ""
    started: float = field(default_factory=time.monotonic)
    ended: float | None = None


class Progress:
    """Receives ProgressEvents from worker threads and shows one line per stack."""

    def __init__(self, names: list[str], *, console: Console | None = None, enabled: bool = True) -> None:
        self.console = console or err_console
        self.lines = {name: _Line() for name in names}
        self.enabled = enabled
        self.live_mode = enabled and self.console.is_terminal
        self._lock = threading.Lock()
        self._live: Live | None = None

    def __enter__(self) -> Progress:
        if self.live_mode:
            self._live = Live(self._table(), console=self.console, refresh_per_second=8, transient=False)
            self._live.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._live is not None:
            self._live.update(self._table())
            self._live.__exit__(None, None, None)

    def __call__(self, event: ProgressEvent) -> None:
        with self._lock:
            line = self.lines.setdefault(event.stack, _Line())
            if line.phase == "waiting" and event.phase != "waiting":
                line.started = time.monotonic()
            changed = (event.phase, event.status, event.message) != (line.phase, line.status, line.message)
            line.phase, line.status = event.phase, event.status or line.status
            line.message = event.message or line.message
            if event.phase in ("done", "failed", "skipped"):
                line.ended = time.monotonic()
            if self._live is not None:
                self._live.update(self._table())
            elif self.enabled and changed and event.phase != "waiting":
                elapsed = (line.ended or time.monotonic()) - line.started
                parts = [f"{event.stack}:", event.phase]
                if event.status:
                    parts.append(event.status)
                if event.message:
                    parts.append(f"- {event.message}")
                parts.append(f"({elapsed:.1f}s)")
                print(" ".join(parts), file=sys.stderr, flush=True)

    def _table(self) -> Table:
        table = Table(box=None, pad_edge=False, show_header=True, header_style="bold")
        for column in ("stack", "phase", "status", "elapsed", "latest"):
            table.add_column(column)
        now = time.monotonic()
        for name, line in self.lines.items():
            elapsed = "" if line.phase == "waiting" else f"{(line.ended or now) - line.started:5.1f}s"
            style = _STYLE.get(line.phase, "cyan")
            table.add_row(
                escape(name), f"[{style}]{line.phase}[/]", line.status, elapsed, escape(line.message[:80])
            )
        return table
