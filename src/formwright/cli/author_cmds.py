"""Project commands that never call the cloud: init, validate, build, graph."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from formwright.cli.common import (
    DirArgument,
    MacrosOption,
    OutOption,
    Output,
    OutputOption,
    console,
    emit_json,
    project_dir,
    with_project_flags,
)
from formwright.cli.project import macro_mode, open_project
from formwright.errors import CloudError, InputError

if TYPE_CHECKING:
    from formwright.model.project import Project

STARTER_PROJECT = """\
name: {name}
region: us-east-1
tags:
  project: {name}
stacks:
  network:
    template: templates/network.yaml
  app:
    template: templates/app.yaml
    parameters:
      VpcId: !ref network.outputs.VpcId
"""
STARTER_NETWORK = """\
AWSTemplateFormatVersion: "2010-09-09"
Description: A VPC for the app
Resources:
  Vpc:
    Type: AWS::EC2::VPC
    Properties:
      CidrBlock: 10.0.0.0/16
Outputs:
  VpcId:
    Value: !Ref Vpc
"""
STARTER_APP = """\
AWSTemplateFormatVersion: "2010-09-09"
Description: The app's security group and queue
Parameters:
  VpcId:
    Type: String
Resources:
  AppSecurityGroup:
    Type: AWS::EC2::SecurityGroup
    Properties:
      GroupDescription: app
      VpcId: !Ref VpcId
  Jobs:
    Type: AWS::SQS::Queue
Outputs:
  QueueUrl:
    Value: !Ref Jobs
"""
# .formwright/ holds the journal, build output and instance secrets: never commit it
GITIGNORE_LINE = ".formwright/"


def write_gitignore(directory: Path) -> None:
    """Add `.formwright/` to the folder's .gitignore (created if missing, kept if already listed)."""
    path = directory / ".gitignore"
    text = path.read_text(encoding="utf-8") if path.exists() else ""
    if GITIGNORE_LINE in (line.strip() for line in text.splitlines()):
        return
    prefix = "" if not text or text.endswith("\n") else "\n"
    path.write_text(f"{text}{prefix}{GITIGNORE_LINE}\n", encoding="utf-8")


def project_name_for(directory: Path, name: str | None) -> str:
    """The new project's name: --name as given (refused when no stack could be named after it), else the
    folder's name made fit (`bad name` → `bad-name`), as stack names are `<project>-<stack>`."""
    import re

    from formwright.model.keys import STACK_NAME

    fitted = re.sub(r"[^-A-Za-z0-9]+", "-", name or directory.resolve().name).strip("-")
    fitted = fitted if fitted[:1].isalpha() else f"p-{fitted}".rstrip("-")
    if name is not None and not STACK_NAME.fullmatch(name):
        raise InputError(f"--name '{name}': stack names are <project>-<stack>, and CloudFormation takes only "
                         "letters, digits and '-' starting with a letter", hint=f"--name {fitted[:100]}")
    return fitted[:100]


