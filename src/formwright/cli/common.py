"""What every command shares: the --output flag, JSON/text emission, the error handler."""

from __future__ import annotations

import json
import sys
from enum import Enum
from typing import Any

import typer
from rich.console import Console


def _console(stream) -> Console:
    # Off a terminal rich would wrap at 80 columns and break `file:line: message` lines apart.
    return Console(stderr=stream is sys.stderr, width=None if stream.isatty() else 240)


console = _console(sys.stdout)
err_console = _console(sys.stderr)


class Output(str, Enum):  # noqa: UP042 - StrEnum would change str() of the members
    """How a command prints its result."""

    text = "text"
    json = "json"


OutputOption = typer.Option(Output.text, "--output", help="text for people, json for scripts.")
TargetOption = typer.Option(
    None, "--target", help="local (the embedded local cloud, default) or aws; env FORMWRIGHT_TARGET."
)


def emit_json(data: Any) -> None:
    """Print `data` as JSON on stdout (the whole result of a command run with --output json)."""
    sys.stdout.write(json.dumps(data, indent=2, default=str) + "\n")
    sys.stdout.flush()
