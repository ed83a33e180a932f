"""Project commands: init, validate, build, plan, deploy, delete, status, outputs, diff, graph."""

from __future__ import annotations

import difflib
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import typer
from rich.markup import escape
from rich.table import Table

from formwright.cli.common import Output, OutputOption, TargetOption, console, emit_json
from formwright.cli.progress import Progress
from formwright.cloud.session import Target, resolve_target
from formwright.engine.cfn import CallCounter, CloudFormation, StackInfo
from formwright.engine.group import StackGroup
from formwright.engine.results import StackPlan, StackResult, exit_code_of
from formwright.engine.stack import Stack, check_output_references, prepare_stacks
from formwright.errors import CloudError, InputError
from formwright.model.project import Project, load_project
from formwright.template import plain
from formwright.template.lint import lint

DirArgument = typer.Argument(Path("."), help="The project folder (with formwright.yaml) or the file itself.")
StackOption = typer.Option(
    None, "--stack", "-s", help="Only this stack (repeatable); deploy adds its dependencies."
)
MacrosOption = typer.Option(
    None,
    "--macros",
    help="A folder of user macros (file name = macro name), or `remote` to "
    "send templates as written with CAPABILITY_AUTO_EXPAND and let CloudFormation expand them.",
)


def macro_mode(value: str | None) -> dict[str, Any]:
    """prepare_stacks arguments for the --macros flag."""
    if value is None:
        return {}
    if value == "remote":
        return {"remote_macros": True}
    folder = Path(value)
    if not folder.is_dir():
        raise InputError(f"--macros {value}: no such folder", hint="give a folder of macros, or `remote`")
    return {"macros_dir": folder}


# ---- shared steps -------------------------------------------------------------------------------
def open_project(
    directory: Path, stacks: list[str] | None = None, *, with_dependencies: bool = True
) -> Project:
    """Load the project and check --stack names."""
    project = load_project(directory)
    for name in stacks or []:
        if name not in project.stacks:
            raise InputError(f"unknown stack '{name}'", file=project.file,
                             hint=f"stacks: {', '.join(project.stacks)}")
    return project


def selection(project: Project, stacks: list[str] | None, *, dependencies: bool = False,
              dependents: bool = False) -> list[str] | None:
    """The selected stacks, grown by their dependencies (deploy) or dependents (delete)."""
    if not stacks:
        return None
    chosen, todo = set(), list(stacks)
    down = project.dependents()
    while todo:
        name = todo.pop()
        if name in chosen:
            continue
        chosen.add(name)
        if dependencies:
            todo.extend(project.stacks[name].dependencies())
        if dependents:
            todo.extend(down.get(name, ()))
    return sorted(chosen)


def connect(project: Project, target_flag: str | None) -> Target:
    """The target for this project (its region)."""
    return resolve_target(target_flag, project.region)


def make_group(project: Project, target: Target, only: list[str] | None, max_concurrency: int,
               progress: Any, counter: CallCounter | None = None, macros: str | None = None) -> StackGroup:
    """Stacks prepared for the target, on their DAG."""
    stacks = prepare_stacks(project, target=target, only=only, **macro_mode(macros))
    return StackGroup(
        project, stacks, target, max_concurrency=max_concurrency, progress=progress, counter=counter
    )


def deployed(project: Project, target: Target) -> dict[str, StackInfo | None]:
    """What describe_stacks says of every project stack, in dependency order (None: not deployed)."""
    cfn = CloudFormation(target.client("cloudformation"))
    return {name: cfn.describe(project.stacks[name].stack_name) for name in project.order()}


def confirm(question: str, yes: bool, output: Output = Output.text) -> None:
    """Ask unless --yes; refuse to guess when nobody can answer (or when stdout is JSON for a script)."""
    if yes:
        return
    if output is Output.json:
        raise InputError(
            f"{question} needs confirmation, and --output json cannot ask", hint="add --yes (-y)"
        )
    if not sys.stdin.isatty():
        raise InputError(f"{question} needs confirmation", hint="pass --yes (-y) when not at a terminal")
    if not typer.confirm(question, default=False):
        raise typer.Exit(1)


