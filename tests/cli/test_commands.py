"""Every command, one parametrised test each: `--help`, `--output json` (errors included) and the folder
argument (issue #16: one set of conventions across the CLI). The commands are read from the application
itself, so a new command without a recipe here, without --output json or without examples fails."""

from __future__ import annotations

import functools
import json
import re
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from .workspace import QUEUE, Workspace

EXAMPLES_DIR = Path(__file__).resolve().parents[2] / "examples"
# formwright.cli.main's docstring (70 is a bug, never documented)
DOCUMENTED_EXIT_CODES = {0, 1, 2, 3, 4, 5, 130}


@functools.cache
def command_tree() -> dict[str, Any]:
    """Every runnable command of the application, by path ("plan", "instance create"), as click sees it."""
    import typer

    from formwright.cli.main import register_all

    def walk(command: Any, path: str) -> dict[str, Any]:
        if hasattr(command, "commands"):
            return {key: leaf for name, sub in command.commands.items()
                    for key, leaf in walk(sub, f"{path} {name}").items()}
        return {path.strip(): command}

    return walk(typer.main.get_command(register_all()), "")


@dataclass
class Recipe:
    """How to run one command: `ok` builds a succeeding command line from the workspace and the DIR
    arguments ([folder] or [] to find it); `bad` one that fails on bad input (exit 2)."""

    ok: Callable[[Workspace, list[str]], list[str]]
    bad: Callable[[Workspace], list[str]] | None = None
    folder: str | None = None  # project | life | objects | new | importable: what DIR is, where it is found
    json: bool = True
    daemon: bool = False  # runs until SIGTERM (sync run)
    env: Callable[[Workspace], dict[str, str]] | None = None


def project_command(name: str, *extra: str, deployed: bool = False) -> Recipe:
    """A project command: [DIR] is the project, found upward from its templates folder."""
    def ok(ws: Workspace, d: list[str]) -> list[str]:
        if deployed:
            ws.deployed()
        return [name, *d, *extra]

    return Recipe(ok, bad=lambda ws: [name, str(ws.broken), *extra], folder="project")


def instance_command(*path: str, name: Callable[[Workspace], str], extra: tuple[str, ...] = (),
                     bad: Callable[[Workspace], list[str]] | None = None) -> Recipe:
    """An instance command: NAME [DIR], DIR the project home, found upward."""
    return Recipe(lambda ws, d: [*path, name(ws), *d, *extra],
                  bad=bad or (lambda ws: [*path, "nope", str(ws.life), *extra]), folder="life")


def sceptre_project(ws: Workspace) -> Path:
    """The sceptre project of tests/sceptre/fixtures.py (written once per workspace)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("sceptre_fixtures",
                                                  Path(__file__).parents[1] / "sceptre" / "fixtures.py")
    assert spec and spec.loader
    fixtures = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(fixtures)
    folder = ws.root / "sceptre-project"
    if not folder.exists():
        fixtures.write(folder, fixtures.FILES)
    return folder


def own_home(ws: Workspace) -> dict[str, str]:
    """A private FORMWRIGHT_HOME: local-cloud commands must not stop the tests' own local cloud."""
    return {"FORMWRIGHT_HOME": str(ws.root / "lc-home")}


def started(args: list[str]) -> Callable[[Workspace, list[str]], list[str]]:
    """Start a local cloud in the private home first."""
    def ok(ws: Workspace, d: list[str]) -> list[str]:
        done = ws.run("local-cloud", "start", env=own_home(ws))
        assert done.code == 0, done.err
        return args

    return ok


def adopt_deployed(ws: Workspace) -> list[str]:
    """Adopt the deployed project's stack into a new folder."""
    ws.deployed()
    return ["adopt", "tiny-queue", "-o", str(ws.root / ws.fresh("adopted"))]


