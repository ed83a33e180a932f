"""`formwright expand TEMPLATE`: run a template's macros locally, Original → Processed."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import typer

from formwright import sandbox
from formwright.cli.common import Output, TargetOption, emit_json
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


def project_macros(template_path: Path) -> tuple[dict[str, str], Path] | None:
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
            return {str(k): str(v) for k, v in macros.items()}, folder
    return None


class _LazyS3:
    """The target's S3 client, made only if an AWS::Include reads from S3."""

    def __init__(self, target: str | None, region: str | None) -> None:
        self._args = (target, region)
        self._client: Any = None

    def __getattr__(self, name: str) -> Any:
        if self._client is None:
            from formwright.cloud.session import resolve_target

            self._client = resolve_target(*self._args).client("s3")
        return getattr(self._client, name)


def register(app: typer.Typer) -> None:
    """Add the `expand` command to `app`."""

    @app.command("expand")
    def expand_command(
        template: Path = typer.Argument(..., help="The template (YAML or JSON)."),
        param: list[str] = typer.Option(
            [], "--param", "-p", help="A parameter value, KEY=VALUE (repeatable)."
        ),
        macros: str = typer.Option(None, "--macros", help="A folder of macros (file name = macro name)."),
        fmt: str = typer.Option(
            "json", "--format", "-f", help="json (CloudFormation's Processed form) or yaml."
        ),
        out: Path = typer.Option(None, "--out", "-o", help="Write the processed template here."),
        output: Output = typer.Option(
            Output.text, "--output", help="text: the template; json: with macros_run."
        ),
        target: str = TargetOption,
        region: str = typer.Option(None, "--region", help="The region macros see (default: the target's)."),
    ) -> None:
        """Run the template's macros locally and print the processed template."""
        if fmt not in ("json", "yaml"):
            raise InputError(f"--format {fmt} is not json or yaml", hint="use --format json or --format yaml")
        if macros == "remote":
            raise InputError("--macros remote leaves expansion to CloudFormation; expand runs macros locally",
                             hint="give a folder of macros, or leave --macros out")
        sandbox.anchor(template.resolve().parent)
        document = load(template)
        project = project_macros(template)
        registry = MacroRegistry.build(
            project_macros=project[0] if project else None,
            base_dir=project[1] if project else template.parent,
            macros_dir=Path(macros) if macros else None,
        )
        registry.register_template_macros(document, template.parent)
        expansion = run(document, registry=registry, parameter_values=parse_params(param),
                        region=region or "us-east-1", s3_client=_LazyS3(target, region), file=str(template),
                        base_dir=template.parent)
        processed = plain(expansion.template)
        text = dump(processed, fmt)
        if out is not None:
            out.write_text(text + "\n", encoding="utf-8")
        if output == Output.json:
            emit_json({"template": processed, "macros_run": expansion.macros_run, "size": expansion.size,
                       "needs_upload": (expansion.size or 0) > TEMPLATE_BODY_LIMIT,
                       "file": str(out) if out else None})
        elif out is None:
            sys.stdout.write(text + "\n")
