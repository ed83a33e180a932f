"""The CLI's conventions, in one place: every command builds its arguments from these definitions.

- `[DIR]`: the project folder is an optional positional argument; without it the nearest folder upward
  holding `formwright.yaml` is used, as git finds its repository (`project_dir`).
- `--output text|json`: the format of the result; `-o/--out PATH`: a file or folder to write to.
- `-s/--stack NAME` (repeatable), `-y/--yes`, `--target local|aws`, `--macros DIR|remote`,
  `--param K=V` (template parameters) and `--input K=V` (instance and TOSCA inputs).
- `--env NAME`, `--var K=V`, `--var-file FILE`, `--profile`, `--region` on every project command
  (`@with_project_flags`; instance operations take `--env` too), and `[SCOPE]...` (a group, `group.stack`, a
  stack, `stack@region`);
  `--profile` and `--region` (`ProfileOption`, `RegionOption`; `Plain…` where there is no project) on every
  other command that calls the cloud.
- In JSON mode everything on stdout is JSON, errors too: `{"ok": false, "errors": [{"file", "line",
  "message", "hint"}]}` with the same exit code as in text mode (`error_envelope`).

This module is imported by every command, so it imports nothing heavy.
"""

from __future__ import annotations

import functools
import inspect
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

if TYPE_CHECKING:
    from rich.console import Console

PROJECT_FILE = "formwright.yaml"
_consoles: dict[str, Console] = {}


def _console(stream) -> Console:
    from rich.console import Console

    # Off a terminal rich would wrap at 80 columns and break `file:line: message` lines apart.
    return Console(stderr=stream is sys.stderr, width=None if stream.isatty() else 240)


def __getattr__(name: str) -> Console:
    """`console` (stdout) and `err_console` (stderr), made on first use: `--help` and `--version` never
    import rich."""
    if name not in ("console", "err_console"):
        raise AttributeError(name)
    if name not in _consoles:
        _consoles[name] = _console(sys.stdout if name == "console" else sys.stderr)
    return _consoles[name]


class Output(str, Enum):  # noqa: UP042 - StrEnum would change str() of the members
    """How a command prints its result."""

    text = "text"
    json = "json"


# ---- shared argument and option definitions -----------------------------------------------------
DirArgument = typer.Argument(
    None,
    metavar="DIR",
    show_default=False,
    autocompletion=lambda ctx, incomplete: complete_dir_or_scope(ctx, incomplete),
    help="The project folder (or its formwright.yaml); default: the nearest folder upward with one.",
)
OutputOption = typer.Option(Output.text, "--output", help="text for people, json for scripts.")
OutOption = typer.Option(None, "--out", "-o", metavar="PATH", help="Write the result to this path.")
StackOption = typer.Option(
    None, "--stack", "-s", metavar="STACK", help="Only this stack (repeatable).",
    autocompletion=lambda ctx, incomplete: complete_stacks(ctx, incomplete),
)
YesOption = typer.Option(False, "--yes", "-y", help="Do not ask for confirmation.")
# adopt and import-sceptre: a project that takes existing stacks over leaves their tags alone unless asked
OwnershipTagOption = typer.Option(False, "--tag", help="Let the next deploy add formwright's ownership tags "
                                  "(a tags-only update of each stack); without it the project says "
                                  "ownership_tags: false.")
TargetOption = typer.Option(
    None, "--target", metavar="local|aws",
    help="local (the embedded local cloud, default) or aws; env FORMWRIGHT_TARGET.",
)
MacrosOption = typer.Option(
    None,
    "--macros",
    metavar="DIR|remote",
    help="A folder of user macros (file name = macro name), or `remote` to "
    "send templates as written with CAPABILITY_AUTO_EXPAND and let CloudFormation expand them.",
)
ParamOption = typer.Option(None, "--param", "-p", metavar="KEY=VALUE",
                           help="A template parameter (repeatable).")