RECIPES: dict[str, Recipe] = {
    "init": Recipe(lambda ws, d: ["init", *d], bad=lambda ws: ["init", str(ws.project)], folder="new"),
    "validate": project_command("validate"),
    "build": project_command("build"),
    "graph": project_command("graph"),
    "plan": project_command("plan"),
    "show-plan": Recipe(lambda ws, d: ["show-plan", str(ws.saved_plan())],
                        bad=lambda ws: ["show-plan", str(ws.project / "formwright.yaml")]),
    "deploy": project_command("deploy", "-y"),
    "delete": project_command("delete", "-y", deployed=True),
    "ls": Recipe(lambda ws, d: ["ls"], bad=lambda ws: ["ls", "--region", "us-east-7"]),
    "status": project_command("status", deployed=True),
    "drift": project_command("drift", deployed=True),
    "import": Recipe(lambda ws, d: ["import", *d, "store", "Bucket=conv-imported", "-y"],
                     bad=lambda ws: ["import", str(ws.broken), "a", "Bucket=x", "-y"], folder="importable"),
    "adopt": Recipe(lambda ws, d: adopt_deployed(ws),
                    bad=lambda ws: ["adopt", "no-such-stack-*", "-o", str(ws.root / ws.fresh("none"))]),
    "import-sceptre": Recipe(
        lambda ws, d: ["import-sceptre", str(sceptre_project(ws)), "-o", str(ws.root / ws.fresh("sceptre"))],
        bad=lambda ws: ["import-sceptre", str(ws.broken), "-o", str(ws.root / ws.fresh("sceptre"))]),
    "outputs": project_command("outputs", "queue", "QueueName", deployed=True),
    "diff": project_command("diff", deployed=True),
    "events": project_command("events", deployed=True),
    "package": Recipe(lambda ws, d: ["package", *d, "-o", str(ws.root / f"{ws.fresh('p')}.tar.gz")],
                      bad=lambda ws: ["package", str(ws.broken)], folder="project"),
    "expand": Recipe(lambda ws, d: ["expand", str(ws.project / "templates" / "queue.yaml")],
                     bad=lambda ws: ["expand", str(ws.broken / "formwright.yaml"), "--format", "yaml",
                                     "-p", "novalue"]),
    "transform tosca": Recipe(
        lambda ws, d: ["transform", "tosca", str(EXAMPLES_DIR / "tosca" / "nodejs"), "-o",
                       str(ws.root / ws.fresh("tosca"))],
        bad=lambda ws: ["transform", "tosca", str(ws.broken / "formwright.yaml")]),
    "history": instance_command("history", name=lambda ws: ws.instance()),
    "instance history": instance_command("instance", "history", name=lambda ws: ws.instance()),
    "instance show": instance_command("instance", "show", name=lambda ws: ws.instance()),
    "instance list": Recipe(lambda ws, d: ["instance", "list", *d], folder="life"),
    "instance create": instance_command("instance", "create", name=lambda ws: ws.fresh("c"),
                                        bad=lambda ws: ["instance", "create", "Bad_Name", str(ws.life)]),
    "instance update": instance_command("instance", "update", name=lambda ws: ws.instance()),
    "instance upgrade": Recipe(
        lambda ws, d: ["instance", "upgrade", ws.instance(), *d, "--to", str(ws.life)],
        bad=lambda ws: ["instance", "upgrade", ws.instance(), str(ws.life)], folder="life"),  # no --to
    "instance rollback": instance_command(
        "instance", "rollback", name=lambda ws: ws.instance(), extra=("--to-revision", "1"),
        bad=lambda ws: ["instance", "rollback", ws.instance(), str(ws.life), "--to-revision", "99"]),
    "instance retry": instance_command(
        "instance", "retry", name=lambda ws: ws.failed_operation(),
        bad=lambda ws: ["instance", "retry", ws.instance(), str(ws.life)]),  # nothing failed
    "instance run": Recipe(
        lambda ws, d: ["instance", "run", ws.instance(), "poke", *d],
        bad=lambda ws: ["instance", "run", ws.instance(), "no-such-operation", str(ws.life)], folder="life"),
    "instance scope": instance_command(
        "instance", "scope", name=lambda ws: ws.instance(), extra=("--regions", "us-east-1"),
        bad=lambda ws: ["instance", "scope", ws.instance(), str(ws.life), "--regions", ","]),
    "instance delete": instance_command("instance", "delete", name=lambda ws: ws.instance(ws.fresh("d")),
                                        extra=("-y",)),
    "sync run": Recipe(lambda ws, d: ["sync", "run", *d, "--no-drift"],
                       bad=lambda ws: ["sync", "run", str(ws.bad_objects)], folder="objects", daemon=True),
    "sync status": Recipe(lambda ws, d: ["sync", "status", *d],
                          bad=lambda ws: ["sync", "status", str(ws.bad_objects)], folder="objects"),
    "sync reconcile": Recipe(lambda ws, d: ["sync", "reconcile", "app", *d],
                             bad=lambda ws: ["sync", "reconcile", "nope", str(ws.objects)], folder="objects"),
    "sync suspend": Recipe(lambda ws, d: ["sync", "suspend", "app", *d],
                           bad=lambda ws: ["sync", "suspend", "nope", str(ws.objects)], folder="objects"),
    "sync resume": Recipe(lambda ws, d: ["sync", "resume", "app", *d],
                          bad=lambda ws: ["sync", "resume", "nope", str(ws.objects)], folder="objects"),
    # no input to get wrong beyond the flags (the usage error below covers those)
    "local-cloud start": Recipe(lambda ws, d: ["local-cloud", "start"], env=own_home),
    "local-cloud status": Recipe(started(["local-cloud", "status"]), env=own_home),
    "local-cloud stop": Recipe(started(["local-cloud", "stop"]), env=own_home),
    "local-cloud reset": Recipe(started(["local-cloud", "reset"]), env=own_home),
    "completion": Recipe(lambda ws, d: ["completion", "bash"], bad=lambda ws: ["completion", "tcsh"],
                         json=False),
}


