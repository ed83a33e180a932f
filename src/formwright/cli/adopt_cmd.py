"""`formwright adopt`: write a project that manages existing stacks as they are (as `cdk migrate
--from-stack`, for many stacks at once and with the references between them)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from formwright.cli import common
from formwright.cli.common import Output, OutputOption, PlainProfileOption, TargetOption, emit_json
from formwright.errors import InputError

OWNERSHIP_NOTE = ("the next deploy adds the ownership tags formwright:project and formwright:stack to each "
                  "stack: a tags-only update")


def check_inputs(patterns: list[str], regions: list[str], folder: Path) -> None:
    """Refuse, before any call, what adopt cannot work with: an unknown region, a folder with files."""
    from formwright.cloud.regions import is_region

    for region in regions:
        if not is_region(region):
            raise InputError(f"--region {region}: not an AWS region", hint="e.g. --region eu-west-1")
    if folder.exists() and (not folder.is_dir() or any(folder.iterdir())):
        raise InputError(f"-o {folder}: not an empty folder; adopt writes a new project",
                         hint="give a new or empty folder: -o adopted")
    if not all(p.strip() for p in patterns):
        raise InputError("an empty stack name or pattern", hint="formwright adopt 'app-*'")


def read_stacks(patterns: list[str], regions: list[str], profile: str | None, targets: Any,
                counter: Any) -> tuple[
        list[Any], list[str], str]:
    """The live stacks matching the patterns in each region (the default region without --region), the
    matching ones left out for their status, and the first region (the project's)."""
    from formwright.adopt.live import read_region
    from formwright.model.targets import TargetSpec

    found, skipped, first = [], [], None
    asked: list[str | None] = list(regions) or [None]  # None: the default region
    for region in asked:
        target = targets.get(TargetSpec(region=region, profile=profile))
        first = first or target.region
        stacks, left = read_region(target.client("cloudformation"), target.region, patterns, counter)
        found += stacks
        skipped += left
    if not found:
        where = ", ".join(regions) if regions else str(first)
        raise InputError(f"no live stack matches {' '.join(patterns)} in {where}",
                         hint="patterns are shell-style globs over stack names: 'app-*'; "
                              "--region for another region" + (f" (left out: {'; '.join(skipped)})"
                                                                 if skipped else ""))
    return found, skipped, str(first)


def print_summary(answer: dict[str, Any]) -> None:
    """What was written, what was inferred, what the user still has to do."""
    from rich.markup import escape

    say = common.console.print
    say(f"wrote {escape(answer['directory'])}: formwright.yaml and {len(answer['stacks'])} template(s)",
        highlight=False)
    for name, stack in answer["stacks"].items():
        links = [f"{p} <- {src}" for p, src in stack["references"].items()]
        links += [f"depends on {d}" for d in stack["depends_on"]]
        say(f"  {escape(name)} ({escape(stack['stack_name'])}, {stack['region']})"
            + (f": {escape('; '.join(links))}" if links else ""), highlight=False)
        for param, var in stack["secrets"].items():
            say(f"    {escape(param)} is NoEcho: set {var} to its value before plan or deploy",
                highlight=False)
    for item in answer["ambiguous"]:
        say(f"[yellow]ambiguous:[/] {escape(item['stack'])}.{escape(item['parameter'])} = "
            f"{escape(item['value'])} matches {escape(', '.join(item['outputs']))} ({item['reason']}); "
            "kept as a value: write `!ref STACK.outputs.KEY` for the one you mean", highlight=False)
    for line in answer["skipped"]:
        say(f"[yellow]left out:[/] {escape(line)}", highlight=False)
    for name, why in answer["unmarked"].items():
        say(f"note: {escape(name)} not marked as applied, its first plan asks CloudFormation: {escape(why)}",
            highlight=False)
    if answer["tag"]:
        say(f"note: {OWNERSHIP_NOTE}", highlight=False)


def register(app: typer.Typer) -> None:
    """Add adopt to the application."""

    @app.command()
    def adopt(
        patterns: list[str] = typer.Argument(..., metavar="STACK_NAME_OR_PATTERN...", show_default=False,
                                             help="Stack names or shell-style patterns ('app-*') over the "
                                                  "region's live stacks."),
        out: Path = typer.Option(Path("."), "--out", "-o", metavar="PATH",
                                 help="The project folder to write (new or empty; default: here)."),
        region: list[str] | None = typer.Option(None, "--region", metavar="REGION",
                                                help="A region to look in (repeatable); default: AWS_REGION, "
                                                     "then the profile's region."),
        tag: bool = typer.Option(False, "--tag", help="Let the next deploy add formwright's ownership tags "
                                                      "(a tags-only update of each stack)."),
        profile: str | None = PlainProfileOption,
        target: str | None = TargetOption,
        output: Output = OutputOption,
    ) -> None:
        """Write a project (formwright.yaml and templates/) that manages existing stacks as they are: each \
template as deployed (macros kept), parameters (NoEcho ones from the environment, never a value), tags, \
capabilities, termination protection, region and stack name; a parameter holding another adopted stack's \
output becomes `!ref`, an import of its export `depends_on`. Right after, `formwright plan` shows no change \
and `formwright deploy` writes nothing."""
        from formwright.adopt.infer import links
        from formwright.adopt.record import mark_applied
        from formwright.adopt.write import project_name, stack_keys, write_project
        from formwright.cloud.session import Targets
        from formwright.engine.cfn import CallCounter
        from formwright.template.document import loads

        regions = list(dict.fromkeys(region or []))
        check_inputs(patterns, regions, out)
        targets = Targets(target)
        counter = CallCounter()
        found, skipped, home_region = read_stacks(patterns, regions, profile, targets, counter)
        stacks = stack_keys(found)
        templates = {name: loads(live.template_text, file=f"{live.info.name} (GetTemplate)")
                     for name, live in stacks.items()}
        inferred = links(stacks, templates)
        written = write_project(out, project_name(out), home_region, stacks, templates, inferred, tag=tag,
                                profile=profile)
        unmarked = {} if tag else mark_applied(out, stacks, targets)
        answer = {
            "ok": True, "directory": str(out), "files": written.files, "tag": tag,
            "stacks": {name: {"stack_name": live.info.name, "region": live.region,
                              "references": {p: f"{o}.outputs.{k}"
                                             for p, (o, k) in inferred.refs.get(name, {}).items()},
                              "depends_on": sorted(inferred.depends_on.get(name, ())),
                              "secrets": written.secrets.get(name, {})}
                       for name, live in stacks.items()},
            "ambiguous": inferred.ambiguous, "skipped": skipped, "unmarked": unmarked,
            "read_calls": counter.total,
        }
        if output is Output.json:
            emit_json(answer)
        else:
            print_summary(answer)

