"""The `formwright` program: one typer application, a module per command group.

Exit codes: 0 fine, 1 the cloud said no (a stack failed; `diff --exit-code`: differences), 2 bad input
(one line with file:line and a hint), 3 a lock is held, 4 a confirmation prompt was declined ("Cancelled;
nothing changed."), 5 `plan --exit-code`: the plan changes something, 130 interrupted (Ctrl-C),
70 a bug (one line; FORMWRIGHT_DEBUG=1 shows the traceback).
With `--output json` every answer on stdout is JSON, errors too (see formwright.cli.common).
"""

from __future__ import annotations

import importlib
import os
import sys
import threading
import traceback
from typing import Any, NoReturn

import typer

from formwright import __version__
from formwright.cli import coercion, common
from formwright.cli.common import (
    emit_json,
    error_entry,
    error_envelope,
    error_of,
    json_requested,
)
from formwright.cli.helptext import add_epilogs, epilog
from formwright.errors import EXIT_INTERRUPTED, FormwrightError

app = typer.Typer(
    name="formwright",
    help="Infrastructure as code for AWS CloudFormation: plan and deploy projects of stacks in dependency "
    "order, expand macros locally, transform TOSCA, keep stacks in step with git.\n\n"
    "Runs against the embedded local cloud by default (`formwright local-cloud start`); "
    "`--target aws` uses your ordinary boto3 configuration.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # plain help in the usual style (no `<bool>` type column), and faster
    add_completion=False,
    context_settings={"help_option_names": ["-h", "--help"]},
    epilog=epilog(""),
)


def _usage_name(self: typer.core.TyperArgument) -> str:
    """An argument in the usage line as in git's or docker's: TEMPLATE, [DIR], [ARGS]... (typer would write
    {template} and [directory])."""
    name = self.metavar or self.name.upper()
    if not self.required and not name.startswith("["):
        name = f"[{name}]"
    if self.nargs != 1 and self.metavar is None:
        name += "..."
    return name


_TYPE_METAVARS = {"str": "TEXT", "int": "INTEGER", "float": "FLOAT", "path": "PATH", "bool": "",
                  "list[str]": "TEXT", "list[path]": "PATH"}
_typer_display_type = typer.core._TyperParameter.display_type


def _option_metavar(self: typer.core._TyperParameter, ctx: typer.Context) -> str:
    """An option's value in help as click writes it (`--name TEXT`, `--output [text|json]`), where typer
    would write `<str>` and `<text|json>`."""
    label = _typer_display_type(self, ctx).strip("<>")
    if label in _TYPE_METAVARS:
        return _TYPE_METAVARS[label]
    return f"[{label}]" if "|" in label else label.upper()


typer.core.TyperArgument._usage_display_name = _usage_name  # type: ignore[method-assign]
typer.core._TyperParameter.display_type = _option_metavar  # type: ignore[method-assign,assignment]
typer.core.TyperArgument.display_type_rich = lambda self, ctx: None  # type: ignore[method-assign,assignment]
typer.core.TyperArgument._rich_display_name = (  # type: ignore[method-assign]
    lambda self: self.metavar or self.name.upper())
coercion.install()


def _version(value: bool) -> None:
    if value:
        print(f"formwright {__version__}")
        raise typer.Exit()


# Commands that run the project's own code by design (lifecycle hooks) or confine on their own (sync).
UNSANDBOXED = ("instance", "history", "sync", "local-cloud")


@app.callback()
def _root(ctx: typer.Context,
          version: bool = typer.Option(False, "--version", callback=_version, is_eager=True,
                                       help="Print the version and exit."),
          sandbox: bool = typer.Option(
              False, "--sandbox", help="Treat the project as untrusted: it reads nothing outside its folder "
              "(symlinks resolved), its own macro code never runs (only --macros DIR), `env` is empty."),
          ) -> None:
    """formwright."""
    if sandbox:
        if ctx.invoked_subcommand in UNSANDBOXED:
            raise FormwrightError(f"--sandbox does not cover `{ctx.invoked_subcommand}`",
                                  hint="sync confines every synced repository on its own; lifecycle hooks "
                                  "run project code by design")
        from formwright import sandbox as policy

        policy.request()


