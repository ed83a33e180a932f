"""A warm `formwright` for the suite's CLI calls: each call is a real child process of its own, forked from a
process that already imported what the CLI imports, instead of a new interpreter that imports it all again
(~0.5 s of CPU per call; the suite has ~460 run_cli call sites, many of them parametrized or in loops).

Each call gets what `python -m formwright ARGS` gets: a new process (its own pid, killed on the call's
timeout), the call's argv, environment and working folder, stdin /dev/null and stdout/stderr on pipes read
to their end, `sys.path[0]` the working folder, `formwright.__main__` (or the console script) run by runpy
as the interpreter runs it, and its exit code (-N for a death by signal N, as subprocess reports it). What it
skips is the interpreter's start-up and the imports made before the fork (so a warning printed while
importing would show once in the zygote, not per call). Start-up is proved where it is the subject, by
tests that start a cold interpreter themselves (tests/cli/test_exit.py, test_coercion.py,
tests/tosca/test_cli.py), and a call whose environment changes what start-up reads (a PYTHON* variable,
e.g. PYTHONPATH for plugins) runs cold too.

Run as a script, this file is that warm process (the "zygote"): it listens on a UNIX socket until its stdin
closes. Per request it forks a supervisor that forks the worker, waits for it and reports its exit status,
so the zygote itself stays single-threaded and never waits on a call.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import locale
import os
import select
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

# What the commands the suite calls most import (sys.modules at the exit of `deploy`, `plan`, `validate`,
# `status`, `instance create`, `transform tosca`), imported before the fork. A name missing here is simply
# imported by the call that needs it.
PRELOAD = (
    "formwright.cli.main", "formwright.cli.common", "formwright.cli.deploy_cmds", "formwright.cli.plan_cmds",
    "formwright.cli.inspect_cmds", "formwright.cli.progress", "formwright.cli.project",
    "formwright.cli.render", "formwright.cli.validation", "formwright.cli.instance",
    "formwright.cli.operate_cmds", "formwright.cli.stacks_cmds", "formwright.cli.author_cmds",
    "formwright.cli.transform", "formwright.engine.runner", "formwright.engine.planning",
    "formwright.engine.group", "formwright.engine.drift", "formwright.engine.prune",
    "formwright.engine.adopt",
    "formwright.lifecycle.operations", "formwright.lifecycle.actions", "formwright.macros.engine",
    "formwright.model.project", "formwright.packaging.packager", "formwright.state.applied",
    "formwright.state.lock", "formwright.cloud.local", "formwright.cloud.session", "formwright.template.lint",
    "formwright.tosca.parser", "boto3", "botocore.session", "botocore.client", "botocore.parsers",
    "botocore.serialize", "botocore.credentials", "rich.console", "rich.table", "rich.live", "yaml", "jinja2",
    "cfnlint.runner", "cfnlint.decode.decode", "cfnlint.config",
)


def _send(conn: socket.socket, payload: dict, fds: list[int] | None = None) -> None:
    data = json.dumps(payload).encode()
    header = struct.pack("!I", len(data))
    if fds:
        socket.send_fds(conn, [header], fds)
    else:
        conn.sendall(header)
    conn.sendall(data)


def _exactly(conn: socket.socket, size: int) -> bytes:
    chunks = []
    while size:
        chunk = conn.recv(size)
        if not chunk:
            raise EOFError("the other end closed")
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def _receive(conn: socket.socket, fds: int = 0) -> tuple[dict, list[int]]:
    if fds:
        header, passed, _, _ = socket.recv_fds(conn, 4, fds)
        header += _exactly(conn, 4 - len(header))
    else:
        header, passed = _exactly(conn, 4), []
    (size,) = struct.unpack("!I", header)
    return json.loads(_exactly(conn, size)), list(passed)


def _serve(path: str) -> dict:
    """The zygote's loop; returns (in a worker only) the request that worker is to run."""
    for name in PRELOAD:
        with contextlib.suppress(ImportError):
            importlib.import_module(name)
    assert threading.active_count() == 1, "an import started a thread: forking would not be safe"
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    listener.listen(64)
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    while True:
        with contextlib.suppress(ChildProcessError):
            while os.waitpid(-1, os.WNOHANG)[0]:
                pass
        ready, _, _ = select.select([listener, sys.stdin], [], [], 1.0)
        if sys.stdin in ready and not os.read(sys.stdin.fileno(), 1):
            os._exit(0)  # the test session ended
        if listener not in ready:
            continue
        conn, _ = listener.accept()
        if os.fork():
            conn.close()
            continue
        request = _supervise(conn, listener)
        if request is not None:
            return request


def _supervise(conn: socket.socket, listener: socket.socket) -> dict | None:
    """The supervisor of one call (a fork of the zygote): fork the worker and return its request in it;
    here, report the worker's pid and then its exit status, and end."""
    try:
        listener.close()
        request, fds = _receive(conn, 3)
        worker = os.fork()
        if worker == 0:
            conn.close()
            for target, fd in enumerate(fds):
                os.dup2(fd, target)
                os.close(fd)
            return request
        for fd in fds:
            os.close(fd)
        _send(conn, {"pid": worker})
        _, status = os.waitpid(worker, 0)
        _send(conn, {"code": os.waitstatus_to_exitcode(status)})
    except BaseException:  # noqa: BLE001 - the client sees the closed socket
        pass
    os._exit(0)