# ---- rendering ----------------------------------------------------------------------------------
def plan_table(plan: StackPlan) -> Table:
    """`+ add`, `~ modify (replacement …)`, `- remove` rows for one stack, then parameters and tags."""
    table = Table(box=None, show_header=False, pad_edge=False)
    for _ in range(4):
        table.add_column()
    colors = {"+": "green", "~": "yellow", "-": "red"}
    for change in plan.resources:
        extra = f"(replacement {change.replacement})" if change.action == "Modify" else ""
        c = colors.get(change.symbol, "white")
        table.add_row(f"[{c}]{change.symbol} {change.action.lower()}[/]", escape(change.logical_id),
                      escape(change.resource_type), extra)
    for title, values in (("parameter", plan.parameters), ("tag", plan.tags)):
        for v in values:
            symbol = "+" if v.old is None else "-" if v.new is None else "~"
            shown = f"{v.old if v.old is not None else ''} -> {v.new if v.new is not None else ''}"
            table.add_row(f"[{colors[symbol]}]{symbol} {title}[/]", escape(v.key), escape(shown), "")
    return table


def print_plans(plans: dict[str, StackPlan], order: list[str]) -> None:
    """Every stack's plan, in dependency order."""
    for name in order:
        plan = plans.get(name)
        if plan is None:
            continue
        head = f"[bold]{escape(name)}[/] ({escape(plan.stack_name)}): {plan.kind}"
        if plan.note:
            head += f" [dim]- {escape(plan.note)}[/]"
        console.print(head)
        if plan.kind not in ("no changes", "unchanged"):
            console.print(plan_table(plan))


def summary_table(results: dict[str, StackResult], order: list[str]) -> Table:
    """stack, outcome, status, seconds, error."""
    table = Table(title="summary", title_justify="left")
    for column in ("stack", "outcome", "status", "time", "error"):
        table.add_column(column)
    for name in order:
        r = results.get(name)
        if r is None:
            continue
        style = "red" if not r.ok else "green"
        table.add_row(
            escape(name), f"[{style}]{r.outcome}[/]", r.status, f"{r.elapsed:.1f}s", escape(r.error or "")
        )
    return table


def outputs_table(outputs: dict[str, dict[str, str]], order: list[str]) -> Table:
    """stack, output key, value."""
    table = Table(title="outputs", title_justify="left")
    for column in ("stack", "output", "value"):
        table.add_column(column)
    for name in order:
        for key, value in sorted(outputs.get(name, {}).items()):
            table.add_row(escape(name), escape(key), escape(value))
    return table


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


