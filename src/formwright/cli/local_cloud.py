"""`formwright local-cloud start|stop|status`: the embedded AWS emulator on 127.0.0.1."""

from __future__ import annotations

import typer

from formwright.cli.common import Output, OutputOption, console, emit_json, error_entry, error_envelope
from formwright.cloud import local


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
        from formwright.cloud.instances.boot import unavailable

        cannot_boot = unavailable()  # `local_cloud: {instances: boot}` is refused, with this reason, when set
        if output is Output.json:
            emit_json(
                {"ok": True, "endpoint": record.endpoint, "pid": record.pid, "log": record.log_file,
                 "started": started, "instances_boot": cannot_boot is None,
                 "instances_boot_reason": cannot_boot}
            )
            return
        verb = "started" if started else "already running"
        console.print(
            f"local cloud {verb} at [bold]{record.endpoint}[/] (pid {record.pid}, log {record.log_file})"
        )
        console.print("booting instances (local_cloud: {instances: boot}): "
                      + ("available" if cannot_boot is None else f"refused here: {cannot_boot}"),
                      markup=False)
        console.print("stop it with: formwright local-cloud stop")

    @group.command()
    def stop(output: Output = OutputOption) -> None:
        """Stop the local cloud; everything in it is forgotten."""
        record = local.stop()
        if output is Output.json:
            emit_json({"ok": True, "stopped": record is not None,
                       "endpoint": record.endpoint if record else None})
            return
        console.print(f"local cloud at {record.endpoint} stopped" if record else "no local cloud was running")

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
