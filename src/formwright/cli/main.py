"""The `formwright` program: one typer application, a module per command group.

Errors a user can cause print one line and exit 2 (bad input), 1 (the cloud said no) or 3 (a lock);
anything else is a bug and still prints one line (with FORMWRIGHT_DEBUG=1, the traceback).
"""

from __future__ import annotations

import os
import sys
import traceback

import typer

from formwright import __version__
from formwright.cli import local_cloud, project_cmds
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


local_cloud.register(app)
project_cmds.register(app)
for _module in ("formwright.cli.expand", "formwright.cli.transform", "formwright.cli.instance",
                "formwright.cli.sync"):
    try:
        __import__(_module)
    except ModuleNotFoundError as _err:
        if _err.name != _module:
            raise
        continue
    sys.modules[_module].register(app)


def main() -> None:
    """Entry point of the console script."""
    try:
        app()  # standalone: usage errors print with the usage line and exit 2; Exit codes pass through
    except FormwrightError as err:
        err_console.print(f"[red]error:[/] {err}", highlight=False, soft_wrap=True)
        sys.exit(err.exit_code)
    except KeyboardInterrupt:
        err_console.print("interrupted")
        sys.exit(130)
    except Exception as err:  # a bug: still one line unless asked for the traceback
        if os.environ.get("FORMWRIGHT_DEBUG"):
            traceback.print_exc()
        err_console.print(f"[red]internal error:[/] {type(err).__name__}: {err} "
                          "(a bug in formwright; FORMWRIGHT_DEBUG=1 shows the traceback)", highlight=False)
        sys.exit(70)
