"""`formwright local-cloud start|stop|status|reset`: the embedded AWS emulator on 127.0.0.1."""

from __future__ import annotations

from enum import Enum

import typer

from formwright.cli.common import Output, OutputOption, console, emit_json, error_entry, error_envelope
from formwright.cloud import local
from formwright.errors import InputError


class InstancesMode(str, Enum):  # noqa: UP042 - as cli.common.Output
    """What the local cloud does with the instances launched outside a stack."""

    boot = "boot"
    stub = "stub"


def register(app: typer.Typer) -> None:
    """Add the local-cloud command group."""
    group = typer.Typer(help="The embedded local cloud (moto's server on 127.0.0.1), the default target.",
                        no_args_is_help=True)
    app.add_typer(group, name="local-cloud")

    @group.command()
    def start(port: int = typer.Option(0, help="Port to listen on (default: the last run's port while it is "
                                               "free, so the endpoint stays the same; else a free one)."),
              reset: bool = typer.Option(False, "--reset",
                                         help="Start empty: drop the state the last stop kept."),
              snapshot_interval: float = typer.Option(
                  local.SNAPSHOT_INTERVAL, min=0,
                  help="Seconds between snapshots of the state while it runs (0: only at stop)."),
              instances: InstancesMode | None = typer.Option(
                  None, "--instances", help="`boot`: the instances RunInstances and CreateAutoScalingGroup "
                  "launch (boto3, the AWS CLI) really boot; `stub` (the default): records only. A stack's "
                  "instances follow its project's `local_cloud: {instances: ...}`."),
              output: Output = OutputOption) -> None:
        """Start the local cloud in the background (or reuse the running one), with the stacks,
        resources and data its last stop kept."""
        removed = local.remove_left_instances()  # left running by a local cloud that was killed
        mode = instances.value if instances else "stub"
        record, started = local.start(port or None, reset=reset, snapshot_interval=snapshot_interval,
                                      instances=mode)
        if not started and instances is not None and record.instances != mode:
            raise InputError(f"--instances {mode}: the running local cloud was started with --instances "
                             f"{record.instances}", hint="stop it first: formwright local-cloud stop")
        from formwright.cloud.instances.boot import unavailable

        cannot_boot = unavailable()  # `local_cloud: {instances: boot}` is refused, with this reason, when set
        if output is Output.json:
            emit_json(
                {"ok": True, "endpoint": record.endpoint, "pid": record.pid, "log": record.log_file,
                 "started": started, "snapshot": str(local.snapshot_file()),
                 "instances_boot": cannot_boot is None, "instances_boot_reason": cannot_boot,
                 "instances": record.instances,
                 "left_instances_removed": removed}
            )
            return
        _say_removed(removed)
        verb = "started" if started else "already running"
        console.print(
            f"local cloud {verb} at [bold]{record.endpoint}[/] (pid {record.pid}, log {record.log_file})"
        )
        console.print("booting instances (local_cloud: {instances: boot}): "
                      + ("available" if cannot_boot is None else f"refused here: {cannot_boot}"),
                      markup=False)
        if record.instances == "boot":
            console.print("instances launched outside a stack (RunInstances, CreateAutoScalingGroup) boot",
                          markup=False)
        console.print("stop it with: formwright local-cloud stop")

    @group.command()
    def stop(output: Output = OutputOption) -> None:
        """Stop the local cloud; its state is kept for the next start (`start --reset` drops it)."""
        record, kept = local.stop()
        removed = local.remove_left_instances()  # left running by a local cloud that was killed
        if output is Output.json:
            emit_json({"ok": True, "stopped": record is not None,
                       "endpoint": record.endpoint if record else None, "stacks_kept": kept,
                       "snapshot": str(local.snapshot_file()) if kept is not None else None,
                       "left_instances_removed": removed})
            return
        _say_removed(removed)
        if record is None:
            console.print("no local cloud was running")
        elif kept is None:
            console.print(f"local cloud at {record.endpoint} stopped; its state could not be saved "
                          "(it did not answer): the next start has the last periodic snapshot, if any")
        else:
            console.print(f"local cloud at {record.endpoint} stopped; {kept} stack(s) kept in "
                          f"{local.snapshot_file()} (the next start has them; `start --reset` starts empty)")

    @group.command()
    def reset(output: Output = OutputOption) -> None:
        """Empty the running local cloud: every stack, resource and piece of data is forgotten."""
        record = local.reset()
        if output is Output.json:
            emit_json({"ok": True, "endpoint": record.endpoint})
            return
        console.print(f"local cloud at {record.endpoint} emptied")

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


def _say_removed(removed: list[str]) -> None:
    """Name the booted instances a killed local cloud had left running, now removed."""
    if removed:
        console.print(f"removed {len(removed)} booted instance(s) a killed local cloud left running: "
                      + ", ".join(removed), markup=False)
