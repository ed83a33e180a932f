"""`formwright instance …` (create, list, show, update, upgrade, rollback, retry, run, scope, delete) and
`formwright history NAME`: the lifecycle of deployment instances."""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import typer
from rich.table import Table

from formwright.cli.common import (
    InputOption,
    Output,
    OutputOption,
    ProfileOption,
    RegionOption,
    RegionsOption,
    TargetOption,
    complete_instances,
    console,
    emit_json,
    err_console,
    project_dir,
)
from formwright.cli.progress import Progress
from formwright.lifecycle.inputs import parse_pairs
from formwright.lifecycle.operations import Lifecycle, Outcome

if TYPE_CHECKING:
    from formwright.lifecycle.preview import Preview


def _project_home(ctx: typer.Context, value: Path | None) -> Path | None:
    """DIR as given, else the nearest folder upward with a formwright.yaml or a journal (instances made
    from a package have no formwright.yaml), else the current folder; left alone while completing."""
    if ctx.resilient_parsing:
        return value
    return project_dir(value, markers=("formwright.yaml", ".formwright/journal.db"), default=Path("."))


# the project home is the optional positional [DIR] of every project command (issue #16)
ProjectOption = typer.Argument(
    None,
    metavar="DIR",
    show_default=False,
    callback=_project_home,
    help="The project home, whose .formwright/journal.db keeps the instances; default: the nearest "
    "folder upward with a formwright.yaml or a journal, else here.",
)
InstanceArgument = typer.Argument(..., metavar="NAME", help="The instance.",
                                  autocompletion=lambda ctx, incomplete: complete_instances(ctx, incomplete))
UnlockOption = typer.Option(None, "--force-unlock", metavar="OPERATION_ID",
                            help="First drop the lock this (dead) operation holds.")
EnvOption = typer.Option(None, "--env", envvar="FORMWRIGHT_ENV", metavar="NAME",
                         help="The project's environment to create the instance in (its overlay applies); "
                              "later operations keep the instance's own.")
QuietOption = typer.Option(False, "--quiet", "-q",
                           help="Do not show the actions' output as they run (it stays in the operation's "
                                "log: `formwright history NAME --logs`).")
ConcurrencyOption = typer.Option(1, "--max-concurrency", min=1, metavar="N",
                                 help="Stacks worked on at once where the graph allows (default 1: one "
                                 "after another in the manifest's order).")


def _stamp(value: float | None) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(value)) if value else ""


DryRunOption = typer.Option(False, "--dry-run", help="Show what the operation would do, in order (stacks "
                            "created, updated with their resource changes, deleted; the events and hooks it "
                            "would fire), and change nothing.")
YesOption = typer.Option(False, "--yes", "-y", help="Do not ask (at a terminal the preview is shown and "
                         "confirmed first).")


def _operate(project: Path, cloud: tuple[str | None, str | None, str | None, str | None], output: Output,
             name: str, unlock: str | None, work: Callable[[Lifecycle], Outcome | Preview],
             concurrency: int = 1, quiet: bool = False, *, dry_run: bool = False,
             ask: str | None = None) -> None:
    """Run one operation with progress, print its outcome (text or JSON); `cloud` is (--target, --region,
    --profile, --env). In text mode each line the actions print is shown as it comes (`[where] line`),
    unless `quiet`; it is in the operation's log either way. With `dry_run` only its preview; with `ask` (a
    question) the preview first, then the question (declined: exit 4, nothing changed)."""
    if dry_run or ask:
        _preview(project, cloud, output, work, concurrency)
        if dry_run:
            return
        from formwright.cli.project import confirm

        confirm(ask or "", False, output)
    target, region, profile, environment = cloud
    with Progress([], enabled=output is Output.text) as progress:
        echo = None if quiet or output is Output.json else _echo_to(progress)
        lifecycle = Lifecycle(project, target_flag=target, progress=progress, max_concurrency=concurrency,
                              region=region, profile=profile, environment=environment, echo=echo)
        try:
            if unlock:
                lifecycle.force_unlock(name, unlock)
            outcome = work(lifecycle)
        finally:
            lifecycle.close()
    assert isinstance(outcome, Outcome)  # a Preview only comes of a dry run
    if output is Output.json:
        emit_json({"ok": True, **outcome.to_json()})
        return
    if outcome.note:
        err_console.print(f"note: {outcome.note}", highlight=False)
    changed = [s for s in outcome.steps if s["element"] and s["action"] not in ("skip", "noop")]
    for step in changed:
        console.print(
            f"  {step['element']}: {step['action']} {step['stack_name']} ({step['note'] or step['status']})",
            highlight=False,
        )
    revision = f", revision {outcome.revision}" if outcome.revision else ""
    console.print(
        f"{outcome.kind} of '{outcome.instance}' done ({outcome.operation_id}{revision})", highlight=False
    )


