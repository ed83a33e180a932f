"""The embedded local cloud: moto's server on 127.0.0.1, started in the background.

Its endpoint, process id and log file are recorded in a state file under the formwright home
(`$FORMWRIGHT_HOME`, default `~/.formwright`), so every later command finds it. What it holds is kept
across a stop and a start in a snapshot beside it (`formwright.cloud.persistence`).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import asdict, dataclass
from pathlib import Path

from formwright.errors import FormwrightError, InputError
from formwright.processes import pid_alive

HOST = "127.0.0.1"
# The stack tag that carries a project's `local_cloud: {stub: [...]}` to the local cloud (never to AWS).
STUB_TAG = "formwright:local-cloud:stub"
# The stack tag that carries `local_cloud: {instances: boot}` (its value `boot`) to the local cloud.
INSTANCES_TAG = "formwright:local-cloud:instances"


def formwright_home() -> Path:
    """The per-user folder for state that is not a project's (the local cloud's record)."""
    return Path(os.environ.get("FORMWRIGHT_HOME") or Path.home() / ".formwright")


@dataclass
class LocalCloud:
    """A running (or recorded) local cloud."""

    endpoint: str
    pid: int
    port: int
    log_file: str
    started_at: float
    instances: str = "stub"  # `boot`: the instances RunInstances and CreateAutoScalingGroup launch boot

    def to_json(self) -> dict:
        """The record as written to the state file."""
        return asdict(self)


def state_file() -> Path:
    """Where the running local cloud is recorded."""
    return formwright_home() / "local-cloud.json"


def snapshot_file() -> Path:
    """Where the local cloud's state is kept between a stop and a start."""
    return formwright_home() / "local-cloud.snapshot"


# how often a running local cloud writes its snapshot when something changed (besides at stop)
SNAPSHOT_INTERVAL = 60.0


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        return int(sock.getsockname()[1])


def port_file() -> Path:
    """Where the port of this home's last local cloud is kept, so that a restart keeps its endpoint."""
    return formwright_home() / "local-cloud.port"


def _port_is_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        # as the server binds: the last run's connections in TIME_WAIT do not make the port taken
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((HOST, port))
        except OSError:
            return False
    return True


def _last_port() -> int | None:
    """The last run's port when it is free again; None otherwise (never run, or taken by now)."""
    try:
        port = int(port_file().read_text().strip())
    except (FileNotFoundError, ValueError):
        return None
    return port if 0 < port < 65536 and _port_is_free(port) else None


def healthy(endpoint: str, timeout: float = 1.0) -> bool:
    """True when the moto server at `endpoint` answers its health check."""
    try:
        with urllib.request.urlopen(f"{endpoint}/moto-api/", timeout=timeout) as reply:
            return 200 <= reply.status < 500
    except (urllib.error.URLError, OSError, ValueError):
        return False


def _is_ours(pid: int) -> bool:
    """True when `pid` runs formwright's local cloud (read from /proc; assumed where there is none)."""
    try:
        return b"formwright.cloud.moto_server" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except FileNotFoundError:
        return not Path("/proc/self").exists()
    except OSError:
        return False


def read_record() -> LocalCloud | None:
    """The recorded local cloud, if the state file exists and parses."""
    try:
        data = json.loads(state_file().read_text())
        return LocalCloud(**data)
    except (FileNotFoundError, json.JSONDecodeError, TypeError):
        return None


def running() -> LocalCloud | None:
    """The recorded local cloud if it is alive and answers; stale records are removed."""
    record = read_record()
    if record is None:
        return None
    if pid_alive(record.pid) and (healthy(record.endpoint) or _busy(record)):
        return record
    state_file().unlink(missing_ok=True)
    return None


def _busy(record: LocalCloud, wait: float = 60.0) -> bool:
    """True when our local cloud, alive but slow to answer (a request holding its state, e.g. a stack deletion
    stopping booted instances), answers within `wait` seconds: its record is not to be dropped."""
    if not _is_ours(record.pid):
        return False
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline and pid_alive(record.pid):
        if healthy(record.endpoint, timeout=5.0):
            return True
        time.sleep(0.2)
    return False