def _run_worker(request: dict) -> None:
    """Become `python -m formwright ARGS` (or the console script at `script`) in the request's folder and
    environment."""
    import runpy

    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    script = request.get("script")
    # the interpreter puts the working folder first for `-m`, the script's folder for a script
    sys.path[0] = os.path.dirname(script) if script else request["cwd"]
    sys.argv = ["formwright", *request["args"]]
    if script:
        runpy.run_path(script, run_name="__main__")
    else:
        runpy.run_module("formwright", run_name="__main__", alter_sys=True)


class WarmCli:
    """The client side: start the zygote once, then run calls through it."""

    def __init__(self) -> None:
        self.folder = tempfile.mkdtemp(prefix="fw-warm-")  # short: a socket's path has ~100 bytes at most
        self.path = os.path.join(self.folder, "zygote.sock")
        self.env = {k: v for k, v in os.environ.items() if k.startswith("PYTHON")}
        self.process = subprocess.Popen([sys.executable, str(Path(__file__).resolve()), self.path],
                                        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert self.process.stdout is not None
        if self.process.stdout.readline().strip() != "ready":
            raise RuntimeError("the warm formwright did not start")

    def close(self) -> None:
        """End the zygote (calls still running finish on their own)."""
        if self.process.stdin:
            self.process.stdin.close()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(10)
        shutil.rmtree(self.folder, ignore_errors=True)

    def serves(self, env: dict[str, str]) -> bool:
        """Whether a call with this environment may run warm: start-up reads the same PYTHON* variables."""
        return {k: v for k, v in env.items() if k.startswith("PYTHON")} == self.env

    def popen(self, args: list[str], env: dict[str, str], cwd: Path | str | None,
              script: str | None = None) -> WarmProcess:
        """What `subprocess.Popen([python, -m, formwright, *args], stdin=DEVNULL, stdout=PIPE, stderr=PIPE,
        text=True, ...)` starts (with `script`: the console script at that path), warm."""
        folder = str(Path(cwd).resolve()) if cwd is not None else os.getcwd()
        out_read, out_write = os.pipe()
        err_read, err_write = os.pipe()
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            with open(os.devnull, "rb") as null:
                conn.connect(self.path)
                _send(conn, {"args": list(args), "env": env, "cwd": folder, "script": script},
                      [null.fileno(), out_write, err_write])
            pid = _receive(conn)[0]["pid"]
        except BaseException:
            conn.close()
            os.close(out_read)
            os.close(err_read)
            raise
        finally:
            os.close(out_write)
            os.close(err_write)
        return WarmProcess(["formwright", *args], pid, conn, out_read, err_read)

    def run(self, args: list[str], env: dict[str, str], cwd: Path | None,
            timeout: float) -> subprocess.CompletedProcess:
        """What `subprocess.run([python, -m, formwright, *args], capture_output=True, text=True,
        stdin=DEVNULL, timeout=...)` returns, warm: on the timeout the worker is killed and TimeoutExpired
        raised."""
        process = self.popen(args, env, cwd)
        try:
            out, err = process.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.communicate()
            raise
        return subprocess.CompletedProcess(process.args, process.wait(), out, err)


class WarmProcess:
    """The part of subprocess.Popen the suite uses, for one warm call: `pid`, `returncode`, `wait`, `poll`,
    `communicate` (output read from the pipes to their end, so a process the call leaves running with them
    open holds it, as with Popen), `send_signal`, `terminate`, `kill`."""

    def __init__(self, args: list[str], pid: int, conn: socket.socket, out: int, err: int) -> None:
        encoding = locale.getpreferredencoding(False)
        self.args = args
        self.pid = pid
        self.returncode: int | None = None
        self._conn = conn
        # text mode as Popen's: the locale's encoding, universal newlines
        self.stdout = open(out, encoding=encoding)  # noqa: SIM115 - closed by communicate
        self.stderr = open(err, encoding=encoding)  # noqa: SIM115 - closed by communicate
        self._readers: list[threading.Thread] = []
        self._read: dict[str, str] = {}

    def poll(self) -> int | None:
        """The exit code, or None while it runs."""
        if self.returncode is None and select.select([self._conn], [], [], 0)[0]:
            self.wait()
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        """Wait for the exit code (TimeoutExpired after `timeout` seconds)."""
        if self.returncode is None:
            self._conn.settimeout(timeout)
            try:
                self.returncode = int(_receive(self._conn)[0]["code"])
            except TimeoutError:
                raise subprocess.TimeoutExpired(self.args, timeout or 0) from None
            self._conn.close()
        return self.returncode

    def communicate(self, timeout: float | None = None) -> tuple[str, str]:
        """Read stdout and stderr to their end and wait for the exit; (stdout, stderr)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        if not self._readers:
            for name, stream in (("out", self.stdout), ("err", self.stderr)):
                reader = threading.Thread(target=self._read_all, args=(name, stream), daemon=True)
                reader.start()
                self._readers.append(reader)
        for reader in self._readers:
            reader.join(None if deadline is None else max(0.0, deadline - time.monotonic()))
            if reader.is_alive():
                raise subprocess.TimeoutExpired(self.args, timeout or 0)
        self.wait(None if deadline is None else max(0.01, deadline - time.monotonic()))
        return self._read["out"], self._read["err"]

    def _read_all(self, name: str, stream) -> None:
        with stream:
            self._read[name] = stream.read()

    def send_signal(self, number: int) -> None:
        """Signal the process (nothing once it has ended)."""
        if self.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, number)

    def terminate(self) -> None:
        """SIGTERM."""
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        """SIGKILL."""
        self.send_signal(signal.SIGKILL)


if __name__ == "__main__":
    _run_worker(_serve(sys.argv[1]))