def _echo_to(progress: Progress) -> Callable[[str, str, str], None]:
    """Show one line of an action's output above the live progress (stderr, with the progress)."""
    from rich.markup import escape

    def echo(where: str, level: str, line: str) -> None:
        style = {"err": "yellow", "error": "red", "warn": "yellow"}.get(level)
        text = f"[{escape(where)}] {escape(line)}"
        progress.console.print(f"[{style}]{text}[/]" if style else text, highlight=False, soft_wrap=True)

    return echo


def _preview(project: Path, cloud: tuple[str | None, str | None, str | None, str | None], output: Output,
             work: Callable[[Lifecycle], Outcome | Preview], concurrency: int) -> None:
    """Print what the operation would do (lifecycle/preview.py); nothing is changed."""
    from formwright.cli.render import print_preview

    target, region, profile, environment = cloud
    lifecycle = Lifecycle(project, target_flag=target, max_concurrency=concurrency, region=region,
                          profile=profile, environment=environment)
    lifecycle.dry_run = True
    try:
        preview = work(lifecycle)
    finally:
        lifecycle.close()
    if output is Output.json:
        emit_json({"ok": True, **preview.to_json()})
    else:
        print_preview(preview)


def _question(yes: bool, output: Output, question: str) -> str | None:
    """The question to ask before the operation: only at a terminal, without --yes, in text mode (off a
    terminal the operation runs as it always has: scripts and CI are not asked)."""
    return question if not yes and output is Output.text and sys.stdin.isatty() else None