def test_every_command_has_a_recipe() -> None:
    assert sorted(command_tree()) == sorted(RECIPES)


def test_the_top_level_help_lists_every_command(run_cli) -> None:
    # `formwright --help` lists one-line stand-ins without importing the commands (start-up): the same set
    listing = run_cli("--help").out
    commands = listing.split("Commands:\n")[1].split("\n\n")[0]
    listed = {line.split()[0] for line in commands.splitlines()}
    assert listed == {path.split()[0] for path in command_tree()}
    assert "\n  Examples:\n    formwright init" in listing and "\n  Exit codes:\n    0  " in listing


def test_a_short_flag_means_one_thing_everywhere() -> None:
    meanings: dict[str, set[str]] = {}
    for command in command_tree().values():
        for param in (p for p in command.params if p.param_type_name == "option"):
            longs = [o for o in param.opts + param.secondary_opts if o.startswith("--")]
            for short in (o for o in param.opts if not o.startswith("--")):
                meanings.setdefault(short, set()).update(longs)
    assert {short: longs for short, longs in meanings.items() if len(longs) != 1} == {}
    assert meanings["-o"] == {"--out"} and meanings["-s"] == {"--stack"} and meanings["-y"] == {"--yes"}
    for path, command in command_tree().items():
        for param in command.params:
            if "--out" in param.opts:
                assert param.metavar == "PATH", path


def check_help(path: str, recipe: Recipe, run_cli) -> None:
    """Usage in the usual style, examples that use the command's own flags, the exit codes."""
    result = run_cli(*path.split(), "--help")
    assert result.code == 0, result.err
    usage = result.out.splitlines()[0]
    assert usage.startswith("Usage: ") and f" {path} [OPTIONS]" in usage, usage
    # TEMPLATE, [DIR], --name TEXT, --output [text|json]: not typer's {template}, <str>, <text|json>
    assert not re.search(r"<(str|int|float|bool|path|list\[\w+\]|text\|json)>", result.out)
    assert "{" not in usage
    if recipe.folder:
        assert "[DIR]" in usage, usage
    assert ("--output [text|json]" in result.out) == recipe.json
    examples = result.out.split("\n  Examples:\n")[1].split("\n\n")[0].splitlines()
    flags = {o for p in command_tree()[path].params for o in p.opts + p.secondary_opts} | {"-h", "--help"}
    assert examples
    for line in examples:
        # `formwright ARGS` also inside `$(…)`, `<(…)` or before a pipe
        words = re.split(r"[|>)]", line.split("  # ")[0].split("formwright ", 1)[1])[0].split()
        assert " ".join(words).startswith(path), line
        used = {w.split("=")[0] for w in words if w.startswith("-")}
        assert used <= flags, f"{path} example uses {used - flags}"
    codes = [int(line.split()[0]) for line in result.out.split("\n  Exit codes:\n")[1].splitlines()
             if line.strip()]
    assert {0, 2} <= set(codes) <= DOCUMENTED_EXIT_CODES, codes