# ---- commands -----------------------------------------------------------------------------------
def register(app: typer.Typer) -> None:
    """Add the project commands to the application."""

    @app.command()
    def init(directory: Path = typer.Argument(Path("."), help="Folder for the new project."),
             name: str | None = typer.Option(None, help="Project name (default: the folder's name)."),
             output: Output = OutputOption) -> None:
        """Create a new project from a starter: formwright.yaml and two templates."""
        directory.mkdir(parents=True, exist_ok=True)
        target = directory / "formwright.yaml"
        if target.exists():
            raise InputError("a project already exists here", file=str(target), hint="pick another folder")
        project_name = name or directory.resolve().name
        (directory / "templates").mkdir(exist_ok=True)
        target.write_text(STARTER_PROJECT.format(name=project_name))
        (directory / "templates" / "network.yaml").write_text(STARTER_NETWORK)
        (directory / "templates" / "app.yaml").write_text(STARTER_APP)
        if output is Output.json:
            emit_json({"project": str(target), "name": project_name})
        else:
            console.print(
                f"created {target}; next: formwright validate {directory} && formwright deploy {directory}"
            )

    @app.command()
    def validate(
        directory: Path = DirArgument,
        output: Output = OutputOption,
        macros: str | None = MacrosOption,
        lint_templates: bool = typer.Option(True, "--lint/--no-lint", help="Run cfn-lint."),
    ) -> None:
        """Load the project, expand templates, lint them; check references, cycles, parameters. \
No cloud calls."""
        from formwright.lifecycle.manifest import load_for_validation

        project = load_for_validation(directory)
        stacks = prepare_stacks(project, **macro_mode(macros))
        check_output_references(stacks, project)
        findings = []
        for stack in stacks.values():
            template, _ = stack.processed(stack.resolve_parameters({}, partial=True), region=project.region or
                                          "us-east-1")
            if lint_templates:
                findings.extend(_lint_stack(stack, template, project))
        errors = [f for f in findings if f.level == "error"]
        if output is Output.json:
            emit_json({"project": project.name, "stacks": list(stacks), "valid": not errors,
                       "findings": [f.__dict__ for f in findings]})
        else:
            for finding in findings:
                print(str(finding), file=sys.stderr if finding.level == "error" else sys.stdout)
            console.print(f"{project.name}: {len(stacks)} stacks, {len(errors)} errors, "
                          f"{len(findings) - len(errors)} warnings")
        if errors:
            raise typer.Exit(2)

    @app.command()
    def build(directory: Path = DirArgument, output: Output = OutputOption,
              macros: str | None = MacrosOption) -> None:
        """Write each stack's original and processed template to .formwright/build/<stack>/."""
        project = load_project(directory)
        stacks = prepare_stacks(project, **macro_mode(macros))
        written = {}
        for name, stack in stacks.items():
            template, _ = stack.processed(stack.resolve_parameters({}, partial=True), region=project.region or
                                          "us-east-1")
            written[name] = str(stack.write_build(template))
        if output is Output.json:
            emit_json({"build": written})
        else:
            for name, path in written.items():
                console.print(f"{name}: {path}")

    @app.command()
    def plan(
        directory: Path = DirArgument,
        stack: list[str] | None = StackOption,
        keep: bool = typer.Option(False, "--keep", help="Keep the change sets (default: remove them)."),
        target: str | None = TargetOption,
        output: Output = OutputOption,
        macros: str | None = MacrosOption,
        max_concurrency: int = typer.Option(8, "--max-concurrency", help="Stacks planned at once."),
    ) -> None:
        """Show what deploy would change, per stack, from real change sets. Never executes."""
        project = open_project(directory, stack)
        tgt = connect(project, target)
        only = selection(project, stack)
        with Progress(list(only or project.order()), enabled=output is Output.text) as progress:
            group = make_group(project, tgt, only, max_concurrency, progress, macros=macros)
            plans = group.plan(keep=keep)
        if output is Output.json:
            emit_json({"plans": {n: p.to_json() for n, p in plans.items()}})
        else:
            print_plans(plans, project.order())

    @app.command()
    def deploy(
        directory: Path = DirArgument,
        stack: list[str] | None = StackOption,
        yes: bool = typer.Option(False, "--yes", "-y", help="Do not ask; deploy what the plan shows."),
        force: bool = typer.Option(False, "--force", help="Ignore the applied cache; plan every stack."),
        max_concurrency: int = typer.Option(8, "--max-concurrency", help="Stacks deployed at once."),
        target: str | None = TargetOption,
        output: Output = OutputOption,
        macros: str | None = MacrosOption,
    ) -> None:
        """Plan and execute in dependency order, stacks in parallel; outputs at the end. \
Exit 1 if any failed."""
        project = open_project(directory, stack)
        tgt = connect(project, target)
        only = selection(project, stack, dependencies=True)
        names = list(only or project.order())
        if not yes and (output is Output.json or not sys.stdin.isatty()):
            confirm("Deploy these changes?", yes, output)  # nobody can answer: say so before any work
        # prepared once: the plan and the deploy share templates, TOSCA transforms and uploads
        stacks = prepare_stacks(project, target=tgt, only=only, **macro_mode(macros))
        if not yes:
            plans = StackGroup(project, stacks, tgt, max_concurrency=max_concurrency).plan()
            print_plans(plans, project.order())
            if all(p.kind in ("unchanged", "no changes") for p in plans.values()):
                console.print("nothing to deploy")
                return
            confirm("Deploy these changes?", yes)
        counter = CallCounter()
        with Progress(names, enabled=output is Output.text) as progress:
            group = StackGroup(project, stacks, tgt, max_concurrency=max_concurrency, progress=progress,
                               counter=counter)
            results = group.deploy(force=force)
        order = [n for n in project.order() if n in results]
        outputs = {n: r.outputs for n, r in results.items() if r.ok}
        failed = [r for r in results.values() if not r.ok]
        if output is Output.json:
            emit_json(
                {
                    "ok": not failed,
                    "stacks": {n: results[n].to_json() for n in order},
                    "outputs": outputs,
                    "calls": dict(counter.calls),
                    "write_calls": counter.writes,
                }
            )
        else:
            console.print(summary_table(results, order))
            if not failed:
                console.print(outputs_table(outputs, order))
        if failed:
            raise typer.Exit(exit_code_of(results))

    @app.command()
    def delete(directory: Path = DirArgument, stack: list[str] | None = StackOption,
               yes: bool = typer.Option(False, "--yes", "-y", help="Do not ask for confirmation."),
               max_concurrency: int = typer.Option(8, "--max-concurrency", help="Stacks deleted at once."),
               target: str | None = TargetOption, output: Output = OutputOption) -> None:
        """Delete stacks in reverse dependency order (a stack's dependents go first)."""
        project = open_project(directory, stack)
        tgt = connect(project, target)
        only = selection(project, stack, dependents=True)
        names = list(reversed(project.order())) if only is None else sorted(only)
        if output is Output.text:
            console.print("will delete: " + ", ".join(project.stacks[n].stack_name for n in names))
        confirm(f"Delete {len(names)} stack(s)?", yes, output)
        with Progress(names, enabled=output is Output.text) as progress:
            group = make_group(project, tgt, only, max_concurrency, progress)
            results = group.delete()
        failed = [r for r in results.values() if not r.ok]
        order = [n for n in reversed(project.order()) if n in results]
        if output is Output.json:
            emit_json({"ok": not failed, "stacks": {n: results[n].to_json() for n in order}})
        else:
            console.print(summary_table(results, order))
        if failed:
            raise typer.Exit(exit_code_of(results))

    @app.command()
    def status(directory: Path = DirArgument, target: str | None = TargetOption,
               output: Output = OutputOption) -> None:
        """Each stack's CloudFormation status and last update."""
        project = load_project(directory)
        rows = {}
        for name, info in deployed(project, connect(project, target)).items():
            rows[name] = {"stack_name": project.stacks[name].stack_name,
                          "status": info.status if info else "NOT_DEPLOYED",
                          "updated": info.updated.isoformat() if info and info.updated else None,
                          "reason": info.reason if info else ""}
        if output is Output.json:
            emit_json({"stacks": rows})
            return
        table = Table()
        for column in ("stack", "cloud name", "status", "updated"):
            table.add_column(column)
        for name, row in rows.items():
            table.add_row(name, row["stack_name"], row["status"], row["updated"] or "")
        console.print(table)

    @app.command()
    def outputs(directory: Path = DirArgument, target: str | None = TargetOption,
                output: Output = OutputOption) -> None:
        """The outputs of every deployed stack."""
        project = load_project(directory)
        values = {name: info.outputs for name, info in deployed(project, connect(project, target)).items()
                  if info is not None}
        if output is Output.json:
            emit_json({"outputs": values})
        else:
            console.print(outputs_table(values, project.order()))

    @app.command()
    def diff(directory: Path = DirArgument, stack: list[str] | None = StackOption,
             target: str | None = TargetOption, output: Output = OutputOption) -> None:
        """Unified diff of the local processed template against the deployed one (both normalised)."""
        project = open_project(directory, stack)
        tgt = connect(project, target)
        group = make_group(project, tgt, selection(project, stack), 8, lambda e: None)
        deployed_outputs = {
            name: info.outputs for name, info in deployed(project, tgt).items() if info is not None
        }
        diffs: dict[str, str] = {}
        for name in [n for n in project.order() if n in group.stacks]:
            local_stack = group.stacks[name]
            parameters = local_stack.resolve_parameters(deployed_outputs, partial=True)
            local_template, _ = local_stack.processed(parameters, region=tgt.region)
            remote_text = ""
            if name in deployed_outputs:
                body = group.cfn.call("get_template", StackName=local_stack.stack_name,
                                      TemplateStage="Processed")["TemplateBody"]
                remote_text = normalised(body)
            local_text = normalised(local_template)
            # a NoEcho value that macros put into the template (Fn::ToJsonString …) is never shown
            for secret in local_stack.secret_parameters(local_template):
                if len(parameters.get(secret, "")) >= 4:
                    remote_text = remote_text.replace(parameters[secret], "****")
                    local_text = local_text.replace(parameters[secret], "****")
            diffs[name] = "".join(difflib.unified_diff(
                remote_text.splitlines(keepends=True), local_text.splitlines(keepends=True),
                fromfile=f"deployed/{local_stack.stack_name}", tofile=f"local/{name}"))
        if output is Output.json:
            emit_json({"diffs": diffs, "changed": [n for n, d in diffs.items() if d]})
            return
        for name, text in diffs.items():
            console.print(f"[bold]{escape(name)}[/]: " + ("no differences" if not text else ""))
            if text:
                sys.stdout.write(text)

    @app.command()
    def graph(
        directory: Path = DirArgument,
        fmt: str = typer.Option("dot", "--format", "-f", help="dot, svg or png (svg/png need Graphviz)."),
        out: Path | None = typer.Option(None, "--out", help="Write to this file instead of stdout."),
    ) -> None:
        """The stacks' dependency graph as DOT (or SVG/PNG through Graphviz's `dot`)."""
        project = load_project(directory)
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