def register(app: typer.Typer) -> None:
    """Add `instance` and `history` to the application."""
    group = typer.Typer(help="Deployment instances: create, upgrade, roll back, retry, run day-2 operations.",
                        no_args_is_help=True)
    app.add_typer(group, name="instance")

    @group.command()
    def create(name: str = typer.Argument(..., help="The instance name (in every stack name)."),
               inputs: list[str] | None = InputOption,
               source: Path | None = typer.Option(None, "--from", help="The project version to install "
                                                     "(default: the project home)."),
               regions: str | None = RegionsOption,
               project: Path = ProjectOption, target: str | None = TargetOption,
        region: str | None = RegionOption, profile: str | None = ProfileOption,
        env: str | None = EnvOption,
               output: Output = OutputOption, quiet: bool = QuietOption,
        max_concurrency: int = ConcurrencyOption) -> None:
        """Create an instance: PreCreate, each stack (PreCreate → deploy → PostCreate), PostCreate."""
        scope = [r.strip() for r in regions.split(",") if r.strip()] if regions else None
        _operate(project, (target, region, profile, env), output, name, None,
                 lambda lc: lc.create(name, source or project, parse_pairs(inputs), scope),
                 concurrency=max_concurrency, quiet=quiet)

    @group.command()
    def update(name: str = InstanceArgument,
               inputs: list[str] | None = InputOption, project: Path = ProjectOption,
               force_unlock: str | None = UnlockOption, target: str | None = TargetOption,
        region: str | None = RegionOption, profile: str | None = ProfileOption,
        env: str | None = EnvOption,
               output: Output = OutputOption, quiet: bool = QuietOption,
        max_concurrency: int = ConcurrencyOption, dry_run: bool = DryRunOption,
               yes: bool = YesOption) -> None:
        """Apply new input values; only stacks that change are updated."""
        _operate(project, (target, region, profile, env), output, name, force_unlock,
                 lambda lc: lc.update(name, parse_pairs(inputs)),
                 concurrency=max_concurrency, quiet=quiet, dry_run=dry_run,
                 ask=_question(yes, output, f"Update instance '{name}'?"))

    @group.command()
    def upgrade(
        name: str = InstanceArgument,
        to: Path | None = typer.Option(None, "--to", help="The folder of the new project version."),
        archive: Path | None = typer.Option(None, "--from", help="A package of the new version "
                                            "(`formwright package`), verified before it is used."),
        repair: bool = typer.Option(False, "--repair", help="Create again the stacks found missing from the "
                                    "cloud (the upgrade stops on them otherwise)."),
        inputs: list[str] | None = InputOption,
        project: Path = ProjectOption,
        force_unlock: str | None = UnlockOption,
        target: str | None = TargetOption,
        region: str | None = RegionOption, profile: str | None = ProfileOption,
        env: str | None = EnvOption,
        output: Output = OutputOption, quiet: bool = QuietOption,
        max_concurrency: int = ConcurrencyOption,
        dry_run: bool = DryRunOption,
        yes: bool = YesOption,
    ) -> None:
        """Upgrade by drift: new stacks created, changed ones updated (or replaced), \
removed ones deleted last."""
        from formwright.errors import InputError

        if (to is None) == (archive is None):
            raise InputError("name the new version with --to DIR or --from ARCHIVE (one of them)")
        new_version = to or archive
        assert new_version is not None
        _operate(project, (target, region, profile, env), output, name, force_unlock,
                 lambda lc: lc.upgrade(name, new_version, parse_pairs(inputs), repair=repair),
                 concurrency=max_concurrency, quiet=quiet, dry_run=dry_run,
                 ask=_question(yes, output, f"Upgrade instance '{name}'?"))

    @group.command()
    def rollback(name: str = InstanceArgument,
                 to_revision: int | None = typer.Option(None, "--to-revision", help="Revision N."),
                 project: Path = ProjectOption, force_unlock: str | None = UnlockOption,
                 target: str | None = TargetOption,
        region: str | None = RegionOption, profile: str | None = ProfileOption,
        env: str | None = EnvOption, output: Output = OutputOption, quiet: bool = QuietOption,
        max_concurrency: int = ConcurrencyOption, dry_run: bool = DryRunOption,
                 yes: bool = YesOption) -> None:
        """Return to revision N exactly (default: undo the last change or a failed one); \
makes a new revision."""
        _operate(project, (target, region, profile, env), output, name, force_unlock,
                 lambda lc: lc.rollback(name, to_revision),
                 concurrency=max_concurrency, quiet=quiet, dry_run=dry_run,
                 ask=_question(yes, output, f"Roll back instance '{name}'?"))

    @group.command()
    def retry(name: str = InstanceArgument,
              project: Path = ProjectOption, force_unlock: str | None = UnlockOption,
              target: str | None = TargetOption,
        region: str | None = RegionOption, profile: str | None = ProfileOption,
        env: str | None = EnvOption, output: Output = OutputOption, quiet: bool = QuietOption,
        max_concurrency: int = ConcurrencyOption) -> None:
        """Resume the last failed or interrupted operation at its first step not done."""
        _operate(project, (target, region, profile, env), output, name, force_unlock,
                 lambda lc: lc.retry(name), concurrency=max_concurrency, quiet=quiet)

    @group.command("run")
    def run_operation(
        name: str = InstanceArgument,
        operation: str = typer.Argument(..., help="A custom operation of the project."),
        inputs: list[str] | None = InputOption,
        project: Path = ProjectOption,
        force_unlock: str | None = UnlockOption,
        target: str | None = TargetOption,
        region: str | None = RegionOption, profile: str | None = ProfileOption,
        env: str | None = EnvOption,
        output: Output = OutputOption, quiet: bool = QuietOption,
        max_concurrency: int = ConcurrencyOption,
    ) -> None:
        """Run a custom day-2 operation with its inputs."""
        _operate(project, (target, region, profile, env), output, name, force_unlock,
                 lambda lc: lc.run(name, operation, parse_pairs(inputs)),
                 concurrency=max_concurrency, quiet=quiet)

    @group.command()
    def scope(name: str = InstanceArgument,
              regions: str = typer.Option(..., "--regions", metavar="REGION,...",
                                          help="Regions, comma separated."),
              project: Path = ProjectOption, force_unlock: str | None = UnlockOption,
              target: str | None = TargetOption,
        region: str | None = RegionOption, profile: str | None = ProfileOption,
        env: str | None = EnvOption, output: Output = OutputOption, quiet: bool = QuietOption,
        max_concurrency: int = ConcurrencyOption) -> None:
        """Set the regions of the instance: per-region stacks are added or removed."""
        wanted = [r.strip() for r in regions.split(",") if r.strip()]
        _operate(project, (target, region, profile, env), output, name, force_unlock,
                 lambda lc: lc.scope(name, wanted),
                 concurrency=max_concurrency, quiet=quiet)

    @group.command()
    def delete(name: str = InstanceArgument,
               yes: bool = YesOption, dry_run: bool = DryRunOption,
               project: Path = ProjectOption, force_unlock: str | None = UnlockOption,
               target: str | None = TargetOption,
        region: str | None = RegionOption, profile: str | None = ProfileOption,
        env: str | None = EnvOption, output: Output = OutputOption, quiet: bool = QuietOption,
        max_concurrency: int = ConcurrencyOption) -> None:
        """Delete the instance's stacks in reverse order (PreDelete … PostDelete)."""
        from formwright.cli.project import confirm

        question = f"Delete instance '{name}' and its stacks?"
        asking = _question(yes, output, question)
        if not yes and not dry_run and not asking:
            confirm(question, yes, output)  # nobody can answer: refused, as before any work
        _operate(project, (target, region, profile, env), output, name, force_unlock,
                 lambda lc: lc.delete(name), concurrency=max_concurrency, quiet=quiet, dry_run=dry_run,
                 ask=asking)

    @group.command("list")
    def list_instances(project: Path = ProjectOption, output: Output = OutputOption) -> None:
        """The project's instances: status, version, revision, regions."""
        lifecycle = Lifecycle(project)
        try:
            rows = lifecycle.instances()
            shared = lifecycle.sharers()
        finally:
            lifecycle.close()
        if output is Output.json:
            emit_json({"ok": True, "instances": [{**r.__dict__,
                                      "shares": {e: n for e, n in shared.items() if r.name in n}}
                                     for r in rows]})
            return
        table = Table()
        for column in ("instance", "status", "version", "revision", "regions", "updated", "shares"):
            table.add_column(column)
        for r in rows:
            shares = "; ".join(f"{e} with {', '.join(n for n in names if n != r.name) or 'none'}"
                               for e, names in shared.items() if r.name in names)
            table.add_row(r.name, r.status, r.version or "", str(r.revision), ",".join(r.regions),
                          _stamp(r.updated_at), shares)
        console.print(table)

    @group.command()
    def show(name: str = InstanceArgument,
             project: Path = ProjectOption, output: Output = OutputOption) -> None:
        """One instance: its current revision's stacks and inputs (secure ones masked), its lock."""
        lifecycle = Lifecycle(project)
        try:
            inst = lifecycle.require(name)
            revision = lifecycle.journal.revision(name)
            lock = lifecycle.journal.lock_holder(name)
            last = lifecycle.journal.last_operation(name)
        finally:
            lifecycle.close()
        data = {
            "instance": inst.__dict__,
            "lock": lock,
            "last_operation": {"id": last.id, "kind": last.kind, "status": last.status, "error": last.error}
            if last
            else None,
            "revision": revision.__dict__ if revision else None,
        }
        if output is Output.json:
            emit_json({"ok": True, **data})
            return
        console.print(
            f"[bold]{inst.name}[/]: {inst.status}, version {inst.version or '-'}, revision {inst.revision}, "
            f"regions {','.join(inst.regions)}"
        )
        if last:
            console.print(
                f"last operation: {last.kind} {last.id} {last.status} {last.error or ''}", highlight=False
            )
        if lock:
            console.print(f"locked by {lock['operation_id']} (pid {lock['pid']} on {lock['host']})")
        if revision:
            for key, value in sorted(revision.inputs.items()):
                console.print(f"  input {key} = {value}", highlight=False)
            for element, rec in revision.elements.items():
                console.print(f"  {element}: {rec['stack_name']} ({rec['region']})", highlight=False)

    @group.command("history")
    @app.command()
    def history(name: str = InstanceArgument, project: Path = ProjectOption,
                logs: bool = typer.Option(False, "--logs", help="Also print each operation's log: what its "
                                          "actions printed and logged (secrets masked)."),
                output: Output = OutputOption) -> None:
        """An instance's operations (with their steps' states) and its revisions; --logs adds what \
each operation's actions printed."""
        lifecycle = Lifecycle(project)
        try:
            operations, revisions = lifecycle.history(name)
            steps = {op.id: (lifecycle.journal.operation(op.id) or op).steps for op in operations}
            texts = {op.id: _read_log(lifecycle.log_path(op.id)) for op in operations} if logs else {}
        finally:
            lifecycle.close()
        packages = {op.id: op.params.get("package") for op in operations}
        if output is Output.json:
            emit_json({"ok": True, "operations": [{**{k: v for k, v in op.__dict__.items() if k != "steps"},
                                       "steps": [s.__dict__ for s in steps[op.id]],
                                       **({"log": texts[op.id].splitlines()} if logs else {})}
                                      for op in operations],
                       "revisions": [{**r.__dict__, "package": packages.get(r.operation_id)}
                                     for r in revisions]})
            return
        table = Table(title="operations", title_justify="left")
        for column in ("operation", "kind", "status", "attempt", "started", "steps", "error"):
            table.add_column(column)
        for op in operations:
            counts: dict[str, int] = {}
            for s in steps[op.id]:
                counts[s.status] = counts.get(s.status, 0) + 1
            table.add_row(op.id, op.kind, op.status, str(op.attempt), _stamp(op.started_at),
                          " ".join(f"{k}:{v}" for k, v in sorted(counts.items())), op.error or "")
        console.print(table)
        table = Table(title="revisions", title_justify="left")
        for column in ("revision", "version", "operation", "stacks", "created", "package"):
            table.add_column(column)
        for r in revisions:
            package = packages.get(r.operation_id) or {}
            table.add_row(str(r.number), r.version or "", r.operation_id, str(len(r.elements)),
                          _stamp(r.created_at), str(package.get("digest", "")))
        console.print(table)
        for op in operations if logs else ():
            console.print(f"\n[bold]log of {op.id}[/] ({op.kind}, {op.status})", highlight=False)
            sys.stdout.write(texts[op.id] or "(nothing logged)\n")
            sys.stdout.flush()


def _read_log(path: Path) -> str:
    """An operation's log file ("" when its actions printed nothing)."""
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return ""