def check_errors(path: str, recipe: Recipe, ws: Workspace, run_cli) -> None:
    """A usage error and bad input: in JSON mode the envelope on stdout, with the text mode's exit code."""
    if recipe.json:
        usage = run_cli(*path.split(), "--output", "json", "--no-such-flag")
        assert usage.code == 2
        answer = json.loads(usage.out)
        assert answer["ok"] is False and set(answer["errors"][0]) == {"file", "line", "message", "hint"}
        assert "--no-such-flag" in answer["errors"][0]["message"]
    if recipe.bad is None:
        return
    args = recipe.bad(ws)
    text = run_cli(*args, cwd=ws.root)
    assert text.code == 2, text.out + text.err
    assert text.err.strip() and "Traceback" not in text.err
    if recipe.json:
        answer = run_cli(*args, "--output", "json", cwd=ws.root)
        assert answer.code == text.code, answer.out + answer.err
        error = answer.json()["errors"][0]
        assert answer.json()["ok"] is False and set(error) == {"file", "line", "message", "hint"}
        assert (error["message"] and error["message"] in text.err.replace("\n", " ")) or error["file"], error


def run_daemon(args: list[str], cwd: Path) -> list[dict[str, Any]]:
    """`sync run` until it says what it syncs, then SIGTERM: it stops with exit 0, every line JSON."""
    proc = subprocess.Popen([sys.executable, "-m", "formwright", *args, "--output", "json"], cwd=cwd,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            stdin=subprocess.DEVNULL)
    lines = []
    stuck = threading.Timer(300, proc.kill)  # a bound against a hung test, not a timing assertion
    stuck.start()
    try:
        for line in proc.stdout:
            lines.append(json.loads(line))
            if "syncing" in line:  # it has read the objects folder
                break
    finally:
        proc.send_signal(signal.SIGTERM)
        rest, err = proc.communicate(timeout=120)
        stuck.cancel()
    assert proc.returncode == 0, err
    lines += [json.loads(line) for line in rest.splitlines()]
    return lines


def check_success(path: str, recipe: Recipe, ws: Workspace, run_cli) -> None:
    """The command succeeds in JSON mode twice: given DIR from elsewhere, and finding it from inside."""
    env = recipe.env(ws) if recipe.env else None
    folders = {"project": lambda: (ws.project, ws.project / "templates"),
               "life": lambda: (ws.life, ws.life / "templates"),
               "importable": lambda: (ws.importable, ws.importable / "templates"),
               "objects": lambda: (ws.objects, ws.objects),  # sync's default: the current folder
               "new": lambda: (ws.root / ws.fresh("new"), ws.root / ws.fresh("new"))}
    runs: list[tuple[list[str], Path]] = [([], ws.root)]
    if recipe.folder:
        given, inside = folders[recipe.folder]()
        inside.mkdir(exist_ok=True)
        runs = [([str(given)], ws.root), ([], inside)]
    try:
        for dir_args, cwd in runs:
            args = recipe.ok(ws, dir_args)
            if recipe.daemon:
                assert "syncing 1 object(s)" in run_daemon(args, cwd)[0]["event"]
                continue
            result = run_cli(*args, *(["--output", "json"] if recipe.json else []), cwd=cwd, env=env)
            assert result.code == 0, f"{args} in {cwd}: {result.out}{result.err}"
            if recipe.json:
                assert result.json()["ok"] is True, result.out
            else:
                assert "_FORMWRIGHT_COMPLETE" in result.out
    finally:
        if env:
            run_cli("local-cloud", "stop", env=env)


@pytest.mark.parametrize("path", sorted(RECIPES))
def test_every_command_keeps_the_conventions(path: str, tmp_path: Path, run_cli, cloud) -> None:
    recipe = RECIPES[path]
    ws = Workspace(tmp_path, run_cli)
    check_help(path, recipe, run_cli)
    check_errors(path, recipe, ws, run_cli)
    check_success(path, recipe, ws, run_cli)


@pytest.fixture
def tiny(tmp_path: Path) -> Path:
    """A one-stack project with a subfolder to run commands from."""
    folder = tmp_path / "tiny"
    (folder / "templates").mkdir(parents=True)
    (folder / "templates" / "queue.yaml").write_text(QUEUE)
    (folder / "formwright.yaml").write_text(
        "name: tiny\nregion: us-east-1\nstacks:\n  queue:\n    template: templates/queue.yaml\n")
    return folder


def test_outside_any_project_the_error_says_how_to_fix_it(tmp_path: Path, run_cli) -> None:
    result = run_cli("status", cwd=tmp_path)
    assert result.code == 2
    assert "no formwright.yaml" in result.err and "formwright init" in result.err
    assert "Traceback" not in result.err


def test_status_prints_plain_columns(tmp_path: Path, run_cli) -> None:
    # as `kubectl get` and `helm list` print: a header line, one aligned line per stack, no box drawing
    (tmp_path / "q.yaml").write_text(QUEUE)
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
    (tmp_path / "q.yaml").write_text(QUEUE)
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