# Each command group is imported only when its command runs (all of them for --help or a typo): the
# engine pulls in boto3, the sync objects pydantic, the TOSCA plugin tosca-parser and troposphere, and
# no command should pay for the others' start-up.
COMMANDS = {  # name: (module, the line `formwright --help` shows without importing the module)
    "init": ("formwright.cli.author_cmds", "Create a project: formwright.yaml, two templates, .gitignore."),
    "validate": ("formwright.cli.author_cmds", "Check the project as deploy would, without cloud calls."),
    "build": ("formwright.cli.author_cmds", "Write each stack's packaged and processed template and its "
                                            "artifacts to .formwright/build/."),
    "graph": ("formwright.cli.author_cmds", "The stacks' dependency graph (DOT, SVG, PNG or JSON)."),
    "plan": ("formwright.cli.plan_cmds", "Show what deploy would change, from real change sets."),
    "show-plan": ("formwright.cli.plan_cmds", "Print a plan saved by `plan -o FILE` as the text plan."),
    "deploy": ("formwright.cli.deploy_cmds", "Plan and execute in dependency order, stacks in parallel."),
    "delete": ("formwright.cli.deploy_cmds", "Delete stacks in reverse dependency order."),
    "drift": ("formwright.cli.operate_cmds", "Detect drift: what changed in the cloud outside formwright."),
    "import": ("formwright.cli.operate_cmds", "Bring existing resources under a stack (IMPORT change set)."),
    "ls": ("formwright.cli.stacks_cmds", "Every stack in the account and region: status, owner, updated."),
    "adopt": ("formwright.cli.adopt_cmd", "Write a project that manages existing stacks as they are."),
    "import-sceptre": ("formwright.cli.import_sceptre_cmd", "Convert a sceptre project into a formwright "
                       "project (same stack names)."),
    "status": ("formwright.cli.inspect_cmds", "Each stack's CloudFormation status and last update."),
    "outputs": ("formwright.cli.inspect_cmds", "Stack outputs; one value with STACK KEY."),
    "diff": ("formwright.cli.inspect_cmds", "The local templates against the deployed ones."),
    "events": ("formwright.cli.inspect_cmds", "Stack events, oldest first; --follow to watch them come."),
    "expand": ("formwright.cli.expand", "Run a template's macros locally; print the processed template."),
    "transform": ("formwright.cli.transform", "Transform other descriptions (TOSCA) into CloudFormation."),
    "instance": ("formwright.cli.instance", "Deployment instances: create, upgrade, roll back, retry, run."),
    "history": ("formwright.cli.instance", "An instance's operations and revisions (= instance history)."),
    "package": ("formwright.cli.package", "Pack a project version into a verifiable NAME-VERSION.tar.gz, or "
                                          "package one template's artifacts (--bucket)."),
    "sync": ("formwright.cli.sync", "Keep stacks in step with git (Flux's CloudFormationStack objects)."),
    "local-cloud": ("formwright.cli.local_cloud", "The embedded local cloud on 127.0.0.1 (the default)."),
    "completion": ("formwright.cli.completion", "Print a bash, zsh or fish completion script."),
}
COMMAND_MODULES = {name: module for name, (module, _) in COMMANDS.items()}

# What users of other tools type, and formwright's command for it (click's closest spelling would send
# `destroy` to deploy and `launch` to plan).
OTHER_TOOLS = {
    "destroy": ("delete", "terraform's and pulumi's destroy"),
    "rm": ("delete", "rain's rm"),
    "launch": ("deploy", "sceptre's launch"),
    "create": ("deploy", "sceptre's create"),
    "update": ("deploy", "sceptre's update"),
    "apply": ("deploy", "terraform's and kubectl's apply"),
    "up": ("deploy", "pulumi's up"),
    "install": ("deploy", "helm's install; `formwright instance create` for a named instance"),
    "upgrade": ("deploy", "helm's upgrade; `formwright instance upgrade` for a named instance"),
    "list": ("ls", "sceptre's list and helm's list"),
    "get": ("status", "kubectl's and flux's get"),
    "describe": ("status", "sceptre's describe"),
    "logs": ("events", "rain's logs"),
    "output": ("outputs", "terraform's output"),
    "lint": ("validate", "helm's lint"),
}


def other_tools_command(argv: list[str]) -> FormwrightError | None:
    """The error for a command word another tool uses: formwright's own name for it, as a hint."""
    command = next((arg for arg in argv[1:] if not arg.startswith("-")), None)
    if command is None or command in COMMANDS or command not in OTHER_TOOLS:
        return None
    ours, theirs = OTHER_TOOLS[command]
    return FormwrightError(f"no command '{command}'",
                           hint=f"did you mean `formwright {ours}`? it does what {theirs} does")


def register_groups(argv: list[str]) -> None:
    """Register the command module the command line needs; for `--help`, `--version` or a typo only
    one-line stand-ins, so that they start fast; for shell completion all of them."""
    command = next((arg for arg in argv[1:] if not arg.startswith("-")), None)
    if command in COMMAND_MODULES:
        importlib.import_module(COMMAND_MODULES[command]).register(app)
        add_epilogs(app)
    elif os.environ.get("_FORMWRIGHT_COMPLETE"):
        from formwright.cli.completion import answer_completion

        answer_completion()
        register_all()
    else:
        for name, (_, summary) in COMMANDS.items():
            app.command(name, help=summary, add_help_option=False)(_stand_in)


