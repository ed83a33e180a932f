"""`formwright completion bash|zsh|fish`: the shell script that completes commands, flags, stack names
and instance names (through typer's completion protocol, `_FORMWRIGHT_COMPLETE`)."""

from __future__ import annotations

import sys
from enum import Enum

import typer

PROG = "formwright"
COMPLETE_VAR = "_FORMWRIGHT_COMPLETE"


class Shell(str, Enum):  # noqa: UP042 - StrEnum would change str() of the members
    """The shells we write a completion script for."""

    bash = "bash"
    zsh = "zsh"
    fish = "fish"


def answer_completion() -> None:
    """Make typer's main() answer a completion request (the script sets _FORMWRIGHT_COMPLETE)."""
    # typer keeps its shell classes in a private module; they match the scripts below
    from typer._completion_classes import completion_init

    completion_init()


def completion_script(shell: str) -> str:
    """The completion script for `shell`."""
    from typer._completion_shared import get_completion_script

    answer_completion()
    return get_completion_script(prog_name=PROG, complete_var=COMPLETE_VAR, shell=shell)


def register(app: typer.Typer) -> None:
    """Add the completion command."""

    @app.command()
    def completion(shell: Shell = typer.Argument(..., metavar="bash|zsh|fish",
                                                 help="The shell to write the script for.")) -> None:
        """Print a shell completion script: `source <(formwright completion bash)` in ~/.bashrc, \
`formwright completion fish > ~/.config/fish/completions/formwright.fish`."""
        sys.stdout.write(completion_script(shell.value) + "\n")
