"""sceptre itself for the proof tests, installed once per machine into its own virtual environment outside the
clone: ~/.cache/formwright/sceptre-<version>-py<X.Y> (under XDG_CACHE_HOME when set), from the package
registry with pip, then reused.

Why not the project's venv (the issue said "installed in the test venv"): sceptre 4 pins jsonschema<3.3
and networkx 2.6; installing it there downgrades jsonschema and breaks aws-sam-translator, which formwright
needs. In a venv of its own sceptre runs as a child process, the way a user runs it, with exactly the
dependencies it declares.

FORMWRIGHT_TEST_SCEPTRE=DIR uses a sceptre installed elsewhere (`pip install --target DIR sceptre`, run with
this interpreter and DIR first on PYTHONPATH) instead."""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

SCEPTRE = "4.7.0"
# The resolvers the fixture project uses beyond sceptre's own (`!ssm`, `!rcmd`): sceptre's plugin packages.
PLUGINS = ("sceptre-ssm-resolver==1.2.2", "sceptre-cmd-resolver==2.0.0")
PIP_TIMEOUT = 900  # seconds: a first install on a busy shared machine takes one to two minutes


@dataclass
class Sceptre:
    """How to run sceptre: the argv prefix and the environment it adds."""

    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)


def cache_folder() -> Path:
    """Where sceptre's virtual environment lives (one per sceptre version and Python version)."""
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "formwright" / f"sceptre-{SCEPTRE}-py{sys.version_info[0]}.{sys.version_info[1]}"


def find_or_install() -> Sceptre | str:
    """sceptre, installed first if this machine has none yet; or why it cannot be had."""
    folder = os.environ.get("FORMWRIGHT_TEST_SCEPTRE")
    if folder:
        return Sceptre([sys.executable, "-c", "import sys; from sceptre.cli import cli; sys.exit(cli())"],
                       {"PYTHONPATH": os.pathsep.join([folder, *sys.path])})
    venv = cache_folder()
    binary = venv / "bin" / "sceptre"
    done = venv / ".installed"  # written last: a folder without it (or listing other packages) is made again
    wanted = f"sceptre=={SCEPTRE} {' '.join(PLUGINS)}\n"
    try:
        venv.parent.mkdir(parents=True, exist_ok=True)
        lock = open(venv.parent / f"{venv.name}.lock", "w")  # noqa: SIM115 - held for the whole install
    except OSError as err:
        return f"cannot install sceptre {SCEPTRE}: {venv.parent} is not writable ({err.strerror or err})"
    with lock:  # two pytest workers install it once
        fcntl.flock(lock, fcntl.LOCK_EX)
        if done.is_file() and done.read_text() == wanted and binary.is_file():
            return Sceptre([str(binary)])
        shutil.rmtree(venv, ignore_errors=True)
        why = _install(venv)
        if why:
            shutil.rmtree(venv, ignore_errors=True)
            return why
        done.write_text(wanted)
    return Sceptre([str(binary)])


def _install(venv: Path) -> str | None:
    """Make the venv and pip install sceptre into it; the reason when that fails."""
    # a venv without its own pip (ensurepip takes a minute on a busy machine), filled by this one's
    # (pip's --python, pip >= 22.3)
    steps = [[sys.executable, "-m", "venv", "--without-pip", str(venv)],
             [sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"), "install", "--quiet",
              "--disable-pip-version-check", f"sceptre=={SCEPTRE}", *PLUGINS]]
    for argv in steps:
        try:
            run = subprocess.run(argv, capture_output=True, text=True, timeout=PIP_TIMEOUT,
                                 stdin=subprocess.DEVNULL, check=False)
        except (OSError, subprocess.TimeoutExpired) as err:
            return f"cannot install sceptre {SCEPTRE} into {venv}: {err}"
        if run.returncode != 0:
            said = [line for line in run.stderr.splitlines() if line.strip() and "is ignored" not in line]
            return (f"cannot install sceptre {SCEPTRE} into {venv} (`{' '.join(argv[1:4])} ...` exited "
                    f"{run.returncode}): {' | '.join(said[-3:]) or run.stdout[-300:]}")
    return None
