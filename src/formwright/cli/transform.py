"""`formwright transform tosca SRC -o OUT`: a TOSCA service template or CSAR → CloudFormation artifact."""

from __future__ import annotations

import copy
from pathlib import Path

import typer
from rich.markup import escape

from formwright.cli.common import Output, OutputOption, check_region_flag, console, emit_json, err_console
from formwright.errors import InputError

# `-o` names the output folder here (as in `formwright transform tosca SRC -o OUT`), so the shared
# --output option keeps only its long name.
FormatOption = copy.copy(OutputOption)
FormatOption.param_decls = ("--output",)


def tosca(
    src: Path = typer.Argument(..., help="A service template (.yaml), a folder, or a CSAR (.csar/.zip)."),
    out: Path = typer.Option(None, "--out", "-o", metavar="PATH",
                             help="Folder for the artifact (default: ./<name>-cfn)."),
    inputs: list[str] = typer.Option([], "--input", "-i", metavar="KEY=VALUE",
                                     help="A TOSCA input (repeatable)."),
    region: str = typer.Option("us-east-1", "--region", metavar="REGION", callback=check_region_flag,
                               help="Region the deploy scripts default to."),
    strict: bool = typer.Option(False, "--strict", help="Make the warnings (what TOSCAna tolerated) errors."),
    force: bool = typer.Option(False, "--force", help="Replace OUT when it holds a previous artifact."),
    output: Output = FormatOption,
) -> None:
    """Transform a TOSCA topology into a CloudFormation template, files and deploy scripts.

    OUT must be new, empty, or (with --force) a folder this command wrote before; nothing else in
    it is ever replaced. Deviations TOSCAna accepted (an unknown property, an attribute the type does
    not declare) are warnings with file:line; --strict makes them errors."""
    from formwright.tosca.inputs import parse_assignments
    from formwright.transform.cloudformation import transform_tosca

    target = out if out is not None else Path(f"{src.stem or 'tosca'}-cfn")
    if target.resolve() == src.resolve() or src.resolve().is_relative_to(target.resolve()):
        raise InputError("the output folder would replace the source", file=str(target))
    result = transform_tosca(src, target, inputs=parse_assignments(inputs), region=region, strict=strict,
                             force=force)
    for problem in result.warnings:
        err_console.print(f"[yellow]warning:[/] {escape(str(problem))}", highlight=False, soft_wrap=True)
    template = result.template
    summary = {
        "ok": True,
        "out": str(result.out),
        "template": str(result.template_path),
        "resources": len(template.get("Resources", {})),
        "parameters": list(template.get("Parameters", {})),
        "outputs": list(template.get("Outputs", {})),
        "warnings": [str(p) for p in result.warnings],
    }
    if output == Output.json:
        emit_json(summary)
        return
    console.print(f"wrote {summary['template']} ({summary['resources']} resources)")
    # OUT is an artifact, not a project (no formwright.yaml there): name the two ways that work from here
    console.print(f"deploy it with {Path(str(summary['out'])) / 'scripts' / 'deploy.sh'}, or from a "
                  f"formwright project whose stack names the source (stacks: {{app: {{tosca: {src}}}}}) with "
                  "formwright deploy", highlight=False, soft_wrap=True)


def register(app: typer.Typer) -> None:
    """Add the `transform` command group (with `tosca`) to the CLI application."""
    group = typer.Typer(help="Transform other descriptions into CloudFormation.", no_args_is_help=True)
    group.command("tosca")(tosca)
    app.add_typer(group, name="transform")