def _lint_stack(stack: Stack, template: dict[str, Any], project: Project) -> list:
    """cfn-lint findings with lines in the file the user wrote (or in the processed build output)."""
    source = Path(stack.source)
    if not stack.uses_macros() and source.is_file() and stack.config.tosca is None:
        return lint(template, file=str(source), regions=[project.region or "us-east-1"],
                    text=source.read_text(encoding="utf-8"))
    path = stack.write_build(template)
    return lint(template, file=str(path), regions=[project.region or "us-east-1"],
                text=path.read_text(encoding="utf-8"))


def normalised(template: Any) -> str:
    """A template as sorted, indented JSON, so two copies diff only where they differ."""
    if isinstance(template, str):
        from formwright.template import loads

        template = loads(template)
    return json.dumps(plain(template), indent=2, sort_keys=True, default=str) + "\n"


def dot_graph(project: Project) -> str:
    """DOT text: a node per stack, an edge from each dependency to its dependent."""
    lines = [f'digraph "{project.name}" {{', "  rankdir=LR;", "  node [shape=box];"]
    for name, stack in project.stacks.items():
        lines.append(f'  "{name}" [label="{name}\\n{stack.stack_name}"];')
    for name, stack in project.stacks.items():
        for dep in sorted(stack.dependencies()):
            lines.append(f'  "{dep}" -> "{name}";')
    lines.append("}")
    return "\n".join(lines) + "\n"



