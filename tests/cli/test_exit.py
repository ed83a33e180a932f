"""How the program leaves (cli/main.py `leave`): run as `formwright` it skips the interpreter's teardown
(~0.15 s of freeing boto3's models) once the work is done, yet exits with the command's code, runs atexit
handlers and flushes its output as any exit does; called inside another program it is a plain sys.exit.
Real child processes: the teardown only exists in a process of its own."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src"

# runs the CLI as `python -m formwright` does (runpy, __main__ = formwright.__main__), with an atexit
# handler and an object whose finalizer only the interpreter's teardown would run
AS_PROGRAM = """
import atexit, runpy, sys
atexit.register(lambda: print("atexit ran", file=sys.stderr, flush=True))
class Torn:
    def __del__(self):
        print("torn down", file=sys.stderr, flush=True)
sys.modules["torn"] = type(sys)("torn")
sys.modules["torn"].keep = Torn()
sys.argv = ["formwright", *sys.argv[1:]]
runpy.run_module("formwright", run_name="__main__", alter_sys=True)
"""


def run(*argv: str, program: str = AS_PROGRAM, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run([sys.executable, "-c", program, *argv], capture_output=True, text=True, env=env,
                          cwd=cwd, timeout=120)


def project(tmp_path: Path, stacks: int) -> Path:
    (tmp_path / "t.json").write_text(json.dumps({"Resources": {"T": {"Type": "AWS::SNS::Topic"}}}))
    (tmp_path / "formwright.yaml").write_text(
        "name: big\nstacks:\n" + "".join(f"  stack{i:04}: {{template: t.json}}\n" for i in range(stacks)))
    return tmp_path


def test_the_program_skips_the_teardown_but_runs_atexit_and_flushes(tmp_path) -> None:
    folder = project(tmp_path, 400)
    done = run("graph", str(folder), "--output", "json")
    assert done.returncode == 0, done.stderr
    graph = json.loads(done.stdout)  # every byte of a large answer on a pipe was flushed
    assert len(graph["nodes"]) == 400
    assert "atexit ran" in done.stderr
    assert "torn down" not in done.stderr  # the interpreter's teardown was skipped


def test_the_program_keeps_its_exit_code_and_its_one_line_error(tmp_path) -> None:
    (tmp_path / "formwright.yaml").write_text("name: bad\nstacks:\n  a: {template: missing.json}\n")
    done = run("validate", str(tmp_path))
    assert done.returncode == 2, done.stderr
    assert "missing.json" in done.stderr and "Traceback" not in done.stderr
    assert "atexit ran" in done.stderr and "torn down" not in done.stderr


def test_inside_another_program_it_is_a_plain_exit(tmp_path) -> None:
    folder = project(tmp_path, 3)
    embedded = AS_PROGRAM.replace('runpy.run_module("formwright", run_name="__main__", alter_sys=True)',
                                  "from formwright.cli.main import main\n"
                                  "try:\n    main()\nexcept SystemExit as done:\n"
                                  "    print('caught', done.code, file=sys.stderr)\n")
    done = run("graph", str(folder), "--output", "json", program=embedded)
    assert done.returncode == 0, done.stderr
    assert "caught 0" in done.stderr  # the caller got its SystemExit back
    assert "torn down" in done.stderr  # and the interpreter ended as usual


def test_a_deploy_for_scripts_does_not_import_rich(cloud, tmp_path) -> None:
    """rich (~0.1 s to import) is for showing: `deploy -y --output json` shows nothing, and its start-up
    is on the way to the first CreateChangeSet (bench/deploy.py --aws-like). A fresh interpreter."""
    folder = project(tmp_path, 2)
    check = AS_PROGRAM.replace(
        'runpy.run_module("formwright", run_name="__main__", alter_sys=True)',
        "atexit.register(lambda: print('rich imported' if any(m == 'rich' or m.startswith('rich.')"
        " for m in sys.modules) else 'no rich', file=sys.stderr, flush=True))\n"
        'runpy.run_module("formwright", run_name="__main__", alter_sys=True)')
    done = run("deploy", str(folder), "-y", "--output", "json", program=check)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["ok"]
    assert "no rich" in done.stderr, done.stderr
