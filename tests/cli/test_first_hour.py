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


# ---- point 7: a project with environments and no --env is refused, listing them ----------------------
ENVIRONMENTS = "environments:\n  dev: {vars: {size: small}}\n  prod: {vars: {size: large}}\n"


def test_environments_without_env_are_refused_listing_them(run_cli, tmp_path) -> None:
    folder = project(tmp_path / "p", ENVIRONMENTS)
    done = run_cli("plan", cwd=folder)
    assert done.code == 2, done.out + done.err
    assert "formwright.yaml:2: the project has environments (dev, prod); name one with --env" in done.err
    assert "--env dev" in done.err and "default_environment" in done.err
    planned = run_cli("plan", "--env", "dev", "--output", "json", cwd=folder)
    assert planned.code == 0, planned.err
    assert "walk-dev-app" in planned.out


def test_default_environment_is_used_without_env(run_cli, tmp_path) -> None:
    folder = project(tmp_path / "p", ENVIRONMENTS + "default_environment: dev\n")
    done = run_cli("plan", "--output", "json", cwd=folder)
    assert done.code == 0, done.err
    assert "walk-dev-app" in done.out
    (folder / "formwright.yaml").write_text(
        (folder / "formwright.yaml").read_text().replace("default_environment: dev", "default_environment: qa"))
    bad = run_cli("plan", cwd=folder)
    assert bad.code == 2 and "formwright.yaml:5: default_environment 'qa' is not one of" in bad.err, bad.err


# ---- point 3: an instance operation shows its actions' output as they run; history --logs later -------
ACTION = """\
import json, sys
json.load(sys.stdin)
print("backing up the queue", flush=True)
print("log:" + json.dumps({"level": "info", "msg": "backup written"}), flush=True)
print("almost done", file=sys.stderr, flush=True)
"""


def test_instance_run_prints_its_actions_output_and_history_logs_keeps_it(run_cli, tmp_path) -> None:
    import sys

    folder = tmp_path / "shop"
    folder.mkdir()
    (folder / "queue.yaml").write_text(QUEUE)
    (folder / "backup.py").write_text(ACTION)
    (folder / "formwright.yaml").write_text(
        "name: shop\nregion: us-east-1\n"
        f"operations:\n  backup:\n    action: [{sys.executable}, backup.py]\n"
        "stacks:\n  app: {template: queue.yaml, stack_name: \"{{ instance.name }}-app\"}\n")
    assert run_cli("instance", "create", "demo", "-q", cwd=folder).code == 0
    done = run_cli("instance", "run", "demo", "backup", cwd=folder)
    assert done.code == 0, done.err
    shown = done.out + done.err
    assert "backing up the queue" in shown and "backup written" in shown and "almost done" in shown
    quiet = run_cli("instance", "run", "demo", "backup", "--quiet", cwd=folder)
    assert quiet.code == 0 and "backing up the queue" not in quiet.out + quiet.err
    history = run_cli("history", "demo", "--logs", cwd=folder)
    assert history.code == 0, history.err
    assert history.out.count("backing up the queue") == 2 and "backup written" in history.out
    logs = run_cli("history", "demo", "--logs", "--output", "json", cwd=folder).json()
    assert any("almost done" in line for op in logs["operations"] for line in op["log"])
