"""The `formwright` program: one typer application, a module per command group.

Errors a user can cause print one line and exit 2 (bad input), 1 (the cloud said no) or 3 (a lock);
anything else is a bug and still prints one line (with FORMWRIGHT_DEBUG=1, the traceback).
"""

from __future__ import annotations

import importlib
import os
import sys
import traceback

import typer
from rich.markup import escape

from formwright import __version__
from formwright.cli.common import err_console
from formwright.errors import FormwrightError

app = typer.Typer(
    name="formwright",
    help="Infrastructure as code for AWS CloudFormation: plan and deploy projects of stacks in dependency "
    "order, expand macros locally, transform TOSCA, keep stacks in step with git.\n\n"
    "Runs against the embedded local cloud by default (`formwright local-cloud start`); "
    "`--target aws` uses your ordinary boto3 configuration.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        print(f"formwright {__version__}")
        raise typer.Exit()


@app.callback()
def _root(version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                       help="Print the version and exit.")) -> None:
    """formwright."""


# Each command group is imported only when its command runs (all of them for --help or a typo): the
# engine pulls in boto3, the sync objects pydantic, the TOSCA plugin tosca-parser and troposphere, and
# no command should pay for the others' start-up.
PROJECT_COMMANDS = (
    "init",
    "validate",
    "build",
    "plan",
    "deploy",
    "delete",
    "status",
    "outputs",
    "diff",
    "graph",
)
COMMAND_MODULES = {
    **{name: "formwright.cli.project_cmds" for name in PROJECT_COMMANDS},
    "local-cloud": "formwright.cli.local_cloud",
    "expand": "formwright.cli.expand",
    "transform": "formwright.cli.transform",
    "instance": "formwright.cli.instance",
    "history": "formwright.cli.instance",
    "sync": "formwright.cli.sync",
}


def register_groups(argv: list[str]) -> None:
    """Register the command modules the command line needs (all of them when unsure)."""
    command = next((arg for arg in argv[1:] if not arg.startswith("-")), None)
    wanted = (
        [COMMAND_MODULES[command]]
        if command in COMMAND_MODULES
        else list(dict.fromkeys(COMMAND_MODULES.values()))
    )
    for module in wanted:
        importlib.import_module(module).register(app)


def fail(err: FormwrightError) -> None:
    """Print the error on one line and exit with its code."""
    err_console.print(f"[red]error:[/] {escape(str(err))}", highlight=False, soft_wrap=True)
    sys.exit(err.exit_code)


def main() -> None:
    """Entry point of the console script."""
    register_groups(sys.argv)
    try:
        app()  # standalone: usage errors print with the usage line and exit 2; Exit codes pass through
    except FormwrightError as err:
        fail(err)
    except Exception as err:  # noqa: BLE001 - AWS errors outside a stack are one line too; anything else is a bug
        if type(err).__module__.startswith("botocore"):
            from formwright.cloud.errors import translate

            fail(translate(err))
        if os.environ.get("FORMWRIGHT_DEBUG"):
            traceback.print_exc()
        err_console.print(f"[red]internal error:[/] {type(err).__name__}: {escape(str(err))} "
                          "(a bug in formwright; FORMWRIGHT_DEBUG=1 shows the traceback)", highlight=False)
        sys.exit(70)