InputOption = typer.Option(None, "--input", "-i", metavar="KEY=VALUE", help="An input value (repeatable).")
RegionsOption = typer.Option(None, "--regions", metavar="REGION,...", help="Regions, comma separated.")
def check_region_flag(value: str | None) -> str | None:
    """--region names a region botocore knows; a typo is bad input (exit 2) naming the nearest ones,
    before any call reaches an endpoint that does not exist."""
    if value is None:
        return value
    from formwright.cloud.regions import is_region, nearest_regions

    if not is_region(value):
        from formwright.errors import InputError

        raise InputError(f"--region {value}: unknown region", hint=nearest_regions(value))
    return value


FORMAT_WORDS = ("json", "yaml", "text")


def misread_out_flag(argv: list[str]) -> str | None:
    """`-o json` (kubectl's, Helm's and Flux's way to ask for a format): formwright's `-o` is a PATH
    everywhere, so the format word is refused with the flag meant, never written as a file named `json`."""
    for i, arg in enumerate(argv):
        if arg == "--":
            break
        value = argv[i + 1] if arg == "-o" and i + 1 < len(argv) else (
            arg.removeprefix("-o=") if arg.startswith("-o=") else arg[2:] if arg.startswith("-o") and
            not arg.startswith("--") and len(arg) > 2 else None)
        if value in FORMAT_WORDS:
            return value
    return None


# --profile and --region: on every command that calls the cloud, with the same meaning everywhere
ProfileOption = typer.Option(None, "--profile", metavar="NAME",
                             help="The AWS profile of the credentials (~/.aws/config), over the project's "
                                  "`profile:` and AWS_PROFILE.")
RegionOption = typer.Option(None, "--region", metavar="REGION", callback=check_region_flag,
                            help="The AWS region, over the project's `region:` (stacks and groups that name "
                                 "their own keep it); default: the project's, AWS_REGION, the profile's.")

# the same flags on commands without a project (expand, sync): nothing of a formwright.yaml to override
PlainProfileOption = typer.Option(None, "--profile", metavar="NAME",
                                  help="The AWS profile of the credentials (~/.aws/config), over "
                                       "AWS_PROFILE.")
PlainRegionOption = typer.Option(None, "--region", metavar="REGION", callback=check_region_flag,
                                 help="The AWS region; default: AWS_REGION, then the profile's region.")


ScopeArgument = typer.Argument(
    None, metavar="[SCOPE]...", show_default=False,
    autocompletion=lambda ctx, incomplete: complete_scopes(ctx, incomplete),
    help="Parts of the project (after DIR): a group (net), a stack in its group (net.app), a stack (app) or "
    "one region's copy (app@eu-west-1); default the whole project.")


@dataclass
class ProjectFlags:
    """The values of --env, --var, --var-file, --profile and --region of the running command."""

    env: str | None = None
    var: list[str] = field(default_factory=list)
    var_file: list[Path] = field(default_factory=list)
    profile: str | None = None
    region: str | None = None

    def load_options(self) -> dict[str, Any]:
        """Keyword arguments of model.project.load_project."""
        from formwright.model.environments import parse_var_flags

        return {"environment": self.env, "variables": parse_var_flags(self.var), "var_files": self.var_file,
                "region": self.region, "profile": self.profile}


project_flags = ProjectFlags()  # one command runs per process: its flags, set by @with_project_flags

_PROJECT_OPTIONS = {
    "env": (str | None, typer.Option(None, "--env", envvar="FORMWRIGHT_ENV", metavar="NAME",
                                     help="The environment whose overlay applies (`environments:` of "
                                          "formwright.yaml, environments/NAME.yaml); stack names become "
                                          "<project>-NAME-<stack>.")),
    "var": (list[str] | None, typer.Option(None, "--var", metavar="K=V",
                                           help="A value for {{ var.K }} (repeatable).")),
    "var_file": (list[Path] | None, typer.Option(None, "--var-file", metavar="FILE",
                                                 help="A YAML file of values for {{ var.K }} (repeatable).")),
    "profile": (str | None, ProfileOption),
    "region": (str | None, RegionOption),
}