def start(port: int | None = None, wait: float = 30.0, *, reset: bool = False,
          snapshot_interval: float = SNAPSHOT_INTERVAL, instances: str = "stub") -> tuple[LocalCloud, bool]:
    """Start the local cloud unless one runs, with the state its last stop kept (none with `reset`);
    return it and whether it was started now. `instances`: `boot` boots the instances launched outside a
    stack (RunInstances, CreateAutoScalingGroup)."""
    current = running()
    if current is not None:
        return current, False
    home = formwright_home()
    home.mkdir(parents=True, exist_ok=True)
    snapshot = snapshot_file()
    if reset:
        snapshot.unlink(missing_ok=True)
    elif snapshot.exists():
        _check_snapshot(snapshot)
    # The endpoint stays the same across a stop and a start while its port is free: a shell's
    # AWS_ENDPOINT_URL keeps working, and the applied cache (keyed by endpoint) keeps the next no-op free.
    port = port or _last_port() or free_port()
    endpoint = f"http://{HOST}:{port}"
    log_path = home / "local-cloud.log"
    with open(log_path, "ab") as log:
        process = subprocess.Popen(  # noqa: S603 - fixed argv, no shell
            [sys.executable, "-m", "formwright.cloud.moto_server", "-H", HOST, "-p", str(port),
             "--state", str(snapshot), "--snapshot-interval", str(snapshot_interval),
             "--instances", instances],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # survives the CLI that started it
        )
    deadline = time.monotonic() + wait
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise FormwrightError(
                f"the local cloud exited with code {process.returncode} while starting: "
                f"{_last_line(log_path)}",
                file=str(log_path),
                hint="see its log file; `formwright local-cloud start --reset` starts empty",
            )
        if healthy(endpoint, timeout=0.5):
            record = LocalCloud(endpoint, process.pid, port, str(log_path), time.time(), instances)
            state_file().write_text(json.dumps(record.to_json(), indent=2))
            port_file().write_text(f"{port}\n")
            return record, True
        time.sleep(0.1)
    process.kill()
    raise FormwrightError(f"the local cloud did not answer within {wait:.0f} s", file=str(log_path))


def _check_snapshot(snapshot: Path) -> None:
    """Refuse to start on a snapshot written by other versions, saying why (nothing is loaded)."""
    from formwright.cloud import persistence

    try:
        reason = persistence.refusal(persistence.header(snapshot))
    except persistence.SnapshotRefused as refused:
        reason = str(refused)
    if reason:
        raise InputError(f"the local cloud's snapshot {snapshot} is refused: {reason}",
                         hint="`formwright local-cloud start --reset` starts empty (and drops it)")


def _last_line(log_path: Path) -> str:
    lines = log_path.read_text(errors="replace").strip().splitlines()
    return lines[-1] if lines else "(empty log)"


def snapshot_now(record: LocalCloud) -> dict | None:
    """Have the running local cloud write its snapshot; what it answered (`stacks`: how many it keeps),
    None when it did not answer."""
    request = urllib.request.Request(f"{record.endpoint}/formwright-api/snapshot", method="POST", data=b"")
    try:
        with urllib.request.urlopen(request, timeout=120) as reply:
            return dict(json.loads(reply.read()))
    except (urllib.error.URLError, OSError, ValueError):
        return None


def reset() -> LocalCloud:
    """Empty the running local cloud (moto's reset) and its snapshot."""
    record = require()
    request = urllib.request.Request(f"{record.endpoint}/moto-api/reset", method="POST", data=b"")
    urllib.request.urlopen(request, timeout=60).read()
    snapshot_now(record)
    return record


def stop(wait: float = 30.0) -> tuple[LocalCloud | None, int | None]:
    """Stop the recorded local cloud, its state kept in the snapshot; return what was stopped (None if
    nothing ran) and how many stacks the snapshot keeps (None when it could not be written)."""
    record = read_record()
    if record is None:
        return None, None
    kept = None
    if pid_alive(record.pid) and _is_ours(record.pid):  # after a reboot the pid may be someone else's
        answer = snapshot_now(record) if healthy(record.endpoint) else None
        kept = answer.get("stacks") if answer else None
        try:
            os.killpg(record.pid, signal.SIGTERM)
        except (ProcessLookupError, PermissionError):
            with contextlib.suppress(ProcessLookupError):
                os.kill(record.pid, signal.SIGTERM)
        deadline = time.monotonic() + wait
        while pid_alive(record.pid) and time.monotonic() < deadline:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(record.pid, os.WNOHANG)
            time.sleep(0.05)
        if pid_alive(record.pid):
            os.kill(record.pid, signal.SIGKILL)
    state_file().unlink(missing_ok=True)
    return record, kept


def instances_home() -> Path:
    """Where this home's booted instances keep their state (one folder per instance id)."""
    return formwright_home() / "instances"


def remove_left_instances() -> list[str]:
    """Remove the booted instances a killed local cloud of this home left running (processes, mounts, roots,
    veths); their ids. Nothing while a local cloud of this home runs: its instances are its own."""
    if running() is not None:
        return []
    from formwright.cloud.instances.boot import remove_leftovers

    return remove_leftovers(instances_home())


def stub_tags(target: object, types: list[str]) -> list[dict[str, str]]:
    """The stack tag that lets the local cloud stub `types`; nothing on any other target.

    Types are joined by spaces (a tag value may not hold commas); the local cloud reads and drops the tag.
    """
    if getattr(target, "kind", None) != "local" or not types:
        return []
    return [{"Key": STUB_TAG, "Value": " ".join(sorted(types))}]


def instances_tags(target: object, mode: str) -> list[dict[str, str]]:
    """The stack tag that makes the local cloud boot the stack's EC2 instances; nothing otherwise."""
    if getattr(target, "kind", None) != "local" or mode != "boot":
        return []
    return [{"Key": INSTANCES_TAG, "Value": "boot"}]


def require() -> LocalCloud:
    """The running local cloud, or a clear error telling how to start it."""
    record = running()
    if record is None:
        raise InputError(
            "the local cloud is not running",
            hint="start it with `formwright local-cloud start`, or use --target aws",
        )
    return record
