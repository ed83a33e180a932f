"""Registering macros: formwright.yaml paths, --macros DIR, template macros, bad registrations."""

from __future__ import annotations

from pathlib import Path

import pytest

from formwright.errors import InputError
from formwright.macros import MacroError, MacroRegistry, expand
from tests.macros.conftest import EXAMPLES, template, write_handler

ECHO_UPPER = """
def handler(event, context):
    assert context.get_remaining_time_in_millis() > 0 and context.function_name == "Up"
    return {"requestId": event["requestId"], "status": "success", "fragment": event["params"]["s"].upper()}
"""
USE_UP = "Resources:\n  B: {Type: T, Properties: {N: {Fn::Transform: {Name: Up, Parameters: {s: abc}}}}}\n"


def macro_template(function: str) -> str:
    return f"""
Resources:
  UpMacro:
    Type: AWS::CloudFormation::Macro
    Properties:
      Name: Up
      FunctionName: !GetAtt UpFunction.Arn
  UpFunction:
{function}
"""


def test_inline_zipfile_function_registers_its_macro():
    code = "\n".join("          " + line for line in ECHO_UPPER.strip().splitlines())
    doc = template(macro_template(f"""    Type: AWS::Lambda::Function
    Properties:
      Runtime: python3.12
      Handler: index.handler
      Code:
        ZipFile: |
{code}
"""))
    registry = MacroRegistry.build()
    assert registry.register_template_macros(doc, Path(".")) == ["Up"]
    assert expand(template(USE_UP), registry=registry)["Resources"]["B"]["Properties"]["N"] == "ABC"


@pytest.mark.parametrize("code", ["src", "src/app.py"])
def test_local_code_path_as_package_takes_it(tmp_path, code):
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "app.py").write_text(ECHO_UPPER)
    doc = template(macro_template(f"""    Type: AWS::Lambda::Function
    Properties:
      Runtime: python3.12
      Handler: app.handler
      Code: {code}
"""))
    registry = MacroRegistry.build()
    registry.register_template_macros(doc, tmp_path)
    assert expand(template(USE_UP), registry=registry)["Resources"]["B"]["Properties"]["N"] == "ABC"


def test_code_in_s3_is_not_registered():
    doc = template(macro_template("""    Type: AWS::Lambda::Function
    Properties: {Runtime: python3.12, Handler: index.handler, Code: {S3Bucket: b, S3Key: k}}
"""))
    assert MacroRegistry.build().register_template_macros(doc, Path(".")) == []


def test_non_python_runtime_explains_itself():
    doc = template(macro_template("""    Type: AWS::Lambda::Function
    Properties: {Runtime: nodejs20.x, Handler: index.handler, Code: {ZipFile: "exports.handler = 1"}}
"""))
    registry = MacroRegistry.build()
    registry.register_template_macros(doc, Path("."))
    with pytest.raises(MacroError) as info:
        expand(template(USE_UP), registry=registry)
    assert "nodejs20.x" in info.value.hint and "--macros remote" in info.value.hint


def test_project_macro_with_function_name(tmp_path):
    (tmp_path / "m.py").write_text(ECHO_UPPER.replace("def handler", "def main"))
    registry = MacroRegistry.build(project_macros={"Up": "m.py:main"}, base_dir=tmp_path)
    assert expand(template(USE_UP), registry=registry)["Resources"]["B"]["Properties"]["N"] == "ABC"


def test_macros_dir_wins_over_project(tmp_path, macros_dir):
    write_handler(
        macros_dir, "Count", 'return {"requestId": event["requestId"], "status": "success", "fragment": {}}'
    )
    registry = MacroRegistry.build(
        project_macros={"Count": "count.py"}, base_dir=EXAMPLES, macros_dir=macros_dir
    )
    assert registry.get("Count").source.startswith(str(macros_dir))


@pytest.mark.parametrize("setup,message", [
    (lambda d: {"project_macros": {"X": "missing.py"}, "base_dir": d}, "is not a file"),
    (lambda d: {"macros_dir": d / "nope"}, "not a folder"),
    (lambda d: {"project_macros": {"AWS::Mine": "m.py"}, "base_dir": d}, "reserved"),
])
def test_bad_registrations(tmp_path, setup, message):
    (tmp_path / "m.py").write_text(ECHO_UPPER)
    with pytest.raises(InputError, match=message):
        MacroRegistry.build(**setup(tmp_path))


def test_non_executable_file_in_macros_dir(macros_dir):
    (macros_dir / "Script").write_text("#!/bin/sh\n")
    with pytest.raises(InputError) as info:
        MacroRegistry.build(macros_dir=macros_dir)
    assert "chmod +x" in info.value.hint


def test_handler_file_without_handler(macros_dir):
    (macros_dir / "M.py").write_text("x = 1\n")
    with pytest.raises(MacroError) as info:
        expand(template("Transform: M\nResources: {}"), registry=MacroRegistry.build(macros_dir=macros_dir))
    assert "M.py has no function handler(event, context)" in info.value.message


def test_handler_with_syntax_error(macros_dir):
    (macros_dir / "M.py").write_text("def handler(:\n")
    with pytest.raises(MacroError) as info:
        expand(template("Transform: M\nResources: {}"), registry=MacroRegistry.build(macros_dir=macros_dir))
    assert "SyntaxError" in info.value.hint
