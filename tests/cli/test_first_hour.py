"""The first hour of a newcomer (issue 31): each test runs a command a sceptre, rain, Helm, Flux or kubectl
user typed on a first-use walk, and checks it now gives what they expect. Real child processes against the
session's local cloud (the run_cli fixture)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .workspace import QUEUE


def project(folder: Path, body: str = "", *, name: str = "walk", stacks: tuple[str, ...] = ("app",)) -> Path:
    """A project of queue stacks (`body` is more formwright.yaml, before `stacks:`)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "queue.yaml").write_text(QUEUE)
    (folder / "formwright.yaml").write_text(
        f"name: {name}\n{body}stacks:\n" + "".join(f"  {s}: {{template: queue.yaml}}\n" for s in stacks))
    return folder


# ---- point 2: an unknown region is exit 2 naming the nearest known ones ------------------------------
@pytest.mark.parametrize("argv", [["status", "--region", "us-east-7"],
                                  ["deploy", "--region", "us-eest-1", "-y"],
                                  ["expand", "queue.yaml", "--region", "us-east-7"]])
def test_an_unknown_region_flag_is_exit_2_naming_the_nearest(run_cli, tmp_path, argv) -> None:
    folder = project(tmp_path / "p")
    done = run_cli(*argv, cwd=folder)
    assert done.code == 2, done.err
    assert "unknown region" in done.err and "us-east-1" in done.err, done.err
    assert "Traceback" not in done.err and "proxy" not in done.err


def test_an_unknown_region_in_formwright_yaml_is_exit_2_at_its_line(run_cli, tmp_path) -> None:
    folder = project(tmp_path / "p", "region: us-east-7\n")
    done = run_cli("validate", cwd=folder)
    assert done.code == 2, done.err
    assert "formwright.yaml:2: unknown region 'us-east-7'" in done.err and "us-east-1" in done.err
    assert "internal error" not in done.err and "Traceback" not in done.err


# ---- point 5: `-o json` is the format for kubectl users: refused with the flag meant -------------------
@pytest.mark.parametrize("argv", [["graph", "-o", "json"], ["status", "-o", "json"], ["build", "-oyaml"]])
def test_dash_o_with_a_format_word_says_did_you_mean_output(run_cli, tmp_path, argv) -> None:
    folder = project(tmp_path / "p")
    done = run_cli(*argv, cwd=folder)
    assert done.code == 2
    word = argv[-1].removeprefix("-o") if argv[-1].startswith("-o") else argv[-1]
    assert f"did you mean --output {word}?" in done.err
    assert not (folder / word).exists()  # no file named `json` written
    done = run_cli("graph", "--output", "json", cwd=folder)
    assert done.code == 0 and json.loads(done.out)["nodes"]
