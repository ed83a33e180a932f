"""`formwright import-sceptre SCEPTRE_DIR [-o DIR] [--strict] [--tag]`: a sceptre project converted into a
formwright project whose stacks keep the names sceptre gave them."""

from __future__ import annotations

import copy
from pathlib import Path

import typer
from rich.markup import escape

from formwright.cli.common import Output, OutputOption, OwnershipTagOption, console, emit_json, err_console
from formwright.errors import InputError

# `-o` is the output folder here, so the shared --output option keeps only its long name.
FormatOption = copy.copy(OutputOption)
FormatOption.param_decls = ("--output",)


def import_sceptre(
    sceptre_dir: Path = typer.Argument(..., metavar="SCEPTRE_DIR",
                                       help="The sceptre project: the folder with config/ and templates/."),
    out: Path = typer.Option(None, "--out", "-o", metavar="PATH",
                             help="Folder for the formwright project (default: ./<project_code>)."),
    strict: bool = typer.Option(False, "--strict", help="Exit 2 when anything could not be mapped (nothing "
                                "is written then)."),
    force: bool = typer.Option(False, "--force", help="Replace formwright.yaml when PATH already has one."),
    tag: bool = OwnershipTagOption,
    output: Output = FormatOption,
) -> None:
    """Convert a sceptre project into a formwright project: config inheritance as sceptre merges it, each \
stack with the CloudFormation stack name sceptre gives it (existing stacks are taken over, not recreated), \
templates copied and Jinja templates rendered with sceptre_user_data, resolvers and `!cmd` hooks as \
formwright's. What cannot be mapped (a custom resolver or hook, a Python or jsonnet template) is listed with \
file:line and the rest is still written; --strict makes it an error. The project says `ownership_tags: \
false` (the stacks keep sceptre's tags, so the first plan of stacks sceptre deployed shows no change) unless \
--tag."""
    import tempfile

    from formwright.sceptre.convert import convert

    if not sceptre_dir.is_dir():
        raise InputError(f"{sceptre_dir}: no such folder", file=str(sceptre_dir),
                         hint="give the sceptre project's folder (the one holding config/)")
    with tempfile.TemporaryDirectory() as scratch:  # a dry conversion first: --strict writes nothing
        result = convert(sceptre_dir, Path(scratch) / "project")
        if strict and result.unmapped:
            first = result.unmapped[0]
            file, _, line = first.where.rpartition(":")
            raise InputError(f"{first.what} ({len(result.unmapped)} construct(s) cannot be mapped)",
                             file=file if line.isdigit() else first.where,
                             line=int(line) if line.isdigit() else None,
                             hint="run without --strict to see them all and write the rest")
    target = out if out is not None else Path(str(result.project["name"]))
    if target.resolve().is_relative_to(sceptre_dir.resolve()):
        raise InputError(f"the formwright project would be written into the sceptre project ({target})",
                         file=str(target), hint="pass -o with a folder outside SCEPTRE_DIR")
    if (target / "formwright.yaml").exists() and not force:
        raise InputError(f"{target / 'formwright.yaml'} already exists", file=str(target / "formwright.yaml"),
                         hint="pass --force to replace it, or -o another folder")
    result = convert(sceptre_dir, target, tag=tag)
    summary = {
        "ok": True,
        "out": str(target),
        "project": result.project["name"],
        "tag": tag,
        "stacks": [{"name": name, "stack_name": stack_name} for name, stack_name in result.stacks.items()],
        "notes": result.notes,
        "unmapped": [{"where": u.where, "what": u.what} for u in result.unmapped],
    }
    if output == Output.json:
        emit_json(summary)
        return
    for item in result.unmapped:
        err_console.print(f"[yellow]not mapped:[/] {escape(item.where)}: {escape(item.what)}",
                          highlight=False, soft_wrap=True)
    for note in result.notes:
        console.print(f"[dim]note:[/] {escape(note)}", highlight=False, soft_wrap=True)
    for name, stack_name in result.stacks.items():
        console.print(f"  {escape(name)} -> {escape(stack_name)}", highlight=False)
    console.print(f"wrote {escape(str(target / 'formwright.yaml'))} ({len(result.stacks)} stacks"
                  + (f", {len(result.unmapped)} not mapped" if result.unmapped else "") + "); check it with "
                  f"`formwright plan {escape(str(target))}`: it shows no change for stacks sceptre deployed"
                  + (" but the ownership tags (--tag)" if tag else ""), highlight=False)


def register(app: typer.Typer) -> None:
    """Add `import-sceptre` to the CLI application."""
    app.command("import-sceptre")(import_sceptre)
