"""`formwright local-cloud start|stop|status`: the embedded AWS emulator on 127.0.0.1."""

from __future__ import annotations

import typer

from formwright.cli.common import Output, OutputOption, console, emit_json, error_entry, error_envelope
from formwright.cloud import local


def _stacks_in() -> tuple[str, list[str]]:
    """The default region and the names of the stacks the local cloud holds there (read before a stop, so
    that it can say what goes; nothing when it cannot be read)."""
    from formwright.cloud.session import default_region, resolve_target

    region = default_region()
    try:
        cfn = resolve_target("local", region).client("cloudformation", max_attempts=1)
        pages = cfn.get_paginator("describe_stacks").paginate()
        return region, sorted(s["StackName"] for page in pages for s in page["Stacks"]
                              if s.get("StackStatus") != "DELETE_COMPLETE")
    except Exception:  # noqa: BLE001 - a stop never fails for want of a listing
        return region, []


def register(app: typer.Typer) -> None:
    """Add the local-cloud command group."""
    group = typer.Typer(help="The embedded local cloud (moto's server on 127.0.0.1), the default target.",
                        no_args_is_help=True)
    app.add_typer(group, name="local-cloud")

    @group.command()
    def start(port: int = typer.Option(0, help="Port to listen on (default: a free one)."),
              output: Output = OutputOption) -> None:
        """Start the local cloud in the background (or reuse the running one)."""
        record, started = local.start(port or None)
        if output is Output.json:
            emit_json(
                {"ok": True, "endpoint": record.endpoint, "pid": record.pid, "log": record.log_file,
                 "started": started}
            )
            return
        verb = "started" if started else "already running"
        console.print(
            f"local cloud {verb} at [bold]{record.endpoint}[/] (pid {record.pid}, log {record.log_file})"
        )
        console.print("stop it with: formwright local-cloud stop")

    @group.command()
    def stop(output: Output = OutputOption) -> None:
        """Stop the local cloud; everything in it is forgotten (it says which stacks go with it)."""
        alive = local.running()
        region, dropped = _stacks_in() if alive else (None, [])
        record = local.stop()
        if output is Output.json:
            emit_json({"ok": True, "stopped": record is not None,
                       "endpoint": record.endpoint if record else None,
                       "dropped": {"region": region, "stacks": dropped} if alive else None})
            return
        if record is None:
            console.print("no local cloud was running")
            return
        if dropped:
            shown = ", ".join(dropped[:10]) + (f", … {len(dropped) - 10} more" if len(dropped) > 10 else "")
            gone = f"dropped with it: {len(dropped)} stack(s) in {region} ({shown}) and all else it held"
        else:
            gone = f"it held no stacks in {region}; anything else in it is dropped"
        console.print(f"local cloud at {record.endpoint} stopped; {gone}", highlight=False)

    @group.command()
    def status(output: Output = OutputOption) -> None:
        """Say whether the local cloud runs, and where. Exit 1 when it does not."""
        record = local.running()
        if output is Output.json:
            answer = {"ok": True, "running": True, **record.to_json()} if record else error_envelope(
                [error_entry("the local cloud is not running", hint="formwright local-cloud start")],
                running=False)
            emit_json(answer)
        elif record:
            console.print(f"running at {record.endpoint} (pid {record.pid}, log {record.log_file})")
        else:
            console.print("not running (start it with: formwright local-cloud start)")
        if record is None:
            raise typer.Exit(1)
