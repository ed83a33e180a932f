"""Every command, one parametrised test each: `--help`, `--output json` (errors included) and the folder
argument (issue #16: one set of conventions across the CLI)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

# every command path of the program (a test below checks this list against `--help`)
COMMANDS = [
    ["init"], ["validate"], ["build"], ["graph"], ["plan"], ["deploy"], ["delete"], ["status"], ["outputs"],
    ["diff"], ["events"], ["expand"], ["transform", "tosca"], ["history"], ["completion"], ["package"],
    ["local-cloud", "start"], ["local-cloud", "stop"], ["local-cloud", "status"],
    ["instance", "create"], ["instance", "update"], ["instance", "upgrade"], ["instance", "rollback"],
    ["instance", "retry"], ["instance", "run"], ["instance", "scope"], ["instance", "delete"],
    ["instance", "list"], ["instance", "show"], ["instance", "history"],
    ["sync", "run"], ["sync", "status"], ["sync", "reconcile"], ["sync", "suspend"], ["sync", "resume"],
]
# the commands that take the project folder as an optional positional DIR
PROJECT_COMMANDS = ["validate", "build", "graph", "plan", "deploy", "delete", "status", "outputs", "diff",
                    "events"]
NO_JSON = {("completion",)}  # prints a shell script, nothing else

ONE_QUEUE = """\
AWSTemplateFormatVersion: "2010-09-09"
Resources:
  Queue:
    Type: AWS::SQS::Queue
Outputs:
  QueueName:
    Value: !GetAtt Queue.QueueName
