"""`transform tosca SRC -o DIR` never destroys user data (issue 17), through the real CLI in a child."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from formwright.transform.plugin import MARKER

from .conftest import write_template

GOOD = """
topology_template:
  node_templates:
    vm:
      type: tosca.nodes.Compute
"""


def _run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "formwright", "transform", "tosca", *args],
                          capture_output=True, text=True, timeout=120)


def test_folder_of_the_user_is_refused_even_with_force(tmp_path: Path):
    src = write_template(tmp_path / "src", GOOD)
    out = tmp_path / "mine"
    out.mkdir()
    (out / "thesis.tex").write_text("years of work")
    for extra in ([], ["--force"]):
        result = _run(str(src), "-o", str(out), *extra)
        assert result.returncode == 2, result.stderr
        assert "not written by formwright" in result.stderr and "Traceback" not in result.stderr
        assert (out / "thesis.tex").read_text() == "years of work"
        assert sorted(p.name for p in out.iterdir()) == ["thesis.tex"]
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".mine")], "no staging left behind"


def test_previous_artifact_needs_force_and_is_replaced(tmp_path: Path):
    src = write_template(tmp_path / "src", GOOD)
    out = tmp_path / "out"
    assert _run(str(src), "-o", str(out)).returncode == 0
    assert (out / MARKER).is_file() and (out / "template.yaml").is_file()
    (out / "stale.txt").write_text("from an earlier run")
    again = _run(str(src), "-o", str(out))
    assert again.returncode == 2 and "--force" in again.stderr
    assert (out / "stale.txt").exists()
    assert _run(str(src), "-o", str(out), "--force").returncode == 0
    assert not (out / "stale.txt").exists() and (out / "template.yaml").is_file()


def test_empty_folder_and_a_file_in_the_way(tmp_path: Path):
    src = write_template(tmp_path / "src", GOOD)
    empty = tmp_path / "empty"
    empty.mkdir()
    assert _run(str(src), "-o", str(empty)).returncode == 0
    a_file = tmp_path / "notes.txt"
    a_file.write_text("keep")
    result = _run(str(src), "-o", str(a_file), "--force")
    assert result.returncode == 2 and a_file.read_text() == "keep"
