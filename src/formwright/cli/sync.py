"""`formwright sync run|status|reconcile|suspend|resume`: git → stacks, continuously."""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

import typer
from rich.table import Table

from formwright.cli.common import (
    Output,
    OutputOption,
    PlainProfileOption,
    PlainRegionOption,
    TargetOption,
    columns,
    console,
    emit_json,
    emit_json_line,
    err_console,
    error_entry,
)
from formwright.errors import InputError
from formwright.sync.durations import format_duration
from formwright.sync.objects import ObjectSet, StackObject, load_objects
from formwright.sync.status_store import UNKNOWN, Record, Status, StatusStore

# the objects folder is an optional positional [DIR], as every project command's folder (issue #16)
DirOption = typer.Argument(Path("."), metavar="DIR", show_default=False,
                           help="The folder (or file) with the CloudFormationStack objects; default: here.")
StateOption = typer.Option(None, "--state", metavar="PATH",
                           help="The state folder (default <DIR>/.formwright/sync).")
StackTagsOption = typer.Option(
    None, "--stack-tags", metavar="K=V[,K=V…]",
    help="Tags for every stack, KEY=VALUE[,KEY=VALUE…] (repeatable): after the "
    "cfn-flux-controller/version|name|namespace tags, before each object's spec.stackTags.")
TemplateBucketOption = typer.Option(
    None, "--template-bucket", envvar="TEMPLATE_BUCKET", metavar="BUCKET",
    help="Upload every template to this S3 bucket and deploy it from there, as the Flux controller does "
    "(default: inline up to 51,200 bytes, larger ones "
    "through formwright's managed bucket); env TEMPLATE_BUCKET.")
NoCrossNamespaceOption = typer.Option(
    False, "--no-cross-namespace-refs",
    help="Refuse a sourceRef to another namespace (Flux's lockdown flag).")
MacrosOption = typer.Option(
    None, "--macros", help="The folder of macros synced templates may use: the only macro code sync runs "
    "(a repository's own macro code never runs on this host).", exists=True, file_okay=False)


def _state(directory: Path, state: Path | None) -> Path:
    from formwright.sync.daemon import default_state_dir

    return state or default_state_dir(directory)


def _row(obj: StackObject | None, key: str, record: Record | None) -> dict[str, Any]:
    """One object's status as plain data."""
    st = record.status if record else None
    suspended = (record.suspended if record and record.suspended is not None
                 else (obj.spec.suspend if obj else False))
    next_run = st.next_run if st else None
    return {
        "object": key,
        "stack": (obj.spec.stack_name if obj else (record.spec.get("stackName") if record else None)),
        "ready": st.ready if st else UNKNOWN,
        "reason": st.reason if st else "NotReconciled",
        "message": st.message if st else "never reconciled",
        "suspended": suspended,
        "generation": record.generation if record else None,
        "observedGeneration": st.observed_generation if st else None,
        "lastAttemptedRevision": st.last_attempted_revision if st else "",
        "lastAppliedRevision": st.last_applied_revision if st else "",
        "lastAttemptedChangeSet": st.last_attempted_change_set if st else "",
        "lastAppliedChangeSet": st.last_applied_change_set if st else "",
        "lastHandledReconcileAt": st.last_handled_reconcile_at if st else "",
        "drift": st.drift if st else "",
        "nextRun": next_run,
        "deleted": obj is None,
    }


def parse_stack_tags(values: list[str] | None) -> dict[str, str]:
    """`--stack-tags k=v,k2=v2` (repeatable) as a dict, as the controller's StringToString flag reads it."""
    tags: dict[str, str] = {}
    for value in values or []:
        for pair in value.split(","):
            key, sep, tag = pair.partition("=")
            if not sep or not key.strip():
                raise InputError(f"--stack-tags: '{pair}' is not KEY=VALUE",
                                 hint="--stack-tags team=a,env=dev")
            tags[key.strip()] = tag
    return tags


def _when(next_run: float | None, suspended: bool) -> str:
    if suspended:
        return "suspended"
    if next_run is None:
        return "-"
    delta = next_run - time.time()
    return "now" if delta <= 0 else f"in {format_duration(delta)}"