def with_project_flags(command: Callable[..., Any]) -> Callable[..., Any]:
    """Give a command --env, --var, --var-file, --profile and --region; read them from `project_flags`."""
    signature = inspect.signature(command)

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        for name in _PROJECT_OPTIONS:
            setattr(project_flags, name, kwargs.pop(name) or ([] if name.startswith("var") else None))
        return command(*args, **kwargs)

    extra = [inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=option, annotation=kind)
             for name, (kind, option) in _PROJECT_OPTIONS.items()]
    wrapper.__signature__ = signature.replace(  # type: ignore[attr-defined]
        parameters=[*signature.parameters.values(), *extra])
    wrapper.__annotations__ = {**command.__annotations__,
                               **{name: kind for name, (kind, _) in _PROJECT_OPTIONS.items()}}
    return wrapper


def is_project_path(word: str) -> bool:
    """True when a command-line word names a project: a folder holding formwright.yaml, a YAML file, or a
    path that is plainly one (`.`, `..`, anything with a `/`). Otherwise it is a scope or a stack name."""
    path = Path(word)
    return (word in (".", "..") or "/" in word or (path / PROJECT_FILE).is_file()
            or (path.is_file() and path.suffix in (".yaml", ".yml")))


def dir_and_scopes(directory: Path | None, scopes: list[str] | None) -> tuple[Path | None, list[str]]:
    """`[DIR] [SCOPE]...` as meant: `formwright deploy net` (no DIR, inside the project) is the scope `net` of
    the project found upward, not a folder named `net`."""
    if directory is not None and not is_project_path(str(directory)):
        return None, [str(directory), *(scopes or [])]
    return directory, list(scopes or [])


def project_dir(directory: Path | None, *, markers: tuple[str, ...] = (PROJECT_FILE,),
                default: Path | None = None) -> Path:
    """The project folder for a `[DIR]` argument: as given, or the nearest folder upward holding one of
    `markers` (from the current folder up to the root, as git finds its repository), else `default`."""
    if directory is not None:
        return directory
    here = Path.cwd()
    for folder in (here, *here.parents):
        if any((folder / marker).exists() for marker in markers):
            return folder
    if default is not None:
        return default
    from formwright.errors import InputError

    raise InputError(
        f"no {PROJECT_FILE} in {here} or any folder above it",
        hint="pass the project folder as DIR, cd into it, or create one with `formwright init`",
    )


# ---- emitting results and errors ----------------------------------------------------------------
_streaming = False  # a line of a stream has been printed: every later answer is one line too


def emit_json(data: Any) -> None:
    """Print `data` as JSON on stdout (the whole result of a command run with --output json); after a
    stream's lines (an interruption or an error ending `events --follow`) one compact line, so that a
    reader of the stream, line by line, can read it too."""
    sys.stdout.write(json.dumps(data, indent=None if _streaming else 2, default=str) + "\n")
    sys.stdout.flush()


def emit_json_line(data: Any) -> None:
    """One compact JSON object on one line of stdout, flushed: the stream of a command that runs on
    (`events --follow`, `sync run`), read line by line as `kubectl get -w -o json` is."""
    global _streaming
    _streaming = True
    sys.stdout.write(json.dumps(data, default=str) + "\n")
    sys.stdout.flush()


