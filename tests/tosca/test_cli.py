"""`formwright transform tosca` through typer's CliRunner on an app that only has `register` applied."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from typer.testing import CliRunner

from formwright.cli.transform import register
from formwright.errors import InputError

from .conftest import EXAMPLES


def _app() -> typer.Typer:
    app = typer.Typer()

    @app.callback()
    def main() -> None:
        """formwright (test stand-in)."""

    register(app)
    return app


def test_json_output(tmp_path: Path):
    src, inputs = EXAMPLES["lamp-single"]
    args = ["transform", "tosca", str(src), "-o", str(tmp_path / "out"), "--output", "json"]
    for key, value in inputs.items():
        args += ["--input", f"{key}={value}"]
    result = CliRunner().invoke(_app(), args)
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["out"] == str(tmp_path / "out")
    assert data["template"] == str(tmp_path / "out" / "template.yaml")
    assert data["resources"] == 7
    assert "DatabasePassword" in data["parameters"]
    assert data["outputs"] == ["Url", "PrivateUrl", "DatabaseEndpoint"]
    assert "correct-horse" not in result.output


def test_text_output_and_csar_folder(tmp_path: Path):
    src, _ = EXAMPLES["java"]
    result = CliRunner().invoke(_app(), ["transform", "tosca", str(src), "-o", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    assert "template.yaml" in result.output and (tmp_path / "out" / "template.yaml").is_file()


def test_bad_input_raises_formwright_error(tmp_path: Path):
    src, _ = EXAMPLES["lamp-single"]
    result = CliRunner().invoke(_app(), ["transform", "tosca", str(src), "-o", str(tmp_path / "out")])
    assert isinstance(result.exception, InputError) and result.exception.exit_code == 2
    assert str(result.exception) == (f"{src}: missing required input: database_password "
                                     "(pass each with --input NAME=VALUE)")
    assert not (tmp_path / "out").exists()


def test_malformed_input_flag(tmp_path: Path):
    src, _ = EXAMPLES["nodejs"]
    result = CliRunner().invoke(
        _app(), ["transform", "tosca", str(src), "-o", str(tmp_path / "o"), "--input", "x"]
    )
    assert isinstance(result.exception, InputError) and "--input 'x' must be KEY=VALUE" in str(
        result.exception
    )


def test_transform_imports_no_aws_sdk(tmp_path: Path):
    """Start-up is most of a small transform (bench/tosca.py): botocore (~0.1 s to import) is for
    deploying, and a transform does not load it. Checked in a fresh interpreter."""
    import subprocess
    import sys

    src, _ = EXAMPLES["nodejs"]
    out = tmp_path / "out"
    code = ("import sys; from formwright.cli.main import main\n"
            f"sys.argv = ['formwright', 'transform', 'tosca', {str(src)!r}, '-o', {str(out)!r}]\n"
            "try:\n    main()\nexcept SystemExit as done:\n    assert not done.code, done.code\n"
            "assert 'botocore' not in sys.modules, 'botocore imported'")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          check=False)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "out" / "template.yaml").is_file()


def test_the_readmes_stack_names_a_csar_as_the_project_can_take_it(tmp_path: Path):
    """The README's `tosca:` is the source as given (a CSAR's path), not `x.csar!Definitions/...`, which no
    project could name; a project made of that snippet validates (the real CLI, in a child process)."""
    import os
    import subprocess
    import sys
    import zipfile

    csar = tmp_path / "app.csar"
    with zipfile.ZipFile(csar, "w") as archive:
        archive.writestr("TOSCA-Metadata/TOSCA.meta", "TOSCA-Meta-File-Version: 1.0\nCSAR-Version: 1.1\n"
                         "Created-By: test\nEntry-Definitions: Definitions/service.yaml\n")
        archive.writestr("Definitions/service.yaml", "tosca_definitions_version: tosca_simple_yaml_1_3\n"
                         "topology_template:\n  node_templates:\n    vm:\n      type: tosca.nodes.Compute\n")
    result = CliRunner().invoke(_app(), ["transform", "tosca", str(csar), "-o", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    readme = (tmp_path / "out" / "README.md").read_text()
    snippet = readme.split("```yaml\n", 1)[1].split("```", 1)[0]
    assert f"    tosca: {csar}\n" in snippet
    project = tmp_path / "project"
    project.mkdir()
    (project / "formwright.yaml").write_text("name: readme\n" + snippet)
    env = {**os.environ, "FORMWRIGHT_HOME": str(tmp_path / "home"), "NO_COLOR": "1"}
    done = subprocess.run([sys.executable, "-m", "formwright", "validate", str(project)], env=env,
                          capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
