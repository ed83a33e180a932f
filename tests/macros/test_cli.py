"""`formwright expand` through typer's CliRunner on an app that `register` fills."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from formwright.cli.expand import register
from formwright.errors import FormwrightError
from tests.macros.conftest import EXAMPLES

TEMPLATE = """\
Transform: [Count]
Parameters:
  Env: {Type: String, Default: dev}
Resources:
  Q:
    Type: AWS::SQS::Queue
    Count: 2
    Properties:
      QueueName: {Fn::Transform: {Name: String, Parameters: {InputString: q, Operation: Upper}}}
"""


def make_app() -> typer.Typer:
    app = typer.Typer()
    register(app)

    @app.callback()
    def main() -> None:
        """The test app."""

    return app


def invoke(*args: str) -> tuple[int, str]:
    """Run the command; a FormwrightError prints its one line and exits with its code, as main does."""
    result = CliRunner().invoke(make_app(), list(args))
    if isinstance(result.exception, FormwrightError):
        return result.exception.exit_code, str(result.exception)
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.output


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "formwright.yaml").write_text(
        f"macros:\n  Count: {EXAMPLES / 'count.py'}\n  String: {EXAMPLES / 'string_functions.py'}\n")
    path = tmp_path / "stack.yaml"
    path.write_text(TEMPLATE)
    return path


def test_prints_processed_json_by_default(project):
    code, out = invoke("expand", str(project))
    assert code == 0
    processed = json.loads(out)
    assert sorted(processed["Resources"]) == ["Q1", "Q2"]
    assert processed["Resources"]["Q1"]["Properties"]["QueueName"] == "Q"


def test_yaml_to_a_file_and_json_report(project, tmp_path):
    target = tmp_path / "out.yaml"
    code, out = invoke("expand", str(project), "--format", "yaml", "-o", str(target), "--output", "json")
    assert code == 0
    report = json.loads(out)
    assert [m["name"] for m in report["macros_run"]] == ["String", "Count"]
    assert "Q2:" in target.read_text()
    assert report["needs_upload"] is False


def test_macros_dir_and_params(tmp_path):
    path = tmp_path / "t.yaml"
    path.write_text("Transform: AWS::LanguageExtensions\nParameters: {N: {Type: CommaDelimitedList}}\n"
                    "Resources:\n  Fn::ForEach::L: [X, {Ref: N}, {'R${X}': {Type: T}}]\n")
    code, out = invoke("expand", str(path), "--param", "N=a,b", "--macros", str(EXAMPLES / "bin"))
    assert code == 0 and sorted(json.loads(out)["Resources"]) == ["Ra", "Rb"]


@pytest.mark.parametrize("args,message", [
    (["--param", "oops"], "--param 'oops' is not KEY=VALUE"),
    (["--format", "xml"], "--format xml is not json or yaml"),
    (["--macros", "remote"], "--macros remote leaves expansion to CloudFormation"),
    (["--macros", "/no/such/dir"], "not a folder"),
])
def test_bad_flags(project, args, message):
    code, out = invoke("expand", str(project), *args)
    assert code == 2 and message in out and "\n" not in out


def test_missing_template(tmp_path):
    code, out = invoke("expand", str(tmp_path / "none.yaml"))
    assert code == 2 and "none.yaml: template file not found" in out


def test_unknown_macro_line(tmp_path):
    path = tmp_path / "t.yaml"
    path.write_text("Resources:\n  B:\n    Type: T\n    Properties:\n      Fn::Transform: Nope\n")
    code, out = invoke("expand", str(path))
    assert code == 2 and out.startswith(f"{path}:5: No transform named 123456789012::Nope found.")


@pytest.mark.parametrize("value", ["nan", "inf", "-inf"])
def test_non_finite_numbers_are_refused_not_written_as_invalid_json(tmp_path, value):
    # Issue #17: json.dumps writes NaN / Infinity, which no JSON parser (nor CloudFormation) accepts. The
    # loader refuses `.nan` in a template; a macro's JSON answer can still carry one.
    (tmp_path / "Nan.py").write_text(
        "def handler(event, context):\n"
        "    return {'requestId': event['requestId'], 'status': 'success',\n"
        f"            'fragment': float('{value}')}}\n")
    path = tmp_path / "t.yaml"
    path.write_text("Resources:\n  B:\n    Type: T\n    Properties: {Size: {Fn::Transform: Nan}}\n")
    code, out = invoke("expand", str(path), "--macros", str(tmp_path))
    assert code == 2 and "/Resources/B/Properties/Size is not a finite number" in out


def test_empty_split_delimiter_inside_length_is_a_clear_error(tmp_path):
    # Issue #17: this was an internal error (exit 70).
    path = tmp_path / "t.yaml"
    path.write_text("Transform: AWS::LanguageExtensions\nResources:\n  B:\n    Type: T\n"
                    "    Properties: {N: {Fn::Length: {Fn::Split: ['', 'a,b']}}}\n")
    code, out = invoke("expand", str(path))
    assert code == 2 and "Fn::Split layout is incorrect" in out and out.count("\n") <= 1