def register(app: typer.Typer) -> None:
    """Add init, validate, build and graph to the application."""

    @app.command()
    def init(directory: Path = typer.Argument(Path("."), metavar="DIR",
                                             help="Folder for the new project (default: here)."),
             name: str | None = typer.Option(None, "--name",
                                             help="Project name (default: the folder's name)."),
             output: Output = OutputOption) -> None:
        """Create a new project from a starter: formwright.yaml, two templates and a .gitignore."""
        target = directory / "formwright.yaml"
        if target.exists():
            raise InputError("a project already exists here", file=str(target), hint="pick another folder")
        project_name = project_name_for(directory, name)
        starters = {target: STARTER_PROJECT.format(name=project_name),
                    directory / "templates" / "network.yaml": STARTER_NETWORK,
                    directory / "templates" / "app.yaml": STARTER_APP}
        for path in starters:  # a file of the user's is never overwritten: check all before writing any
            if path.exists():
                raise InputError("init would overwrite this file; nothing was written", file=str(path),
                                 hint="move it away, or init another folder")
        (directory / "templates").mkdir(parents=True, exist_ok=True)
        for path, text in starters.items():
            path.write_text(text, encoding="utf-8")
        write_gitignore(directory)
        if output is Output.json:
            emit_json({"ok": True, "project": str(target), "name": project_name})
        else:
            import shlex

            folder = shlex.quote(str(directory))
            console.print(f"created {target} (project {project_name}); next: formwright validate {folder} && "
                          f"formwright deploy {folder}", highlight=False)

    @app.command()
    @with_project_flags
    def validate(
        directory: Path | None = DirArgument,
        output: Output = OutputOption,
        macros: str | None = MacrosOption,
        lint_templates: bool = typer.Option(True, "--lint/--no-lint", help="Run cfn-lint (default: on)."),
    ) -> None:
        """Check the project as deploy would, without cloud calls: load it, expand and lint each template, \
check references, cycles and parameters. Exit 2 on errors."""
        from formwright.cli.validation import run_validate

        run_validate(project_dir(directory), output=output, macros=macros, lint_templates=lint_templates)

    @app.command()
    @with_project_flags
    def build(directory: Path | None = DirArgument, output: Output = OutputOption,
              macros: str | None = MacrosOption) -> None:
        """Write each stack's original, packaged and processed template to .formwright/build/[<env>/]<stack>/,
        its artifacts to .formwright/build/[<env>/]artifacts/ and their manifest (path, sha256, size, bucket,
        key) to artifacts.json. Offline: nothing is uploaded (deploy and plan upload what they need)."""
        from formwright.engine.stack import prepare_stacks
        from formwright.packaging.build import MANIFEST, write_packaged

        project = open_project(directory)
        stacks = prepare_stacks(project, **macro_mode(macros))
        written = {}
        for name, stack in stacks.items():
            template, _ = stack.processed(stack.resolve_parameters({}, partial=True),
                                          region=stack.config.target.region or "us-east-1")
            written[name] = str(stack.write_build(template))
        manifest = write_packaged(project.build_dir, stacks)
        if output is Output.json:
            emit_json({"ok": True, "build": written, "manifest": str(project.build_dir / MANIFEST),
                       "artifacts": {n: s["artifacts"] for n, s in manifest["stacks"].items()}})
        else:
            for name, path in written.items():
                count = len(manifest["stacks"].get(name, {}).get("artifacts", []))
                console.print(f"{name}: {path}" + (f" ({count} artifact(s))" if count else ""))
            console.print(f"artifacts: {project.build_dir / MANIFEST}")

    @app.command()
    @with_project_flags
    def graph(
        directory: Path | None = DirArgument,
        fmt: str = typer.Option("dot", "--format", metavar="dot|svg|png",
                                help="dot, svg or png (svg/png need Graphviz)."),
        out: Path | None = OutOption,
        output: Output = OutputOption,
    ) -> None:
        """The stacks' dependency graph as DOT (or SVG/PNG through Graphviz's `dot`); \
--output json gives nodes and edges."""
        project = open_project(directory, any_environment=True)
        if output is Output.json:
            emit_json({"ok": True, **graph_data(project)})
            return
        dot = dot_graph(project)
        if fmt == "dot":
            if out:
                out.write_text(dot)
            else:
                sys.stdout.write(dot)
            return
        if fmt not in ("svg", "png"):
            raise InputError(f"unknown format '{fmt}'", hint="use dot, svg or png")
        if shutil.which("dot") is None:
            raise InputError(
                f"--format {fmt} needs Graphviz's `dot`", hint="install graphviz, or use --format dot"
            )
        rendered = subprocess.run(["dot", f"-T{fmt}"], input=dot.encode(), capture_output=True, timeout=60,
                                  check=False)
        if rendered.returncode != 0:
            raise CloudError(f"dot failed: {rendered.stderr.decode(errors='replace').strip()}")
        if out:
            out.write_bytes(rendered.stdout)
        else:
            sys.stdout.buffer.write(rendered.stdout)


def graph_data(project: Project) -> dict[str, Any]:
    """Nodes (stack, cloud name) and edges (from a dependency to its dependent)."""
    nodes = [{"name": name, "stack_name": stack.stack_name} for name, stack in project.stacks.items()]
    edges = [{"from": dep, "to": name} for name, stack in project.stacks.items()
             for dep in sorted(stack.dependencies())]
    return {"nodes": nodes, "edges": edges}


def dot_graph(project: Project) -> str:
    """DOT text: a node per stack, an edge from each dependency to its dependent."""
    data = graph_data(project)
    lines = [f'digraph "{project.name}" {{', "  rankdir=LR;", "  node [shape=box];"]
    for node in data["nodes"]:
        lines.append(f'  "{node["name"]}" [label="{node["name"]}\\n{node["stack_name"]}"];')
    for edge in data["edges"]:
        lines.append(f'  "{edge["from"]}" -> "{edge["to"]}";')
    lines.append("}")
    return "\n".join(lines) + "\n"
