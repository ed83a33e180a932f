"""Every example folder's README lists its exact commands (issue #16, item 7): they are run here as a user
pastes them, from a copy of the repository's examples, in bash with `set -e`, against their own local
cloud (the README starts it), and every one must succeed.

A README's fresh virtual environment (`python3 -m venv /tmp/NAME-venv`, then `pip install`) is kept between
runs, keyed by what its packages depend on (formwright's and the examples' pyproject.toml, the Python): the
commands still run as written, but on a key seen before `pip install` finds every dependency in place and
only installs formwright and the example package again, in minutes less (the first run of a key installs
everything into a new folder, as a user's first run does).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
READMES = sorted((ROOT / "examples").glob("*/README.md"))
VENVS = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "formwright" / "readme-venvs"
VENV_PATH = re.compile(r"/tmp/([\w.-]*venv)\b")  # a README's virtual environment, e.g. /tmp/fw-plugin-venv


def commands_of(readme: Path) -> str:
    """The README's code blocks, as one shell script."""
    return "\n".join(re.findall(r"^```[a-z]*\n(.*?)^```", readme.read_text(encoding="utf-8"), re.M | re.S))


def venvs_folder() -> Path:
    """Where the READMEs' virtual environments are kept, for what their packages depend on now."""
    digest = hashlib.sha256(sys.version.encode())
    for project in sorted([ROOT / "pyproject.toml", *(ROOT / "examples").glob("*/pyproject.toml")]):
        digest.update(project.read_bytes())
    return VENVS / digest.hexdigest()[:16]


def test_every_example_folder_has_a_readme_with_commands() -> None:
    folders = sorted(p for p in (ROOT / "examples").iterdir() if p.is_dir())
    assert folders == [r.parent for r in READMES]
    assert all("formwright " in commands_of(r) for r in READMES)


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
@pytest.mark.parametrize("readme", READMES, ids=lambda r: r.parent.name)
def test_the_readme_commands_work_as_written(readme: Path, tmp_path: Path) -> None:
    shutil.copytree(ROOT / "examples", tmp_path / "examples",
                    ignore=shutil.ignore_patterns(".formwright", "__pycache__"))
    venv = Path(sys.executable).parent.parent
    (tmp_path / ".venv").symlink_to(venv)  # `make demo`'s .venv: the one running these tests
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    # the READMEs write to /tmp/...: a private folder here, so parallel runs do not meet; a virtual
    # environment goes to the kept one of its key, held by one run at a time
    commands = commands_of(readme)
    venvs = venvs_folder()
    script = "set -euo pipefail\n" + VENV_PATH.sub(lambda m: str(venvs / m.group(1)), commands)
    script = script.replace("/tmp/", f"{scratch}/")
    kept = contextlib.ExitStack()
    if VENV_PATH.search(commands):
        venvs.mkdir(parents=True, exist_ok=True)
        lock = kept.enter_context((venvs / ".lock").open("w"))
        fcntl.flock(lock, fcntl.LOCK_EX)
    home = tmp_path / "home"
    env = {**os.environ, "FORMWRIGHT_HOME": str(home),
           "PATH": f"{venv / 'bin'}{os.pathsep}{os.environ['PATH']}"}
    env.pop("FORMWRIGHT_TARGET", None)
    try:
        done = subprocess.run(["bash", "-c", script], cwd=tmp_path, env=env, capture_output=True, text=True,
                              timeout=900, stdin=subprocess.DEVNULL, check=False)
    finally:  # a README that stops before `local-cloud stop` leaves its cloud running
        subprocess.run([str(venv / "bin" / "formwright"), "local-cloud", "stop"], env=env,
                       capture_output=True, timeout=120, check=False)
        kept.close()
    assert done.returncode == 0, f"{readme}:\n{done.stderr[-3000:]}"
    assert "Traceback" not in done.stderr