"""


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    """A one-stack project with a subfolder to run commands from."""
    folder = tmp_path / "tiny"
    (folder / "templates").mkdir(parents=True)
    (folder / "templates" / "queue.yaml").write_text(ONE_QUEUE)
    (folder / "formwright.yaml").write_text(
        "name: tiny\nregion: us-east-1\nstacks:\n  queue:\n    template: templates/queue.yaml\n")
    return folder


def test_the_list_covers_every_top_level_command(run_cli) -> None:
    listing = run_cli("--help").out
    listed = {line.split()[0] for line in listing.split("Commands:")[1].splitlines() if line.strip()}
    assert listed == {path[0] for path in COMMANDS}


@pytest.mark.parametrize("path", COMMANDS, ids=" ".join)
def test_help_teaches_in_the_usual_style(path: list[str], run_cli) -> None:
    result = run_cli(*path, "--help")
    assert result.code == 0, result.err
    usage = result.out.splitlines()[0]
    assert usage.startswith("Usage: ") and " ".join(path) in usage
    # TEMPLATE, [DIR], --name TEXT, --output [text|json]: not typer's {template}, <str>, <text|json>
    assert not re.search(r"<(str|int|float|bool|path|list\[\w+\]|text\|json)>", result.out)
    assert "{" not in usage
    if path[0] in PROJECT_COMMANDS and path != ["outputs"]:
        # scopes (issue 11: `formwright deploy DIR net.app`) follow DIR where a command takes them
        assert usage.endswith(("[OPTIONS] [DIR]", "[OPTIONS] [DIR] [SCOPE]...")), usage
    if tuple(path) not in NO_JSON:
        assert "--output" in result.out


@pytest.mark.parametrize("path", [p for p in COMMANDS if tuple(p) not in NO_JSON], ids=" ".join)
def test_usage_errors_in_json_mode_are_the_json_envelope(path: list[str], run_cli) -> None:
    result = run_cli(*path, "--output", "json", "--no-such-flag")
    assert result.code == 2
    answer = json.loads(result.out)
    assert answer["ok"] is False
    assert set(answer["errors"][0]) == {"file", "line", "message", "hint"}
    assert "--no-such-flag" in answer["errors"][0]["message"]


@pytest.mark.parametrize("command", PROJECT_COMMANDS)
def test_project_errors_in_json_mode_are_the_json_envelope(command: str, tmp_path: Path, run_cli) -> None:
    (tmp_path / "formwright.yaml").write_text("name: broken\nstacks:\n  a: {template: missing.yaml}\n")
    extra = ["-y"] if command in ("deploy", "delete") else []
    result = run_cli(command, str(tmp_path), *extra, "--output", "json")
    assert result.code == 2, result.out + result.err
    error = json.loads(result.out)["errors"][0]
    assert error["file"] and "missing.yaml" in error["file"] + error["message"]


@pytest.mark.parametrize("command", PROJECT_COMMANDS)
def test_the_folder_is_found_upward_or_given(command: str, tiny: Path, tmp_path: Path, run_cli,
                                             cloud) -> None:
    extra = ["-y"] if command in ("deploy", "delete") else []
    if command in ("status", "outputs", "diff", "events", "delete"):
        assert run_cli("deploy", str(tiny), "-y", "--output", "json").code == 0
    # from a subfolder, without DIR: the project is found upward, as git finds its repository
    found = run_cli(command, *extra, "--output", "json", cwd=tiny / "templates")
    assert found.code == 0, found.out + found.err
    assert json.loads(found.out)["ok"] is True
    if command == "delete":
        assert run_cli("deploy", str(tiny), "-y", "--output", "json").code == 0
    # from elsewhere, with DIR
    given = run_cli(command, str(tiny), *extra, "--output", "json", cwd=tmp_path)
    assert given.code == 0, given.out + given.err
    assert json.loads(given.out)["ok"] is True


def test_outside_any_project_the_error_says_how_to_fix_it(tmp_path: Path, run_cli) -> None:
    result = run_cli("status", cwd=tmp_path)
    assert result.code == 2
    assert "no formwright.yaml" in result.err and "formwright init" in result.err
    assert "Traceback" not in result.err


def test_status_prints_plain_columns(tmp_path: Path, run_cli) -> None:
    # as `kubectl get` and `helm list` print: a header line, one aligned line per stack, no box drawing
    (tmp_path / "q.yaml").write_text(ONE_QUEUE)
    (tmp_path / "formwright.yaml").write_text(
        "name: columns-check\nstacks:\n  never-deployed: {template: q.yaml}\n")
    result = run_cli("status", str(tmp_path))
    assert result.code == 0, result.err
    header, row = result.out.splitlines()
    assert header.split() == ["STACK", "CLOUD", "NAME", "STATUS", "UPDATED"]
    assert row.split() == ["never-deployed", "columns-check-never-deployed", "NOT_DEPLOYED"]
    assert row.index("NOT_DEPLOYED") == header.index("STATUS")


def test_package_takes_dir_or_finds_the_project_upward(tiny: Path, tmp_path: Path, run_cli) -> None:
    with (tiny / "formwright.yaml").open("a") as project_file:
        project_file.write('version: "1.0"\n')
    inside = run_cli("package", "-o", str(tmp_path / "a.tar.gz"), "--output", "json", cwd=tiny / "templates")
    assert inside.code == 0, inside.out + inside.err
    given = run_cli("package", str(tiny), "-o", str(tmp_path / "b.tar.gz"), "--output", "json", cwd=tmp_path)
    assert given.code == 0 and given.json()["ok"] is True
    assert inside.json()["digest"] == given.json()["digest"] and inside.json()["name"] == "tiny"


def test_graph_in_json_is_nodes_and_edges(tmp_path: Path, run_cli) -> None:
    (tmp_path / "q.yaml").write_text(ONE_QUEUE)
    (tmp_path / "app.yaml").write_text(
        "Parameters:\n  Name: {Type: String}\nResources:\n  T:\n    Type: AWS::SNS::Topic\n")
    (tmp_path / "formwright.yaml").write_text(
        "name: g\nstacks:\n  queue: {template: q.yaml}\n"
        "  app: {template: app.yaml, parameters: {Name: !ref queue.outputs.QueueName}}\n")
    result = run_cli("graph", str(tmp_path), "--output", "json")
    assert result.code == 0, result.err
    answer = result.json()
    assert answer["ok"] is True
    assert {n["name"]: n["stack_name"] for n in answer["nodes"]} == {"queue": "g-queue", "app": "g-app"}
    assert answer["edges"] == [{"from": "queue", "to": "app"}]
