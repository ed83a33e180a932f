"""`formwright transform tosca SRC -o OUT`: a TOSCA service template or CSAR → CloudFormation artifact."""

from __future__ import annotations

import copy
from pathlib import Path

import typer

from formwright.cli.common import Output, OutputOption, console, emit_json
from formwright.errors import InputError

# `-o` names the output folder here (as in `formwright transform tosca SRC -o OUT`), so the shared
# --output option keeps only its long name.
FormatOption = copy.copy(OutputOption)
FormatOption.param_decls = ("--output",)


def tosca(
    src: Path = typer.Argument(..., help="A service template (.yaml), a folder, or a CSAR (.csar/.zip)."),
    out: Path = typer.Option(None, "-o", "--out", help="Folder for the artifact (default: ./<name>-cfn)."),
    inputs: list[str] = typer.Option([], "--input", "-i", help="A TOSCA input as KEY=VALUE; repeatable."),
    region: str = typer.Option("us-east-1", "--region", help="Region the deploy scripts default to."),
    output: Output = FormatOption,
) -> None:
    """Transform a TOSCA topology into a CloudFormation template, files and deploy scripts."""
    from formwright.tosca.inputs import parse_assignments
    from formwright.transform.cloudformation import transform_tosca

    target = out if out is not None else Path(f"{src.stem or 'tosca'}-cfn")
    if target.resolve() == src.resolve() or src.resolve().is_relative_to(target.resolve()):
        raise InputError("the output folder would replace the source", file=str(target))
    result = transform_tosca(src, target, inputs=parse_assignments(inputs), region=region)
    template = result.template
    summary = {
        "out": str(result.out),
        "template": str(result.template_path),
        "resources": len(template.get("Resources", {})),
        "parameters": list(template.get("Parameters", {})),
        "outputs": list(template.get("Outputs", {})),
    }
    if output == Output.json:
        emit_json(summary)
        return
    console.print(f"wrote {summary['template']} ({summary['resources']} resources)")
    console.print(f"deploy with {Path(str(summary['out'])) / 'scripts' / 'deploy.sh'} or formwright deploy")


def register(app: typer.Typer) -> None:
    """Add the `transform` command group (with `tosca`) to the CLI application."""
    group = typer.Typer(help="Transform other descriptions into CloudFormation.", no_args_is_help=True)
    group.command("tosca")(tosca)
    app.add_typer(group, name="transform")
