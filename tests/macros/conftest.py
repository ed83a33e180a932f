"""Helpers for macro tests: templates from text, macros written as real files."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from formwright.macros import MacroRegistry
from formwright.template import loads

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "macros"


def template(text: str, file: str = "template.yaml") -> dict:
    """A template loaded as formwright loads it (with line numbers)."""
    return loads(textwrap.dedent(text), file=file)


def write_handler(folder: Path, name: str, body: str) -> Path:
    """A Python macro file `name.py` whose handler has `body` (event and context in scope)."""
    path = folder / f"{name}.py"
    path.write_text(
        "import json\n\ndef handler(event, context):\n" + textwrap.indent(textwrap.dedent(body), "    ")
    )
    return path


def write_executable(folder: Path, name: str, script: str) -> Path:
    """An executable macro (a Python script with a shebang)."""
    import sys

    path = folder / name
    path.write_text(f"#!{sys.executable}\n" + textwrap.dedent(script))
    path.chmod(0o755)
    return path


@pytest.fixture
def macros_dir(tmp_path: Path) -> Path:
    """An empty folder for --macros."""
    folder = tmp_path / "macros"
    folder.mkdir()
    return folder


@pytest.fixture
def registry_with(macros_dir: Path):
    """Write macros into the folder, then build a registry from it."""

    def build() -> MacroRegistry:
        return MacroRegistry.build(macros_dir=macros_dir)

    return build