def register_all() -> typer.Typer:
    """Register every command module (for shell completion, and for tests that walk every command)."""
    for module in dict.fromkeys(COMMAND_MODULES.values()):
        importlib.import_module(module).register(app)
    add_epilogs(app)
    return app


def _stand_in() -> None:
    """Never runs: a stand-in is only registered when no command was named."""


def fail(err: FormwrightError, as_json: bool) -> NoReturn:
    """Print the error (one line, or the JSON envelope on stdout) and exit with its code."""
    each = getattr(err, "errors", [err])  # formwright.errors.ProjectErrors: several, each at its line
    if as_json:
        emit_json(error_envelope([error_of(one) for one in each]))
    else:
        from rich.markup import escape

        for one in each:
            common.err_console.print(f"[red]error:[/] {escape(str(one))}", highlight=False, soft_wrap=True)
        if len(each) > 1:
            common.err_console.print(f"{len(each)} errors", highlight=False)
    sys.exit(err.exit_code)


def _usage_error(err: typer.TyperException) -> NoReturn:
    """A usage error in JSON mode: the JSON envelope with click's message, same exit code (2)."""
    ctx = getattr(err, "ctx", None)
    hint = f"see: {ctx.command_path} --help" if ctx is not None else None
    emit_json(error_envelope([error_entry(err.format_message(), hint=hint)]))
    sys.exit(err.exit_code)


def main() -> None:
    """Entry point of the console script."""
    try:
        _main()
        code: Any = 0
    except SystemExit as done:
        code = done.code
    leave(code)


def leave(code: Any) -> NoReturn:
    """Exit with `code` (as sys.exit takes it). Run as the program (the console script or `python -m
    formwright`) with no thread left but the main one, skip the interpreter's teardown: freeing boto3's
    loaded models and modules takes ~0.15 s after the work is done, and the shell waits for it. atexit
    handlers run and output is flushed first, as at any exit; in a test's process it is a plain
    sys.exit."""
    program = sys.modules.get("__main__")
    spec = getattr(program, "__spec__", None)
    as_program = (getattr(spec, "name", None) == "formwright.__main__"
                  or os.path.basename(getattr(program, "__file__", None) or "") == "formwright")
    if not as_program or threading.active_count() != 1:
        sys.exit(code)
    import atexit

    atexit._run_exitfuncs()
    status = code if isinstance(code, int) else (0 if code is None else 1)
    if code is not None and not isinstance(code, int):
        print(code, file=sys.stderr)  # what sys.exit does with a message
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe: nothing more can be said
            status = status or 1
    os._exit(status)


def _main() -> None:
    as_json = json_requested(sys.argv[1:])
    register_groups(sys.argv)
    try:
        elsewhere = other_tools_command(sys.argv)
        if elsewhere is not None:
            raise elsewhere
        word = common.misread_out_flag(sys.argv[1:])
        if word is not None:
            raise FormwrightError(f"-o {word}: -o is a PATH to write in formwright, not a format",
                                  hint=f"did you mean --output {word}?")
        if not as_json:
            app()  # standalone: usage errors print with the usage line and exit 2; Exit codes pass through
            return
        code = app(standalone_mode=False)  # usage errors come back as exceptions, to answer in JSON
        if code == EXIT_INTERRUPTED:  # typer turns a KeyboardInterrupt into this code, silently
            emit_json(error_envelope([error_entry("interrupted")]))
    except FormwrightError as err:
        fail(err, as_json)
    except typer.TyperException as err:
        _usage_error(err)
    except typer.Abort:
        emit_json(error_envelope([error_entry("interrupted")]))
        sys.exit(EXIT_INTERRUPTED)
    except Exception as err:  # noqa: BLE001 - AWS errors outside a stack are one line too; anything else is a bug
        if type(err).__module__.startswith("botocore"):
            from formwright.cloud.errors import translate

            fail(translate(err), as_json)
        if os.environ.get("FORMWRIGHT_DEBUG"):
            traceback.print_exc()
        message = f"{type(err).__name__}: {err} (a bug in formwright; FORMWRIGHT_DEBUG=1 shows the traceback)"
        if as_json:
            emit_json(error_envelope([error_entry(f"internal error: {message}")]))
        else:
            from rich.markup import escape

            common.err_console.print(f"[red]internal error:[/] {escape(message)}", highlight=False)
        sys.exit(70)
    sys.exit(code if isinstance(code, int) else 0)
