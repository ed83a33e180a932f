"""Helpers for the TOSCA tests: the examples, writing small service templates, transforming them."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from formwright.transform.cloudformation import TransformResult, transform_tosca

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES_DIR = ROOT / "examples" / "tosca"
GOLDEN_DIR = Path(__file__).resolve().parent / "golden"

# name -> (source, inputs)
EXAMPLES: dict[str, tuple[Path, dict[str, str]]] = {
    "lamp-single": (EXAMPLES_DIR / "lamp-single" / "lamp.yaml", {"database_password": "correct-horse"}),
    "lamp-two": (EXAMPLES_DIR / "lamp-two" / "lamp.yaml", {"database_password": "correct-horse"}),
    "nodejs": (EXAMPLES_DIR / "nodejs" / "service.yaml", {}),
    "java": (EXAMPLES_DIR / "java", {}),
}

HEADER = "tosca_definitions_version: tosca_simple_yaml_1_0\n"


def write_template(
    folder: Path, body: str, name: str = "service.yaml", files: dict[str, str] | None = None
) -> Path:
    """Write a service template (the header is added) and extra files into `folder`; return its path."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(HEADER + textwrap.dedent(body), encoding="utf-8")
    for relative, text in (files or {}).items():
        target = folder / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def transform(tmp_path: Path):
    """Transform a service template body (written to a temp folder) without writing an artifact."""

    def run(
        body: str, inputs: dict[str, str] | None = None, files: dict[str, str] | None = None
    ) -> TransformResult:
        return transform_tosca(write_template(tmp_path / "src", body, files=files), None, inputs=inputs or {})

    return run


def resources_of(template: dict, kind: str) -> dict[str, dict]:
    """The resources of CloudFormation type `kind`."""
    return {k: v for k, v in template["Resources"].items() if v["Type"] == kind}


def lint_errors(template: dict, text: str | None = None) -> list[str]:
    """cfn-lint findings of level error."""
    from formwright.template.lint import lint

    return [str(f) for f in lint(template, file="template.yaml", text=text) if f.level == "error"]
