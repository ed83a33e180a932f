"""Issue #17: hostile and broken template and project files end in one clean error, never a crash.

Each input here was found by the bad-input campaign to end in an internal error (exit 70), a
RecursionError, a segfault, unbounded work or silent acceptance. They are small enough to make here.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from formwright.errors import InputError, ProjectError, TemplateError
from formwright.model.project import load_project
from formwright.template.document import MAX_DEPTH, loads

RESOURCES = "Resources:\n  Q:\n    Type: AWS::SQS::Queue\n"


def _template_error(text: str) -> TemplateError:
    with pytest.raises(TemplateError) as info:
        loads(text, file="t.yaml")
    return info.value


@pytest.mark.parametrize(
    ("text", "message", "line"),
    [
        ("a: !!int abc\n", "is not an integer", 1),
        ("a: 1\nb: " + "9" * 5000 + "\n", "5,000 digits", 2),
        ("a: !!float x\n", "is not a number", 1),
        ("a: .nan\n", "NaN or infinity", 1),
        ("a: -.inf\n", "NaN or infinity", 1),
        ("a: !!bool maybe\n", "is not true or false", 1),
        ("a: !!set {x: 1}\n", "!!set has no CloudFormation meaning", 1),
        ("a: !!omap [x: 1]\n", "!!omap", 1),
        ("a: !!pairs [x: 1]\n", "!!pairs", 1),
        ("a: !!binary aGk=\n", "!!binary", 1),
        ("a: !!python/object:os.system x\n", "unknown tag", 1),
    ],
)
def test_yaml_core_tags_with_bad_values(text: str, message: str, line: int) -> None:
    err = _template_error(text)
    assert message in err.message
    assert err.line == line and err.file == "t.yaml"


def test_json_numbers_surrogates_and_constants() -> None:
    # a tab makes the loader use the JSON parser (YAML reads a tab as indentation)
    assert "digits" in _template_error('{\t"a": ' + "1" * 5000 + "}").message
    assert "NaN" in _template_error('{\t"a": NaN}').message
    assert "lone UTF-16 surrogate" in _template_error('{\t"a": "x\\ud800y"}').message
    # a proper pair is one character, and fine
    assert loads('{\t"a": "\\ud83d\\ude00"}') == {"a": "\U0001f600"}


@pytest.mark.parametrize("levels", [MAX_DEPTH + 1, 200, 200_000])
def test_depth_limit_yaml_flow_block_and_json(levels: int) -> None:
    # 200 levels raised RecursionError; 200,000 made libyaml's C composer overflow its stack
    nested = "[" * levels + "]" * levels
    for text in (nested, "- " * levels + "x\n", '{\t"a":' + nested + "}"):
        err = _template_error(text)
        assert f"nested more than {MAX_DEPTH} levels" in err.message


def test_depth_at_the_limit_loads() -> None:
    depth = MAX_DEPTH - 1  # the top-level mapping is one level
    data = loads("a: " + "[" * depth + "1" + "]" * depth)
    for _ in range(depth + 1):
        data = data["a"] if isinstance(data, dict) else data[0]
    assert data == 1


def test_billion_laughs_is_refused_quickly() -> None:
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 10) + "]" for i in range(1, 10)]
    err = _template_error("\n".join(lines) + "\n")
    assert "aliases expand" in err.message


def test_few_aliases_are_fine_and_recursive_alias_refused() -> None:
    assert loads("a: &x [1, 2]\nb: *x\n") == {"a": [1, 2], "b": [1, 2]}
    assert "not valid YAML" in _template_error("a: &x [*x]\n").message


def _project(root: Path, body: str) -> Path:
    (root / "t.yaml").write_text(RESOURCES)
    (root / "formwright.yaml").write_bytes(body.encode("utf-8") if isinstance(body, str) else body)
    return root


def _project_error(root: Path) -> ProjectError:
    with pytest.raises(ProjectError) as info:
        load_project(root)
    return info.value


def test_project_not_utf8(tmp_path: Path) -> None:
    (tmp_path / "formwright.yaml").write_bytes(b"name: p\nstacks:\n  a: {template: t\xff.yaml}\n")
    err = _project_error(tmp_path)
    assert "not UTF-8" in err.message and err.line == 3


def test_project_jinja_errors_and_sandbox(tmp_path: Path) -> None:
    _project(tmp_path, "name: p\nstacks:\n  a:\n    template: t.yaml\n    tags: {x: '{{ 1/0 }}'}\n")
    err = _project_error(tmp_path)
    assert "ZeroDivisionError" in err.message and err.line == 5
    _project(tmp_path, "name: p\nstacks:\n  a:\n    template: t.yaml\n"
                       "    tags: {x: \"{{ ''.__class__.__mro__[1].__subclasses__() }}\"}\n")
    assert "unsafe" in _project_error(tmp_path).message  # jinja2's sandbox refuses the attribute


def test_project_symlink_loop(tmp_path: Path) -> None:
    os.symlink(tmp_path / "loop.yaml", tmp_path / "loop.yaml")
    _project(tmp_path, "name: p\nstacks:\n  a: {template: loop.yaml}\n")
    with pytest.raises(InputError) as info:
        load_project(tmp_path)
    err = info.value
    assert "cannot be resolved" in err.message
    assert err.line == 3


def test_project_huge_integer_and_deep_nesting(tmp_path: Path) -> None:
    _project(tmp_path, "name: p\nversion: " + "7" * 4400 + "\nstacks:\n  a: {template: t.yaml}\n")
    assert _project_error(tmp_path).line == 2
    deep = "[" * 300 + "]" * 300
    _project(tmp_path, f"name: p\ndescription: {deep}\nstacks:\n  a: {{template: t.yaml}}\n")
    assert "nested more than" in _project_error(tmp_path).message


def test_duplicate_stack_names_refused(tmp_path: Path) -> None:
    # deploy reported both "created" while CloudFormation held one stack
    _project(tmp_path, "name: p\nstacks:\n  a: {template: t.yaml, stack_name: same}\n"
                       "  b: {template: t.yaml, stack_name: same}\n")
    err = _project_error(tmp_path)
    assert "'a' and 'b' are both the CloudFormation stack 'same'" in err.message and err.line == 4


def test_ref_in_a_tag_is_refused(tmp_path: Path) -> None:
    # it used to become the literal text "!ref a.outputs.X"
    _project(tmp_path, "name: p\nstacks:\n  a: {template: t.yaml}\n  b:\n    template: t.yaml\n"
                       "    tags:\n      owner: !ref a.outputs.X\n")
    err = _project_error(tmp_path)
    assert "!ref" in err.message and err.line == 7


@pytest.mark.parametrize("region", ["mars-1", "xx-fake-9", "us-east"])
def test_unknown_region_refused(tmp_path: Path, region: str) -> None:
    _project(tmp_path, f"name: p\nregion: {region}\nstacks:\n  a: {{template: t.yaml}}\n")
    assert "unknown region" in _project_error(tmp_path).message


def test_known_regions_of_every_partition(tmp_path: Path) -> None:
    for region in ("eu-west-1", "cn-north-1", "us-gov-west-1", "ap-southeast-7"):
        _project(tmp_path, f"name: p\nregion: {region}\nstacks:\n  a: {{template: t.yaml}}\n")
        assert load_project(tmp_path).region == region


@pytest.mark.parametrize(
    "body",
    [
        b"name: p\nstacks:\n  a: {template: t\xfe.yaml}\n",
        (b"name: p\nstacks:\n  a:\n    template: t.yaml\n    tags: {x: '{{ 1/0 }}'}\n"),
        ("name: p\nversion: " + "1" * 5000 + "\nstacks: {a: {template: t.yaml}}\n").encode(),
        ("name: p\ndescription: " + "[" * 200_000 + "]" * 200_000
         + "\nstacks: {a: {template: t.yaml}}\n").encode(),
    ],
    ids=["not-utf8", "jinja-div0", "huge-int", "deep-200k"],
)
def test_cli_validate_one_line_exit_2(tmp_path: Path, body: bytes) -> None:
    _project(tmp_path, body)
    proc = subprocess.run([sys.executable, "-m", "formwright", "validate", str(tmp_path)],
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr and "internal error" not in proc.stderr
    assert "formwright.yaml:" in proc.stderr


def test_cli_expand_template_nan_is_refused(tmp_path: Path) -> None:
    (tmp_path / "t.yaml").write_text("Resources:\n  Q:\n    Type: AWS::SQS::Queue\n"
                                     "    Properties: {DelaySeconds: .nan}\n")
    proc = subprocess.run([sys.executable, "-m", "formwright", "expand", str(tmp_path / "t.yaml"),
                           "--format", "json"], capture_output=True, text=True, timeout=120,
                          stdin=subprocess.DEVNULL)
    assert proc.returncode == 2 and "t.yaml:4" in proc.stderr
    with pytest.raises(json.JSONDecodeError):
        json.loads(proc.stdout or "x")  # nothing half-written on stdout


def test_cli_expand_in_a_project_that_uses_ref(tmp_path: Path) -> None:
    # expand read formwright.yaml with the template loader, which has no `!ref`: every template failed
    _project(tmp_path, "name: p\nstacks:\n  a: {template: t.yaml}\n  b:\n    template: t.yaml\n"
                       "    parameters: {X: !ref a.outputs.Arn}\n")
    proc = subprocess.run([sys.executable, "-m", "formwright", "expand", str(tmp_path / "t.yaml")],
                          capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["Resources"]["Q"]["Type"] == "AWS::SQS::Queue"


def test_validate_applies_deploys_size_rule(tmp_path: Path) -> None:
    # a template over 1,000,000 bytes passed validate, then failed deploy
    queue = "  Q{0:05d}:\n    Type: AWS::SQS::Queue\n    Properties: {{QueueName: q{0}-" + "x" * 80 + "}}\n"
    queues = "".join(queue.format(i) for i in range(10_000))
    (tmp_path / "t.yaml").write_text("Resources:\n" + queues)
    (tmp_path / "formwright.yaml").write_text("name: big\nstacks:\n  a: {template: t.yaml}\n")
    proc = subprocess.run([sys.executable, "-m", "formwright", "validate", str(tmp_path), "--no-lint"],
                          capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
    assert proc.returncode == 2
    assert "t.yaml: Template may not exceed 1000000 bytes" in proc.stderr
