"""Run formwright with a real terminal (a pty) as its stdout and stderr: rich then draws as for a user."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def run_in_terminal(*args: str, columns: int = 120, cwd: Path | None = None) -> tuple[int, str]:
    """The exit code and everything the command wrote to the terminal (escape sequences included)."""
    primary, secondary = os.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "formwright", *args], cwd=cwd, stdin=subprocess.DEVNULL,
                            stdout=secondary, stderr=secondary,
                            env={**os.environ, "TERM": "xterm-256color", "COLUMNS": str(columns)})
    os.close(secondary)
    seen = b""
    try:
        while chunk := os.read(primary, 4096):
            seen += chunk
    except OSError:  # EIO: the child closed the terminal
        pass
    os.close(primary)
    return proc.wait(timeout=120), seen.decode(errors="replace")


def answer_in_terminal(*args: str, answer: str, prompt: str = "[y/N]", cwd: Path | None = None
                       ) -> tuple[int, str]:
    """Run with a terminal as stdin too (a prompt asks there); type `answer` once `prompt` is shown.
    The exit code and everything written."""
    primary, secondary = os.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "formwright", *args], cwd=cwd, stdin=secondary,
                            stdout=secondary, stderr=secondary,
                            env={**os.environ, "TERM": "dumb", "COLUMNS": "200"})
    os.close(secondary)
    seen, answered = b"", False
    try:
        while chunk := os.read(primary, 4096):
            seen += chunk
            if not answered and prompt.encode() in seen:
                os.write(primary, answer.encode() + b"\n")
                answered = True
    except OSError:  # EIO: the child closed the terminal
        pass
    os.close(primary)
    return proc.wait(timeout=300), seen.decode(errors="replace")
