"""The live display scales: rendered into fixed-size terminals with 60 stacks, it keeps its header and
never runs off the screen (issue #16, item 6)."""

from __future__ import annotations

import inspect
import io
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from rich.console import Console

from formwright.cli.progress import Progress
from formwright.engine.results import ProgressEvent

NAMES = [f"stack-{i:02d}-with-a-rather-long-name" for i in range(60)]


def busy_progress(console: Console) -> Progress:
    """60 stacks: 20 done, 8 running, 2 failed, the rest waiting (some on unfinished dependencies)."""
    progress = Progress(NAMES, console=console)
    feed(progress)
    return progress


def feed(progress) -> None:
    """The events of busy_progress (also sent by the child process drawing into a real terminal)."""
    names = [f"stack-{i:02d}-with-a-rather-long-name" for i in range(60)]
    from formwright.engine.results import ProgressEvent

    for i, name in enumerate(names):
        deps = (names[i - 30],) if i >= 30 else ()
        progress(ProgressEvent(name, "waiting", "", "queued", waiting_for=deps))
    for name in names[:20]:
        progress(ProgressEvent(name, "creating", "CREATE_IN_PROGRESS", "Queue CREATE_IN_PROGRESS"))
        progress(ProgressEvent(name, "done", "CREATE_COMPLETE", "created"))
    for name in names[20:28]:
        progress(ProgressEvent(name, "creating", "CREATE_IN_PROGRESS", "Topic CREATE_IN_PROGRESS " * 8))
    for name in names[28:30]:
        progress(ProgressEvent(name, "failed", "ROLLBACK_COMPLETE", "Queue: Resource handler returned"))


def render(width: int, height: int) -> list[str]:
    console = Console(file=io.StringIO(), width=width, height=height, force_terminal=True, color_system=None)
    progress = busy_progress(console)
    console.print(progress.render(height))
    return console.file.getvalue().splitlines()


@pytest.mark.parametrize(("width", "height"), [(160, 45), (80, 30)])
def test_sixty_stacks_fit_the_terminal_with_the_header_first(width: int, height: int) -> None:
    lines = render(width, height)
    assert len(lines) < height  # the live region leaves the cursor line free: nothing scrolls away
    assert all(len(line) <= width for line in lines)
    assert lines[0].startswith("20/60 done · 8 running · 2 failed · 30 waiting · ")
    body = "\n".join(lines)
    # running and failed stacks come first, finished ones are a count
    assert all(name[:10] in body for name in NAMES[20:30])
    assert "stack-00" not in body and "20 done" in lines[-1]
    # 40 unfinished stacks: all listed in 45 lines; in 30 lines the waiting ones that do not fit are counted
    assert ("more" in lines[-1]) == (height == 30)


DRAW = """
import os, pathlib, sys, time
from formwright.cli.progress import Progress
NAMES = [f"stack-{i:02d}-with-a-rather-long-name" for i in range(60)]
# draw once the terminal has the size the test asked for
while tuple(os.get_terminal_size()) != (int(sys.argv[3]), int(sys.argv[4])):
    time.sleep(0.05)
with Progress(NAMES) as progress:  # its console is the real terminal: rich reads the size from it
    feed(progress)
    pathlib.Path(sys.argv[1]).write_text("fed")
    while not pathlib.Path(sys.argv[2]).exists():
        time.sleep(0.05)
"""


@pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")
@pytest.mark.parametrize(("width", "height"), [(160, 45), (80, 30)])
def test_in_a_real_terminal_the_header_stays_on_screen(width: int, height: int, tmp_path: Path) -> None:
    # a real terminal (a tmux pane of a fixed size): the live region is drawn where the user sees it
    script = tmp_path / "draw.py"
    script.write_text(inspect.getsource(feed) + DRAW)
    fed, stop = tmp_path / "fed", tmp_path / "stop"
    session = f"fw-display-{os.getpid()}-{width}"
    tmux = ["tmux", "-L", session, "-f", "/dev/null"]
    # LINES and COLUMNS (set under pytest-xdist) would override the terminal's size for rich, as in CI
    terminal_env = {k: v for k, v in os.environ.items() if k not in ("LINES", "COLUMNS")}
    terminal_env["TERM"] = "xterm-256color"
    subprocess.run([*tmux, "new-session", "-d", "-s", session, "-x", str(width), "-y", str(height),
                    f"{sys.executable} {script} {fed} {stop} {width} {height}; sleep 600"],
                   check=True, timeout=30, env=terminal_env)
    try:
        screen: list[str] = []
        for _ in range(600):  # until the live region is drawn (a bound against a hang, not a timing check)
            screen = subprocess.run([*tmux, "capture-pane", "-p", "-t", session], capture_output=True,
                                    text=True, check=True, timeout=30).stdout.splitlines()
            if fed.exists() and any("20 done" in line for line in screen):
                break
            time.sleep(0.1)
        drawn = [line for line in screen if line.strip()]
        assert drawn[0].startswith("20/60 done · 8 running · 2 failed · 30 waiting · "), drawn[:2]
        assert len(screen) <= height and all(len(line) <= width for line in screen)
        # nothing ran off the bottom: the closing count line is drawn, below every row
        assert "20 done" in drawn[-1]
        assert ("more" in drawn[-1]) == (height == 30)
        assert sum(line.startswith("stack-2") for line in drawn) == 10  # running and failed: a line each
    finally:
        stop.write_text("")
        subprocess.run([*tmux, "kill-server"], check=False, timeout=30)


def test_waiting_says_for_what_or_for_a_free_slot() -> None:
    console = Console(file=io.StringIO(), width=200, height=100, force_terminal=True, color_system=None)
    progress = busy_progress(console)
    assert progress.waiting_message(progress.lines[NAMES[30]]) == "waiting for a free slot"  # its dep is done
    assert progress.waiting_message(progress.lines[NAMES[55]]) == f"waiting for {NAMES[25]}"  # still running
    assert progress.waiting_message(progress.lines[NAMES[40]]) == "waiting for a free slot"  # dependency done


def test_the_live_region_is_gone_when_the_work_ends() -> None:
    out = io.StringIO()
    console = Console(file=out, width=100, height=30, force_terminal=True, color_system=None)
    with Progress(["a", "b"], console=console) as progress:
        progress(ProgressEvent("a", "done", "CREATE_COMPLETE", "created"))
        progress(ProgressEvent("b", "done", "CREATE_COMPLETE", "created"))
    # transient: the command prints its one summary; the table is not printed a second time
    final = out.getvalue().rsplit("\x1b[2K", 1)[-1]
    assert "done" not in final


INTERRUPTED = """
import io, os, signal, sys, time
from rich.console import Console
from formwright.cli.progress import Progress
from formwright.engine.results import ProgressEvent
with Progress(["network", "app", "db"], interruptible=True, enabled=sys.argv[1] == "text") as progress:
    progress(ProgressEvent("network", "done", "CREATE_COMPLETE", "created"))
    progress(ProgressEvent("app", "updating", "UPDATE_IN_PROGRESS", "Queue UPDATE_IN_PROGRESS"))
    os.kill(os.getpid(), signal.SIGINT)
    time.sleep(30)
"""


def interrupted(output: str) -> subprocess.CompletedProcess:
    """A real SIGINT while `app` is updating in the cloud and `network` is done."""
    return subprocess.run([sys.executable, "-c", INTERRUPTED, output], capture_output=True, text=True,
                          timeout=60, check=False)


def test_ctrl_c_lists_the_stacks_still_in_progress_in_the_cloud() -> None:
    done = interrupted("text")
    assert done.returncode == 130
    assert "still in progress in the cloud: app (UPDATE_IN_PROGRESS)" in done.stderr
    assert "network" not in done.stderr.split("cloud:")[1].splitlines()[0]  # finished, not listed


def test_ctrl_c_in_json_mode_answers_in_json() -> None:
    done = interrupted("json")
    assert done.returncode == 130
    answer = json.loads(done.stdout)
    assert answer["ok"] is False
    assert answer["in_progress"] == [{"stack": "app", "status": "UPDATE_IN_PROGRESS"}]
    message = answer["errors"][0]["message"]
    assert message == "interrupted: still in progress in the cloud: app (UPDATE_IN_PROGRESS); not started: db"
    assert answer["not_started"] == ["db"]
