"""`formwright expand TEMPLATE`: run a template's macros locally, Original → Processed."""

from __future__ import annotations

import math
import sys
from pathlib import Path
from typing import Any

import typer

from formwright import sandbox
from formwright.cli.common import (
    Output,
    ParamOption,
    PlainProfileOption,
    TargetOption,
    check_region_flag,
    emit_json,
)
from formwright.errors import InputError
from formwright.macros import MacroRegistry, run
from formwright.template import TEMPLATE_BODY_LIMIT, dump, load, plain

PROJECT_FILE = "formwright.yaml"


def parse_params(items: list[str]) -> dict[str, str]:
    """`K=V` pairs from --param flags."""
    values: dict[str, str] = {}
    for item in items:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise InputError(f"--param {item!r} is not KEY=VALUE", hint="write --param Name=value")
        values[key] = value
    return values


def project_macros(template_path: Path) -> tuple[dict[str, Any], Path] | None:
    """`macros:` of the formwright.yaml next to the template or in a folder above it."""
    for folder in [template_path.resolve().parent, *template_path.resolve().parents]:
        candidate = folder / PROJECT_FILE
        if candidate.is_file():
            from formwright.model.project import read_project_file

            project = read_project_file(candidate)  # its own loader: `!ref` is no template tag
            if not isinstance(project, dict):
                return None
            macros = project.get("macros") or {}
            if not isinstance(macros, dict):
                raise InputError("macros must map macro names to paths", file=str(candidate),
                                 line=project.line_of("macros") if hasattr(project, "line_of") else None,
                                 hint="macros: {Count: macros/count.py}")
            return {str(k): (dict(v) if isinstance(v, dict) else str(v)) for k, v in macros.items()}, folder
    return None


def non_finite_number(value: Any, path: str = "") -> str | None:
    """The path of the first NaN or infinite number (a macro's JSON may carry one), which a template can't."""
    stack: list[tuple[Any, str]] = [(value, path)]
    while stack:
        item, where = stack.pop()
        if isinstance(item, float) and not math.isfinite(item):
            return where or "/"
        if isinstance(item, dict):
            stack.extend((v, f"{where}/{k}") for k, v in item.items())
        elif isinstance(item, list):
            stack.extend((v, f"{where}/{i}") for i, v in enumerate(item))
    return None


def handler_logs(registry: MacroRegistry) -> dict[str, tuple[Path, int]]:
    """Every handler macro's log file and its size now: what a run appends is what it printed."""
    logs: dict[str, tuple[Path, int]] = {}
    for name in registry.names():
        log = getattr(registry.get(name), "log", None)
        if isinstance(log, Path):
            logs[name] = (log, log.stat().st_size if log.is_file() else 0)
    return logs


def show_logs(logs: dict[str, tuple[Path, int]]) -> None:
    """Print to stderr what each macro's handler logged in this run (stdout carries only the template)."""
    from formwright.macros.isolation import read_log

    for name, (log, start) in logs.items():
        text = read_log(log, start)
        if text:
            sys.stderr.write(f"--- macro {name} ({log})\n{text}")


def _lazy_s3(target: str | None, region: str | None, profile: str | None) -> Any:
    """The target's S3 client, made only if an AWS::Include reads from S3."""
    from formwright.cloud.session import LazyClient, resolve_target

    return LazyClient(lambda: resolve_target(target, region, profile=profile).client("s3"))


def write_out(out: Path, text: str) -> None:
    """Write -o's file: its folder must exist and the path must not be a folder (exit 2 otherwise)."""
    if out.is_dir():
        raise InputError(f"-o {out}: a folder", hint=f"name a file, e.g. -o {out / 'processed.json'}")
    if not out.parent.is_dir():
        raise InputError(f"-o {out}: no folder {out.parent}", hint=f"create it first: mkdir -p {out.parent}")
    try:
        out.write_text(text, encoding="utf-8")
    except OSError as err:
        raise InputError(f"-o {out}: cannot write: {err.strerror or err}") from None


def register(app: typer.Typer) -> None:
    """Add the `expand` command to `app`."""

    @app.command("expand")
    def expand_command(
        template: Path = typer.Argument(..., help="The template (YAML or JSON)."),
        param: list[str] | None = ParamOption,
        macros: str = typer.Option(None, "--macros", metavar="DIR",
                                   help="A folder of macros (file name = macro name)."),
        # no -f: that is --follow (events), as in `tail -f` and `kubectl logs -f`
        fmt: str = typer.Option(
            "json", "--format", metavar="json|yaml", help="json (CloudFormation's Processed form) or yaml."
        ),
        out: Path = typer.Option(None, "--out", "-o", metavar="PATH",
                                 help="Write the processed template here."),
        output: Output = typer.Option(
            Output.text, "--output", help="text: the template; json: with macros_run."
        ),
        target: str = TargetOption,
        region: str | None = typer.Option(None, "--region", metavar="REGION",
                                          callback=check_region_flag,
                                          help="The region macros see and S3 includes are read in "
                                               "(default: AWS_REGION, then the profile's)."),
        profile: str | None = PlainProfileOption,
        verbose: bool = typer.Option(
            False, "--verbose", "-v", help="Show on stderr what macro handlers printed (their log)."
        ),
    ) -> None:
        """Run the template's macros locally and print the processed template."""
        if fmt not in ("json", "yaml"):
            raise InputError(f"--format {fmt} is not json or yaml", hint="use --format json or --format yaml")
        if macros == "remote":
            raise InputError("--macros remote leaves expansion to CloudFormation; expand runs macros locally",
                             hint="give a folder of macros, or leave --macros out")
        if region is None:  # as every cloud command: AWS_REGION, then the profile's
            from formwright.cloud.session import default_region

            region = default_region(profile)
        sandbox.anchor(template.resolve().parent)
        document = load(template)
        project = project_macros(template)
        registry = MacroRegistry.build(
            project_macros=project[0] if project else None,
            base_dir=project[1] if project else template.parent,
            macros_dir=Path(macros) if macros else None,
        )
        registry.register_template_macros(document, template.parent)
        logs = handler_logs(registry)
        try:
            expansion = run(document, registry=registry, parameter_values=parse_params(param or []),
                            region=region, s3_client=_lazy_s3(target, region, profile),
                            file=str(template), base_dir=template.parent)
        finally:
            if verbose:
                show_logs(logs)
        processed = plain(expansion.template)
        where = non_finite_number(processed)
        if where is not None:
            raise InputError(f"{where} is not a finite number (NaN or infinite), which a CloudFormation "
                             "template can't hold", file=str(template),
                             hint="make the macro or value give a finite number, or a string")
        text = dump(processed, fmt)
        if out is not None:
            write_out(out, text + "\n")
        if output == Output.json:
            emit_json({"ok": True, "template": processed, "macros_run": expansion.macros_run,
                       "size": expansion.size,
                       "needs_upload": (expansion.size or 0) > TEMPLATE_BODY_LIMIT,
                       "file": str(out) if out else None})
        elif out is None:
            sys.stdout.write(text + "\n")