def _find(objects: ObjectSet, name: str) -> StackObject:
    return objects.find(name)


def _signal_daemon(store: StatusStore, key: str, action: str, token: str = "") -> int | None:
    """Queue `action` (with a requestedAt `token`) for a running daemon and wake it; the daemon's pid, or
    None when none runs."""
    pid = store.daemon_pid()
    if pid is None:
        return None
    store.request(key, f"{action}@{token}" if token else action)
    try:
        os.kill(pid, signal.SIGUSR1)
    except OSError:
        return None
    return pid


def register(app: typer.Typer) -> None:
    """Add `sync` and its commands to the application."""
    sync = typer.Typer(help="Keep stacks in step with git: CloudFormationStack objects (Flux's schema).",
                       no_args_is_help=True)
    app.add_typer(sync, name="sync")

    @sync.command("run")
    def run(
        directory: Path = typer.Argument(
            Path("."), metavar="DIR", show_default=False,
            help="Folder (or file) with CloudFormationStack and GitRepository objects; default: here.",
        ),
        workers: int = typer.Option(4, "--workers", metavar="N", help="Objects reconciled at once."),
        state: Path | None = StateOption,
        target: str | None = TargetOption,
        region: str | None = PlainRegionOption,
        profile: str | None = PlainProfileOption,
        drift: bool = typer.Option(True, "--drift/--no-drift", help="Detect drift each interval."),
        requeue_dependency: str = typer.Option(
            "30s", "--requeue-dependency", metavar="DURATION",
            help="Retry after this long while dependsOn is not Ready."
        ),
        reload_interval: str = typer.Option("2s", "--reload-interval", metavar="DURATION",
                                             help="How often DIR is re-read."),
        macros: Path | None = MacrosOption,
        stack_tags: list[str] | None = StackTagsOption,
        template_bucket: str | None = TemplateBucketOption,
        no_cross_namespace_refs: bool = NoCrossNamespaceOption,
        output: Output = OutputOption,
    ) -> None:
        """Reconcile every object in DIR until Ctrl-C or SIGTERM \
(a daemon; state in <DIR>/.formwright/sync)."""
        from formwright.cloud.session import resolve_target
        from formwright.sync.daemon import Daemon
        from formwright.sync.durations import parse_interval

        try:
            dependency_requeue = parse_interval(requeue_dependency)
        except ValueError as err:
            raise InputError(f"--requeue-dependency: {err}") from None
        try:
            reload_every = parse_interval(reload_interval, minimum=0.1)
        except ValueError as err:
            raise InputError(f"--reload-interval: {err}") from None
        tags = parse_stack_tags(stack_tags)
        load_objects(directory)  # bad input first, as one line, before the target is needed
        tgt = resolve_target(target, region, profile=profile)

        def log(line: str) -> None:
            stamp = time.strftime("%H:%M:%S")
            if output is Output.json:
                emit_json_line({"time": stamp, "event": line})
            else:
                err_console.print(f"{stamp} {line}", highlight=False, soft_wrap=True)

        daemon = Daemon(directory, tgt, state_dir=state, workers=workers, drift=drift,
                        dependency_requeue=dependency_requeue, reload_interval=reload_every, log=log,
                        macros_dir=macros, stack_tags=tags, template_bucket=template_bucket,
                        no_cross_namespace_refs=no_cross_namespace_refs)
        # from this line on a SIGTERM stops gracefully (exit 0): a supervisor may send one at any time
        daemon.install_signals()
        log(f"syncing {len(daemon.objects.stacks)} object(s) from {len(daemon.objects.sources)} source(s) "
            f"with {workers} worker(s); state in {daemon.state_dir}")
        daemon.run_forever(install_signals=False)
        log(f"stopped after {daemon.stats.passes} pass(es)")

    @sync.command("status")
    def status(directory: Path = DirOption, state: Path | None = StateOption,
               events: bool = typer.Option(False, "--events", help="Also list each object's recent events "
                                           "(Normal / Warning, as the Flux controller records them)."),
               output: Output = OutputOption) -> None:
        """Each object: Ready, reason, last applied revision, last change set, next run."""
        objects = load_objects(directory)
        store = StatusStore(_state(directory, state))
        try:
            records = store.all()
            daemon = store.daemon_pid()
            recorded = store.events() if events else []
        finally:
            store.close()
        keys = sorted(set(objects.stacks) | set(records))
        rows = [_row(objects.stacks.get(k), k, records.get(k)) for k in keys]
        listed = [{"object": key, "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(e.time)),
                   "type": e.type, "message": e.message, "revision": e.revision} for key, e in recorded]
        if output is Output.json:
            emit_json({"ok": True, "daemon": daemon, "objects": rows,
                       **({"events": listed} if events else {})})
            return
        # plain columns as `flux get` prints them: every cell whole at any width (a narrow terminal wraps
        # the line, never cuts a revision or a name), the free-text message last; the change set is in JSON
        sys.stdout.write(columns(
            ["name", "ready", "reason", "revision", "next run", "message"],
            [[row["object"] + (" (deleted)" if row["deleted"] else ""), row["ready"], row["reason"],
              row["lastAppliedRevision"] or "", _when(row["nextRun"], row["suspended"]), row["message"]]
             for row in rows]))
        sys.stdout.flush()
        if events:
            log = Table(title="events")
            for column in ("time", "object", "type", "message", "revision"):
                log.add_column(column)
            for item in listed:
                color = "yellow" if item["type"] == "Warning" else "default"
                log.add_row(item["time"], item["object"], f"[{color}]{item['type']}[/]", item["message"],
                            item["revision"])
            console.print(log)
        if daemon is None:
            console.print("[dim]no daemon is running over this state (`formwright sync run DIR`)[/]")

    @sync.command("reconcile")
    def reconcile(name: str = typer.Argument(..., help="The object: name or namespace/name."),
                  directory: Path = DirOption, state: Path | None = StateOption,
                  target: str | None = TargetOption, region: str | None = PlainRegionOption,
                  profile: str | None = PlainProfileOption,
                  wait: bool = typer.Option(True, "--wait/--no-wait", help="Wait for the result."),
                  timeout: float = typer.Option(600.0, "--timeout", metavar="SECONDS",
                                                help="Seconds to wait at most."),
                  macros: Path | None = MacrosOption,
                  stack_tags: list[str] | None = StackTagsOption,
                  template_bucket: str | None = TemplateBucketOption,
                  no_cross_namespace_refs: bool = NoCrossNamespaceOption,
                  output: Output = OutputOption) -> None:
        """Reconcile one object now: through the running daemon, or here when none runs. \
Exit 1 if not Ready."""
        objects = load_objects(directory)
        obj = _find(objects, name)
        state_dir = _state(directory, state)
        store = StatusStore(state_dir)
        options = {"stack_tags": parse_stack_tags(stack_tags), "template_bucket": template_bucket,
                   "no_cross_namespace_refs": no_cross_namespace_refs}
        try:
            known = store.get(obj.key)
            if (known.suspended if known is not None and known.suspended is not None else obj.spec.suspend):
                raise InputError(f"'{obj.key}' is suspended",
                                 hint=f"`formwright sync resume {obj.name}` first")
            # like `flux reconcile`: a requestedAt token; the pass that handled it reports it back
            token = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime()) + f".{time.time_ns() % 10**9:09d}Z"
            if _signal_daemon(store, obj.key, "reconcile", token) is not None:
                record = store.get(obj.key)
                deadline = time.monotonic() + timeout
                handled = False
                while wait and time.monotonic() < deadline:
                    record = store.get(obj.key)
                    handled = record is not None and record.status.last_handled_reconcile_at == token
                    if handled and record is not None and record.status.ready != UNKNOWN:
                        break
                    time.sleep(0.2)
                if wait and not handled:
                    raise InputError(f"the daemon did not take up the request for '{obj.key}' within "
                                     f"{timeout:g}s",
                                     hint="is `formwright sync run` busy or stuck? see its log")
                via = "daemon"
            else:
                from formwright.cloud.session import resolve_target

                tgt = resolve_target(target, region, profile=profile)  # AWS_REGION / the profile's by default
                record = _reconcile_here(objects, obj, store, state_dir, tgt, timeout, macros, token, options)
                via = "in-process"
        finally:
            store.close()
        row = _row(obj, obj.key, record)
        if output is Output.json:
            failed = wait and row["ready"] == "False"
            emit_json({"ok": not failed, "via": via, **row,
                       **({"errors": [error_entry(f"{row['reason']}: {row['message']}")]} if failed else {})})
        else:
            console.print(
                f"{obj.key}: Ready={row['ready']} {row['reason']}: {row['message']} [dim]({via})[/]",
                highlight=False,
            )
        if wait and row["ready"] == "False":
            raise typer.Exit(1)

    def _set_suspend(name: str, directory: Path, state: Path | None, value: bool, output: Output) -> None:
        objects = load_objects(directory)
        obj = _find(objects, name)
        store = StatusStore(_state(directory, state))
        try:
            if store.get(obj.key) is None:
                store.observe(obj)
            store.set_suspended(obj.key, value)
            pid = _signal_daemon(store, obj.key, "resume" if not value else "suspend")
        finally:
            store.close()
        word = "suspended" if value else "resumed"
        if output is Output.json:
            emit_json({"ok": True, "object": obj.key, "suspended": value, "daemon": pid})
        else:
            note = "" if pid else " (takes effect when `formwright sync run` starts)"
            console.print(f"{obj.key}: {word}{note}")
            if not value and obj.spec.suspend:
                console.print("[yellow]note:[/] spec.suspend is true in the file; resumed by override")

    @sync.command("suspend")
    def suspend(name: str = typer.Argument(..., help="The object: name or namespace/name."),
                directory: Path = DirOption, state: Path | None = StateOption,
                output: Output = OutputOption) -> None:
        """Stop reconciling one object (its stack is left as it is)."""
        _set_suspend(name, directory, state, True, output)

    @sync.command("resume")
    def resume(name: str = typer.Argument(..., help="The object: name or namespace/name."),
               directory: Path = DirOption, state: Path | None = StateOption,
               output: Output = OutputOption) -> None:
        """Reconcile a suspended object again, starting now."""
        _set_suspend(name, directory, state, False, output)


