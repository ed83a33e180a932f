"""Macro handlers run as Lambda runs them (issue #12 item 3): each invocation in a real child process
with the handler's folder as working folder, a fresh module cache, a Lambda-like environment plus the
macro's declared variables, output to the macro's log, a timeout that kills the process group, and
CloudFormation's "Transform X failed with: …" for a crash, an exit or a bad answer."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from formwright.cli.expand import register
from formwright.errors import FormwrightError
from formwright.macros import MacroError, MacroRegistry, expand
from tests.macros.conftest import template

ANSWER = "{'requestId': event['requestId'], 'status': 'success', 'fragment': %s}"
SITE = "Resources:\n  B:\n    Type: T\n    Properties:\n      Fn::Transform: {Name: %s}\n"


def handler(folder: Path, name: str, body: str, fragment: str = "event['fragment']") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.py"
    path.write_text("import os, sys\n\ndef handler(event, context):\n"
                    + "".join(f"    {line}\n" for line in body.splitlines())
                    + f"    return {ANSWER % fragment}\n")
    return path


def run_expand(tmp_path: Path, project: str, text: str, *args: str) -> tuple[int, str, str]:
    """`formwright expand` through typer's runner with stdout and stderr apart."""
    (tmp_path / "formwright.yaml").write_text(project)
    (tmp_path / "t.yaml").write_text(text)
    app = typer.Typer()
    register(app)

    @app.callback()
    def main() -> None:
        """The test app."""

    result = CliRunner().invoke(app, ["expand", str(tmp_path / "t.yaml"), *args])
    if isinstance(result.exception, FormwrightError):  # main() prints it as one line, exit 2
        return result.exception.exit_code, result.stdout, str(result.exception)
    return result.exit_code, result.stdout, result.stderr


def test_a_handler_that_prints_leaves_stdout_to_the_template(tmp_path):
    # AWS's published example macros print their event; in Lambda that goes to CloudWatch Logs.
    handler(tmp_path / "m", "Loud", "print('EVENT', event['requestId'])\nprint('to stderr', file=sys.stderr)")
    code, out, err = run_expand(tmp_path, "macros: {Loud: m/Loud.py}\n", SITE % "Loud", "--verbose")
    assert code == 0
    assert json.loads(out)["Resources"]["B"]["Properties"] == {}  # stdout: the template alone
    assert "EVENT" in err and "to stderr" in err and "START RequestId" in err  # --verbose shows the log


def test_working_folder_is_the_handlers_and_chdir_stays_in_the_child(tmp_path):
    folder = tmp_path / "code"
    (folder / "data.txt").parent.mkdir(parents=True)
    (folder / "data.txt").write_text("from the code folder")
    handler(folder, "Reader", "text = open('data.txt').read()\nos.chdir('/')", "text")
    before = os.getcwd()
    out = expand(template(SITE % "Reader"), registry=MacroRegistry.build(project_macros={"Reader": str(
        folder / "Reader.py")}))
    assert out["Resources"]["B"]["Properties"] == "from the code folder"
    assert os.getcwd() == before


def test_an_exit_becomes_the_transforms_failure_and_formwright_lives_on(tmp_path):
    handler(tmp_path, "Quits", "print('bye')\nsys.exit(3)")
    with pytest.raises(MacroError) as info:
        expand(template(SITE % "Quits"), registry=MacroRegistry.build(macros_dir=tmp_path))
    assert info.value.message == "Transform 123456789012::Quits failed with: the handler exited with code 3"
    assert "its output: bye" in info.value.hint and "Quits.log" in info.value.hint


def test_two_macros_each_with_their_own_helpers_module(tmp_path):
    # A fresh module cache per invocation: the second `helpers` is not the first one's.
    for name, word in (("First", "one"), ("Second", "two")):
        (tmp_path / name).mkdir()
        (tmp_path / name / "helpers.py").write_text(f"WORD = {word!r}\n")
        handler(tmp_path / name, name, "import helpers", "helpers.WORD")
    registry = MacroRegistry.build(project_macros={"First": "First/First.py", "Second": "Second/Second.py"},
                                   base_dir=tmp_path)
    doc = template("Resources:\n  A: {Type: T, Properties: {Fn::Transform: First}}\n"
                   "  B: {Type: T, Properties: {Fn::Transform: Second}}\n")
    out = expand(doc, registry=registry)
    assert out["Resources"]["A"]["Properties"] == "one" and out["Resources"]["B"]["Properties"] == "two"


