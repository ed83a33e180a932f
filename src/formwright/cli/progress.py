"""Live progress for stack operations: a header and the stacks that matter on a terminal, plain lines
otherwise.

On a terminal the display fits the screen: a header line (done / running / failed / total, elapsed),
running and failed stacks first, then waiting ones as far as there is room, finished ones collapsed to a
count. It is transient: the command prints one summary when the work ends. Ctrl-C stops at once and says
which stacks are still in progress in the cloud (CloudFormation finishes what it started without us).
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from formwright.cli import common
from formwright.engine.results import ProgressEvent
from formwright.errors import EXIT_INTERRUPTED

if TYPE_CHECKING:  # rich is imported when something is shown: a deploy with --output json never needs it
    from rich.console import Console, Group
    from rich.live import Live

FINISHED = ("done", "failed", "skipped")
IN_THE_CLOUD = ("planning", "creating", "updating", "deleting")
_STYLE = {"done": "green", "failed": "red", "skipped": "yellow", "waiting": "dim"}


@dataclass
class _Line:
    phase: str = "waiting"
    status: str = ""  # as shown
    cloud_status: str = ""  # as last read from the cloud in this phase
    message: str = ""
    waiting_for: tuple[str, ...] = ()
    started: float = field(default_factory=time.monotonic)
    ended: float | None = None


def ended(phase: str, status: str) -> bool:
    """True when `status` is the end of the operation `phase` names (its *_COMPLETE, *_FAILED or a finished
    rollback): CloudFormation has nothing left to do for it."""
    prefix = {"creating": ("CREATE_", "ROLLBACK_"), "updating": ("UPDATE_",), "deleting": ("DELETE_",)}
    return (not status.endswith("_IN_PROGRESS") and status.endswith(("_COMPLETE", "_FAILED"))
            and status.startswith(prefix.get(phase, ("-",))))


def shown_status(event: ProgressEvent, line: _Line) -> str:
    """The status shown beside the phase word: the event's, else the last one of the same phase. While a
    stack is being created, updated or deleted, a settled status (`CREATE_COMPLETE` read before the update
    began) is the previous operation's, not this one's: nothing is shown until the cloud reports it
    (never "updating CREATE_COMPLETE")."""
    status = event.status or (line.status if event.phase == line.phase else "")
    if event.phase in IN_THE_CLOUD[1:] and not status.endswith("_IN_PROGRESS"):
        return ""
    return status


class Progress:
    """Receives ProgressEvents from worker threads and shows where every stack is."""

    def __init__(self, names: list[str], *, console: Console | None = None, enabled: bool = True,
                 interruptible: bool = False) -> None:
        """`enabled`: show progress (text mode; off for --output json). `interruptible`: Ctrl-C ends the
        program at once, listing the stacks still in progress in the cloud (for stack commands, whose
        every step the cloud finishes or the next run resumes); in JSON mode as the JSON error answer."""
        self._console = console
        self.lines = {name: _Line() for name in names}
        self.enabled = enabled
        self.live_mode = enabled and self.console.is_terminal
        self.began = time.monotonic()
        self._lock = threading.Lock()
        self._live: Live | None = None
        self._old_handler: Any = None
        self._stopped = False  # Ctrl-C was pressed: nothing more is shown
        self.interruptible = interruptible

    @property
    def console(self) -> Console:
        """Where progress is shown (stderr's console unless given)."""
        if self._console is None:
            self._console = common.err_console
        return self._console

    def __enter__(self) -> Progress:
        if self.live_mode:
            from rich.live import Live

            self._live = Live(self, console=self.console, refresh_per_second=4, transient=True,
                              redirect_stdout=False, redirect_stderr=False)
            self._live.__enter__()
        if self.interruptible and threading.current_thread() is threading.main_thread():
            self._old_handler = signal.signal(signal.SIGINT, self._interrupted)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._old_handler is not None:
            signal.signal(signal.SIGINT, self._old_handler)
            self._old_handler = None
        if self._live is not None:
            self._live.__exit__(None, None, None)
            self._live = None

    def __call__(self, event: ProgressEvent) -> None:
        with self._lock:
            line = self.lines.setdefault(event.stack, _Line())
            if line.phase == "waiting" and event.phase != "waiting":
                line.started = time.monotonic()
            changed = (event.phase, event.status, event.message) != (line.phase, line.status, line.message)
            line.status = shown_status(event, line)
            line.cloud_status = event.status or (line.cloud_status if event.phase == line.phase else "")
            line.phase = event.phase
            line.message = event.message or line.message
            if event.waiting_for:
                line.waiting_for = tuple(event.waiting_for)
            if event.phase in FINISHED:
                line.ended = time.monotonic()
            if self._live is None and self.enabled and changed and event.phase != "waiting" \
                    and not self._stopped:
                elapsed = (line.ended or time.monotonic()) - line.started
                parts = [f"{event.stack}:", event.phase]
                if event.status:
                    parts.append(event.status)
                if event.message:
                    parts.append(f"- {event.message}")
                parts.append(f"({elapsed:.1f}s)")
                sys.stderr.write(" ".join(parts) + "\n")  # one write: a Ctrl-C never cuts a line in two
                sys.stderr.flush()

    # ---- what is shown -----------------------------------------------------------------------------
    def counts(self) -> dict[str, int]:
        """done, running, failed (skipped included), waiting and total."""
        phases = [line.phase for line in self.lines.values()]
        failed = sum(p in ("failed", "skipped") for p in phases)
        done = phases.count("done")
        waiting = phases.count("waiting")
        return {"done": done, "running": len(phases) - done - failed - waiting, "failed": failed,
                "waiting": waiting, "total": len(phases)}

    def header(self) -> str:
        """`3/60 done · 8 running · 1 failed · 48 waiting · 0:42`."""
        c = self.counts()
        elapsed = int(time.monotonic() - self.began)
        return (f"{c['done']}/{c['total']} done · {c['running']} running · {c['failed']} failed · "
                f"{c['waiting']} waiting · {elapsed // 60}:{elapsed % 60:02d}")

    def waiting_message(self, line: _Line) -> str:
        """"waiting for X, Y" while a dependency is unfinished, else "waiting for a free slot"."""
        pending = [d for d in line.waiting_for if self.lines.get(d, _Line()).phase not in FINISHED]
        return f"waiting for {', '.join(pending)}" if pending else "waiting for a free slot"

    def __rich__(self) -> Group:
        with self._lock:
            return self.render(self.console.size.height)

    def render(self, height: int) -> Group:
        """The header and as many stack rows as `height` lines allow (running and failed first)."""
        from rich.console import Group
        from rich.markup import escape
        from rich.table import Table
        from rich.text import Text

        now = time.monotonic()
        rows = {"running": [], "failed": [], "waiting": []}  # type: dict[str, list[tuple[str, _Line]]]
        finished = 0
        for name, line in self.lines.items():
            if line.phase == "done":
                finished += 1
            elif line.phase in ("failed", "skipped"):
                rows["failed"].append((name, line))
            elif line.phase == "waiting":
                rows["waiting"].append((name, line))
            else:
                rows["running"].append((name, line))
        ordered = rows["running"] + rows["failed"] + rows["waiting"]
        room = max(1, height - 4)  # header, table header, the "more" line, the cursor line
        shown, hidden = ordered[:room], ordered[room:]
        table = Table(box=None, pad_edge=False, show_header=True, header_style="bold", expand=False)
        # fixed widths: rich would otherwise squeeze whole columns away to fit a long `latest`
        width = self.console.size.width
        stack_w, status_w = max(12, width // 4), max(8, width // 6)
        latest_w = max(10, width - stack_w - 8 - status_w - 7 - 4)  # 4 gaps between 5 columns
        table.add_column("stack", no_wrap=True, overflow="ellipsis", max_width=stack_w)
        table.add_column("phase", no_wrap=True, min_width=8, max_width=8, overflow="ellipsis")
        table.add_column("status", no_wrap=True, overflow="ellipsis", max_width=status_w)
        table.add_column("elapsed", no_wrap=True, min_width=7, max_width=7, justify="right")
        table.add_column("latest", no_wrap=True, overflow="ellipsis", max_width=latest_w)
        for name, line in shown:
            waiting = line.phase == "waiting"
            elapsed = "" if waiting else f"{(line.ended or now) - line.started:5.1f}s"
            message = self.waiting_message(line) if waiting else line.message
            style = _STYLE.get(line.phase, "cyan")
            table.add_row(escape(name), f"[{style}]{line.phase}[/]", line.status, elapsed, escape(message))
        parts: list[Any] = [Text(self.header(), style="bold", no_wrap=True, overflow="ellipsis"), table]
        tail = []
        if hidden:
            hidden_waiting = sum(1 for _, ln in hidden if ln.phase == "waiting")
            tail.append(f"… {len(hidden)} more ({hidden_waiting} waiting)")
        if finished:
            tail.append(f"{finished} done")
        if tail:
            parts.append(Text(" · ".join(tail), style="dim", no_wrap=True, overflow="ellipsis"))
        return Group(*parts)

    # ---- Ctrl-C ------------------------------------------------------------------------------------
    def in_the_cloud(self) -> list[tuple[str, str]]:
        """(stack, status) of every stack whose operation CloudFormation is still carrying out: not one whose
        last status read is its own operation's end (`UPDATE_COMPLETE` while updating: done, its event
        not yet handled)."""
        return [(name, line.cloud_status or line.phase) for name, line in self.lines.items()
                if line.phase in IN_THE_CLOUD and not ended(line.phase, line.cloud_status)]

    def never_started(self) -> list[str]:
        """The stacks still waiting: nothing was done to them."""
        return [name for name, line in self.lines.items() if line.phase == "waiting"]

    def _interrupted(self, _signum: int, _frame: object) -> None:
        """Stop now; say what goes on in the cloud without us."""
        from rich.markup import escape

        if self._live is not None:
            self._live.stop()
        from formwright.state.lock import release_all

        release_all()  # os._exit below skips the `with` that holds the project's lock
        with self._lock:  # one consistent picture; workers show nothing after it
            self._stopped = True
            busy = self.in_the_cloud()
            untouched = self.never_started()
        listed = ", ".join(f"{name} ({status})" for name, status in busy)
        message = (f"interrupted: still in progress in the cloud: {listed}" if busy
                   else "interrupted: no stack operation was in progress in the cloud")
        if untouched:
            more = f", … {len(untouched) - 20} more" if len(untouched) > 20 else ""
            shown = ", ".join(untouched[:20]) + more
            message += f"; not started: {shown}"
        hint = ("CloudFormation finishes these without formwright; watch them with "
                "`formwright events -s STACK --follow` or `formwright status`") if busy else None
        if not self.enabled:  # --output json: the answer on stdout is JSON, this one too
            common.emit_json(common.error_envelope(
                [common.error_entry(message, hint=hint)],
                in_progress=[{"stack": n, "status": s} for n, s in busy], not_started=untouched))
        else:
            self.console.print(escape(message), highlight=False)
            if hint:
                self.console.print(escape(hint), highlight=False)
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(EXIT_INTERRUPTED)  # worker threads poll the cloud; nothing local is left half-written