def _reconcile_here(objects: ObjectSet, obj: StackObject, store: StatusStore, state_dir: Path, tgt: Any,
                    timeout: float, macros: Path | None, token: str, options: dict[str, Any]) -> Record:
    """No daemon: reconcile in this process until the object settles (Ready True or False).

    It holds the state folder's writer lock, so a daemon started meanwhile waits its turn (exit 3)."""
    from formwright.sync.daemon import sync_lock

    with sync_lock(state_dir, f"sync reconcile {obj.key}"):
        return _reconcile_locked(objects, obj, store, state_dir, tgt, timeout, macros, token, options)


def _reconcile_locked(objects: ObjectSet, obj: StackObject, store: StatusStore, state_dir: Path, tgt: Any,
                      timeout: float, macros: Path | None, token: str, options: dict[str, Any]) -> Record:
    from formwright.sync.reconcile import Reconciler
    from formwright.sync.source import Sources

    reconciler = Reconciler(tgt, Sources(state_dir / "sources"), state_dir=state_dir, save=store.save,
                            macros_dir=macros, **options)
    record = store.observe(obj)
    suspended = record.suspended if record.suspended is not None else obj.spec.suspend
    if suspended:
        raise InputError(f"'{obj.key}' is suspended", hint=f"`formwright sync resume {obj.name}` first")
    deadline = time.monotonic() + timeout
    force = True
    def dependency(key: str) -> tuple[int, Status] | None:
        found = store.get(key) if key in objects.stacks else None
        return (found.generation, found.status) if found is not None else None

    while True:
        outcome = reconciler.reconcile(obj, record.generation, record.status,
                                       repository=objects.sources.get(obj.source_key),
                                       ready_of=dependency, force_fetch=force, requested_at=token)
        force = False
        store.add_events(obj.key, outcome.events)
        outcome.status.next_run = None
        store.save(obj.key, outcome.status)
        record.status = outcome.status
        if outcome.status.ready != UNKNOWN or outcome.requeue is None or time.monotonic() > deadline:
            return record
        time.sleep(min(outcome.requeue, obj.spec.poll_interval))