def columns(headers: list[str], rows: list[list[str]]) -> str:
    """Rows as plain aligned columns under upper-case headers, as `kubectl get` and `helm list` print
    them: no rich import (a status check starts ~0.05 s faster), greppable lines."""
    table = [[h.upper() for h in headers], *rows]
    widths = [max(len(row[i]) for row in table) for i in range(len(headers))]
    lines = ("   ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)) for row in table)
    return "".join(line.rstrip() + "\n" for line in lines)


def json_requested(argv: list[str]) -> bool:
    """True when the command line asks for `--output json` (read before parsing, so that even a usage
    error is answered in JSON)."""
    for i, arg in enumerate(argv):
        if arg == "--output=json" or (arg == "--output" and i + 1 < len(argv) and argv[i + 1] == "json"):
            return True
    return False


def error_entry(message: str, *, file: str | None = None, line: int | None = None,
                hint: str | None = None) -> dict[str, Any]:
    """One error of the JSON envelope."""
    return {"file": file, "line": line, "message": message, "hint": hint}


def error_envelope(errors: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    """The JSON answer of a command that failed: `{"ok": false, "errors": [...]}` (plus `extra`)."""
    return {"ok": False, "errors": errors, **extra}


def error_of(err: Exception) -> dict[str, Any]:
    """A FormwrightError (or anything with file/line/hint attributes) as an envelope entry."""
    message = getattr(err, "message", None) or str(err)
    where = getattr(err, "where", None)
    file = getattr(err, "file", None)
    if where and not file:
        message = f"{where}: {message}"
    return error_entry(message, file=file, line=getattr(err, "line", None), hint=getattr(err, "hint", None))


# ---- shell completion of names ------------------------------------------------------------------
def _completion_dir(ctx: typer.Context) -> Path | None:
    """The project folder a command line being completed points at (its DIR, or the one upward)."""
    given = (ctx.params or {}).get("directory") or (ctx.params or {}).get("project")
    if not given:
        # `deploy DIR -s <TAB>`: the option still waiting for its value stops click's parse, and DIR is
        # among the words left unparsed
        given = next((a for a in ctx.args if not a.startswith("-") and Path(a).exists()), None)
    try:
        return project_dir(Path(given) if given else None)
    except Exception:  # noqa: BLE001 - completion never fails loudly
        return None


def _names(ctx: typer.Context, *, groups: bool) -> list[str]:
    """The project's stack names (and group names), or nothing for a broken or missing project."""
    folder = _completion_dir(ctx)
    if folder is None:
        return []
    try:
        from formwright.model.project import load_project

        project = load_project(folder)
    except Exception:  # noqa: BLE001 - a broken project completes nothing
        return []
    return [*(project.groups if groups else ()), *project.stacks]


def complete_stacks(ctx: typer.Context, incomplete: str) -> list[str]:
    """Stack names of the project, for `-s/--stack` completion."""
    return [n for n in _names(ctx, groups=False) if n.startswith(incomplete)]


def complete_scopes(ctx: typer.Context, incomplete: str) -> list[str]:
    """Group and stack names of the project, for SCOPE completion."""
    return [n for n in dict.fromkeys(_names(ctx, groups=True)) if n.startswith(incomplete)]


def complete_dir_or_scope(ctx: typer.Context, incomplete: str) -> list[str]:
    """Folders for DIR (with their `/`, so that `dir_and_scopes` reads them as DIR), and inside a project
    its scopes too, which may come without DIR (`formwright deploy app`)."""
    prefix = "./" if incomplete.startswith("./") else ""
    typed = incomplete.removeprefix("./")
    base = Path(typed) if typed.endswith("/") else Path(typed).parent
    try:  # hidden folders only when asked for, as shells complete them
        folders = sorted(f"{prefix}{p}/" for p in base.iterdir()
                         if p.is_dir() and str(p).startswith(typed)
                         and (not p.name.startswith(".") or Path(typed).name.startswith(".")))
    except OSError:
        folders = []
    takes_scopes = any(p.name == "scope" for p in ctx.command.params)
    return folders + (complete_scopes(ctx, incomplete) if takes_scopes else [])


def complete_instances(ctx: typer.Context, incomplete: str) -> list[str]:
    """Instance names kept in the project's journal, for instance NAME completion."""
    folder = _completion_dir(ctx)
    if folder is None:
        return []
    try:
        from formwright.lifecycle.operations import Lifecycle

        lifecycle = Lifecycle(folder)
        try:
            names = [i.name for i in lifecycle.instances()]
        finally:
            lifecycle.close()
    except Exception:  # noqa: BLE001 - no journal yet completes nothing
        return []
    return [n for n in names if n.startswith(incomplete)]
