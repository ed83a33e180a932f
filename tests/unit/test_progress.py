"""The live progress display: a table on a terminal, plain lines otherwise."""

from __future__ import annotations

import io

from rich.console import Console

from formwright.cli.progress import Progress
from formwright.engine.results import ProgressEvent

EVENTS = [
    ProgressEvent("network", "creating", "CREATE_IN_PROGRESS", "Vpc CREATE_IN_PROGRESS"),
    ProgressEvent("network", "done", "CREATE_COMPLETE", "created"),
    ProgressEvent("app", "failed", "ROLLBACK_COMPLETE", "Queue: [bad] name"),
]


def test_terminal_gets_a_live_table_with_one_line_per_stack() -> None:
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=120, color_system=None)
    with Progress(["network", "app"], console=console) as progress:
        assert progress.live_mode
        for event in EVENTS:
            progress(event)
    text = out.getvalue()
    assert "stack" in text and "elapsed" in text
    final = text.split("stack")[-1]
    # issue #16: finished stacks collapse into a count; failed ones stay listed
    assert "1 done" in final and "network" not in final
    assert "ROLLBACK_COMPLETE" in final and "Queue: [bad] name" in final  # markup printed as written


def test_off_a_terminal_prints_plain_lines(capsys) -> None:
    console = Console(file=io.StringIO(), force_terminal=False)
    with Progress(["network", "app"], console=console) as progress:
        assert not progress.live_mode
        for event in EVENTS:
            progress(event)
    lines = capsys.readouterr().err.splitlines()
    assert lines[0].startswith("network: creating CREATE_IN_PROGRESS - Vpc CREATE_IN_PROGRESS (")
    assert lines[-1].startswith("app: failed ROLLBACK_COMPLETE - Queue: [bad] name (")
