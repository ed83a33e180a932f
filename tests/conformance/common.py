"""What every corpus runner shares: a case's outcome and running the real CLI in a child process."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

PROJECT = Path(__file__).resolve().parents[2]
CASE_TIMEOUT = 180


@dataclass
class Outcome:
    """One check of one case: `group` is the score bucket (e.g. "reject", "lint"), `ok` whether it passed."""

    case: str
    group: str
    ok: bool
    detail: str = ""
    network: bool = False
    extra: dict[str, Any] = field(default_factory=dict)


def formwright(args: list[str], cwd: Path | None = None, env: dict[str, str] | None = None,
               timeout: float = CASE_TIMEOUT) -> subprocess.CompletedProcess[str]:
    """Run the CLI of the interpreter running this script, as a user would (`env` adds to the environment)."""
    full_env = dict(os.environ)
    full_env.setdefault("FORMWRIGHT_HOME", str(PROJECT / ".formwright-home"))
    full_env.update(env or {})
    full_env["NO_COLOR"] = "1"
    return run([sys.executable, "-m", "formwright", *args], cwd=cwd, env=full_env, timeout=timeout)


def run(argv: list[str], cwd: Path | None = None, env: dict[str, str] | None = None,
        timeout: float = CASE_TIMEOUT) -> subprocess.CompletedProcess[str]:
    """Run a child process to its end; a timeout is exit -999 with the reason as its stderr."""
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, cwd=cwd, env=env,
                              stdin=subprocess.DEVNULL, check=False)
    except subprocess.TimeoutExpired as exc:
        return subprocess.CompletedProcess(exc.cmd, -999, "", f"timed out after {timeout:.0f} s")


def last_line(text: str) -> str:
    """The last non-empty line of a child's stderr (its error message)."""
    lines = [line for line in (text or "").strip().splitlines() if line.strip()]
    return lines[-1][:300] if lines else ""


def exit_detail(proc: subprocess.CompletedProcess[str]) -> str:
    """How a child ended, for a failure line."""
    if proc.returncode == -999:
        return "timed out"
    kind = "internal error " if proc.returncode not in (0, 1, 2) else ""
    return f"{kind}exit {proc.returncode}: {last_line(proc.stderr)}"