def test_lambda_environment_and_declared_variables(tmp_path, monkeypatch):
    monkeypatch.setenv("FORMWRIGHT_SECRET_OF_THE_PARENT", "leak")
    names = ["AWS_REGION", "AWS_DEFAULT_REGION", "AWS_LAMBDA_FUNCTION_NAME", "STAGE",
             "FORMWRIGHT_SECRET_OF_THE_PARENT"]
    handler(tmp_path, "Env", f"values = {{k: os.environ.get(k) for k in {names!r}}}", "values")
    project = {"Env": {"path": "Env.py", "environment": {"STAGE": "prod"}}}
    registry = MacroRegistry.build(project_macros=project, base_dir=tmp_path)
    out = expand(template(SITE % "Env"), registry=registry, region="eu-west-1")
    assert out["Resources"]["B"]["Properties"] == {
        "AWS_REGION": "eu-west-1", "AWS_DEFAULT_REGION": "eu-west-1", "AWS_LAMBDA_FUNCTION_NAME": "Env",
        "STAGE": "prod", "FORMWRIGHT_SECRET_OF_THE_PARENT": None,
    }


def test_template_macro_function_environment_and_timeout(tmp_path):
    # The AWS::CloudFormation::Macro's function declares Environment.Variables and Timeout.
    doc = template("""
        Resources:
          Fn:
            Type: AWS::Lambda::Function
            Properties:
              Runtime: python3.12
              Handler: index.handler
              Timeout: 7
              Environment: {Variables: {GREETING: hello}}
              Code:
                ZipFile: |
                  import os
                  def handler(event, context):
                      left = context.get_remaining_time_in_millis()
                      return {'requestId': event['requestId'], 'status': 'success',
                              'fragment': [os.environ['GREETING'], 0 < left <= 7000]}
          M:
            Type: AWS::CloudFormation::Macro
            Properties: {Name: Greet, FunctionName: {Fn::GetAtt: [Fn, Arn]}}
          B: {Type: T, Properties: {Fn::Transform: Greet}}
    """)
    registry = MacroRegistry.build()
    registry.register_template_macros(doc, tmp_path)
    assert expand(doc, registry=registry)["Resources"]["B"]["Properties"] == ["hello", True]


def test_timeout_kills_the_handler_and_what_it_started(tmp_path):
    # Issue #17: no orphan. The handler starts a grandchild, records its pid, then hangs.
    pid_file = tmp_path / "grandchild.pid"
    handler(tmp_path, "Hangs", "import subprocess, time\n"
            f"child = subprocess.Popen(['sleep', '60'])\nopen({str(pid_file)!r}, 'w').write(str(child.pid))\n"
            "time.sleep(60)")
    project = {"Hangs": {"path": "Hangs.py", "timeout": 2}}
    registry = MacroRegistry.build(project_macros=project, base_dir=tmp_path)
    with pytest.raises(MacroError) as info:
        expand(template(SITE % "Hangs"), registry=registry)
    assert info.value.message == "Transform 123456789012::Hangs failed with: Task timed out after 2 seconds"
    grandchild = int(pid_file.read_text())
    for _ in range(50):  # the kernel reaps it as soon as its parent (the killed handler) is gone
        try:
            os.kill(grandchild, 0)
        except ProcessLookupError:
            break
        with open(f"/proc/{grandchild}/stat") as stat:
            if stat.read().split()[2] == "Z":
                break  # a zombie: killed, waiting for init to reap it
        time.sleep(0.1)
    else:
        pytest.fail(f"the handler's child {grandchild} outlived the timeout")


@pytest.mark.parametrize("body,message", [
    ("raise ValueError('no good')", "the handler raised ValueError: no good"),
    ("return {'x': {1, 2}}", "the response is not JSON"),
    ("os._exit(9)", "ended with exit code 9 without answering"),
])
def test_crashes_and_bad_answers(tmp_path, body, message):
    (tmp_path / "Bad.py").write_text("import os\n\ndef handler(event, context):\n    " + body + "\n")
    with pytest.raises(MacroError) as info:
        expand(template(SITE % "Bad"), registry=MacroRegistry.build(macros_dir=tmp_path))
    assert info.value.message.startswith("Transform 123456789012::Bad failed with: ")
    assert message in info.value.message


@pytest.mark.parametrize("entry,message", [
    ("{Bad: {environment: {A: b}}}", "must be a path or a mapping with a path"),
    ("{Bad: {path: Bad.py, timeout: 0}}", "timeout must be a number of seconds"),
    ("{Bad: {path: Bad.py, env: {}}}", "unknown key env"),
])
def test_bad_macro_entries(tmp_path, entry, message):
    handler(tmp_path, "Bad", "pass")
    code, _, err = run_expand(tmp_path, f"macros: {entry}\n", SITE % "Bad")
    assert code == 2 and message in err
