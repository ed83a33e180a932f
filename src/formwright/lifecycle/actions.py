"""Actions: what a trigger runs on an event — an executable (no shell) or a Python `module:function` hook.

An executable gets the JSON context on stdin and answers on stdout, one message per line:
`property:{"name", "value", "secure"}`, `log:{"level", "msg"}`, `transaction:{…}`; any other line (and
stderr) goes to the operation's log file. Exit 0 continues; a non-zero exit or a timeout fails the step.
A Python hook gets the same context as a dict and may return {"properties", "logs", "transactions"}
(lists) or a list of protocol lines. It runs in a child process (this interpreter, `-c` with a small
bootstrap that imports the module with the project folder first on sys.path, then the caller's path),
on the same JSON-on-stdin protocol, so a timeout kills it like any executable. Every secret value is
masked before anything is written.
"""

from __future__ import annotations

import json
import os
import shlex
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from formwright.engine.results import MASK


class Redactor:
    """Masks every known secret value in text and data."""

    def __init__(self, secrets: Iterable[Any] = ()) -> None:
        self.secrets: set[str] = set()
        self.add(*secrets)

    def add(self, *values: Any) -> None:
        """Treat these values as secrets from now on (short or empty ones cannot be masked sensibly)."""
        for value in values:
            text = str(value)
            if len(text) >= 3:
                self.secrets.add(text)

    def text(self, value: str) -> str:
        """The text with secrets replaced by ****, longest first."""
        for secret in sorted(self.secrets, key=len, reverse=True):
            if secret in value:
                value = value.replace(secret, MASK)
        return value

    def data(self, value: Any) -> Any:
        """A copy of plain data with every secret in a string masked."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, dict):
            return {k: self.data(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return [self.data(v) for v in value]
        return value


Echo = Callable[[str, str, str], None]  # (where, level, masked line): shown as the action runs


class OperationLog:
    """`.formwright/logs/<operation>.log`: action output and messages, secrets masked; each line also goes
    to `echo` (the CLI shows it as it comes, as `helm install` shows a hook's output)."""

    def __init__(self, path: Path, redactor: Redactor, echo: Echo | None = None) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.redactor = redactor
        self.echo = echo
        self._lock = threading.Lock()

    def write(self, where: str, text: str, level: str = "info") -> None:
        """Append lines tagged with a timestamp, the place (element/event) and a level."""
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S")
        masked = [self.redactor.text(line) for line in text.splitlines() if line]
        if not masked:
            return
        with self._lock:
            with open(self.path, "a", encoding="utf-8") as handle:
                handle.write("".join(f"{stamp} {level:<5} [{where}] {line}\n" for line in masked))
            if self.echo is not None:
                for line in masked:
                    self.echo(where, level, line)


@dataclass
class ActionResult:
    """What one action did."""

    ok: bool
    properties: list[dict[str, Any]] = field(default_factory=list)
    logs: list[dict[str, Any]] = field(default_factory=list)
    transactions: list[Any] = field(default_factory=list)
    error: str | None = None


def parse_line(line: str, result: ActionResult) -> bool:
    """Take one protocol line into `result`; False when the line is not a protocol message."""
    kind, sep, payload = line.partition(":")
    if not sep or kind not in ("property", "log", "transaction"):
        return False
    try:
        data = json.loads(payload)
    except json.JSONDecodeError:
        return False
    if kind == "property":
        if not isinstance(data, dict) or not isinstance(data.get("name"), str):
            return False
        result.properties.append({"name": data["name"], "value": "" if data.get("value") is None else
                                  str(data.get("value")), "secure": bool(data.get("secure", False))})
    elif kind == "log":
        if not isinstance(data, dict):
            return False
        result.logs.append({"level": str(data.get("level", "info")), "msg": str(data.get("msg", ""))})
    else:
        result.transactions.append(data)
    return True


def command_argv(action: str | list[str], cwd: Path) -> list[str]:
    """The argv of an executable action; a relative program path is taken from the project folder."""
    argv = shlex.split(action) if isinstance(action, str) else [str(a) for a in action]
    if argv and ("/" in argv[0] or os.sep in argv[0]) and not os.path.isabs(argv[0]):
        argv[0] = str((cwd / argv[0]).resolve())
    return argv


LAUNCH_FAILED = -1000  # _run_process could not start the program (its error says why)


def run_command(argv: list[str], context: dict[str, Any], *, cwd: Path, timeout: float, log: OperationLog,
                where: str) -> ActionResult:
    """Run an executable without a shell, context on stdin, with a timeout; parse its stdout."""
    name = Path(argv[0]).name if argv else "?"
    code, result = _run_process(argv, context, cwd=cwd, timeout=timeout, log=log, where=where)
    if code is None:
        result.error = f"{name} timed out after {timeout:g} s"
    elif code == LAUNCH_FAILED:
        pass
    elif code != 0:
        result.error = f"{name} exited with code {code}" + (f": {result.error}" if result.error else "")
    return result


def _run_process(argv: list[str], context: dict[str, Any], *, cwd: Path, timeout: float, log: OperationLog,
                 where: str) -> tuple[int | None, ActionResult]:
    """Run argv in its own session, context on stdin; (exit code, None on a timeout or LAUNCH_FAILED, and
    the parsed output).

    On a non-zero exit `error` holds the last stderr line (masked); on a timeout the whole process group
    is killed and reaped before this returns.
    """
    payload = json.dumps(context, default=str).encode("utf-8")
    try:
        process = subprocess.Popen(  # noqa: S603 - argv from the manifest, never a shell
            argv, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            start_new_session=True)
    except OSError as exc:
        return LAUNCH_FAILED, ActionResult(False, error=f"cannot run {argv[0]}: {exc.strerror or exc}")
    result = ActionResult(True)
    err_lines: list[str] = []
    readers = [threading.Thread(target=_read_lines, args=(process.stdout, log, where, result, None),
                                daemon=True),
               threading.Thread(target=_read_lines, args=(process.stderr, log, where, None, err_lines),
                                daemon=True)]
    for reader in readers:
        reader.start()
    _feed(process, payload)
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(process)
        _finish(process, readers, log, where)
        result.ok = False
        return None, result
    _finish(process, readers, log, where)
    if process.returncode != 0:
        result.ok = False
        tail = [line for line in err_lines if line.strip()][-1:]
        result.error = log.redactor.text(tail[0].strip())[:200] if tail else None
    return process.returncode, result


def _feed(process: subprocess.Popen, payload: bytes) -> None:
    """The context on the action's stdin, then end of input (an action that reads nothing is fine)."""
    assert process.stdin is not None
    try:
        process.stdin.write(payload)
        process.stdin.close()
    except (BrokenPipeError, OSError):
        pass


def _read_lines(pipe: Any, log: OperationLog, where: str, result: ActionResult | None,
                kept: list[str] | None) -> None:
    """Each line of an action's stdout (`result`: protocol lines parsed, others logged as `out`) or stderr
    (logged as `err`, kept for the error message) as it is written, so that it is shown while the action
    runs."""
    for raw in iter(pipe.readline, b""):
        line = raw.decode("utf-8", "replace").rstrip("\r\n")
        if result is not None:
            if not parse_line(line, result):
                log.write(where, line, "out")
        else:
            assert kept is not None
            kept.append(line)
            log.write(where, line, "err")


def _finish(process: subprocess.Popen, readers: list[threading.Thread], log: OperationLog,
            where: str) -> None:
    """Reap the action and read the rest of its output, without waiting for pipes that a child which left
    its process group (a daemon) still holds open."""
    process.wait()
    for reader in readers:
        reader.join(timeout=1)  # a reader still blocked past that is a daemon's pipe: left to end with it
    if any(reader.is_alive() for reader in readers):
        log.write(where, "(output lost: a child of the action that left its process group keeps it open)",
                  "warn")


def _kill_group(process: subprocess.Popen) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        process.kill()


# The child side of a Python hook: argv[1] is `module:function`, argv[2] the caller's sys.path (JSON);
# the context comes on stdin. The return value is turned into protocol lines on stdout; an exception
# is one `Type: message` line on stderr and exit code 70.
_PYTHON_BOOTSTRAP = """
import json, os, sys
target, extra = sys.argv[1], json.loads(sys.argv[2])
sys.argv = [target]
sys.path[:0] = [os.getcwd()]
sys.path.extend(p for p in extra if p not in sys.path)
module_name, _, function_name = target.partition(":")
context = json.load(sys.stdin)
try:
    import importlib
    value = getattr(importlib.import_module(module_name), function_name)(context)
except BaseException as exc:
    sys.stdout.flush()
    print(type(exc).__name__ + ": " + str(exc).replace("\\n", " "), file=sys.stderr)
    sys.stderr.flush()
    os._exit(70)
lines = []
if isinstance(value, dict):
    for kind, key in (("property", "properties"), ("log", "logs"), ("transaction", "transactions")):
        lines += [kind + ":" + json.dumps(item, default=str) for item in value.get(key) or []]
elif isinstance(value, list):
    lines = [str(line) for line in value]
sys.stdout.flush()
sys.stdout.write("".join(line + "\\n" for line in lines))
sys.stdout.flush()
"""


def run_python(target: str, context: dict[str, Any], *, cwd: Path, timeout: float, log: OperationLog,
               where: str) -> ActionResult:
    """Call a `module:function` hook with the context in a child Python process, with a timeout.

    The project folder comes first on the child's sys.path, then this process's path, so the hook imports
    what it would in-process. A hook that overruns its timeout is killed (its whole process group).
    """
    target = target.strip()
    argv = [sys.executable, "-c", _PYTHON_BOOTSTRAP, target, json.dumps([p for p in sys.path if p])]
    code, result = _run_process(argv, context, cwd=cwd, timeout=timeout, log=log, where=where)
    if code is None:
        result.error = f"{target} timed out after {timeout:g} s"
    elif code != 0 and code != LAUNCH_FAILED:
        result.error = f"{target} failed: {result.error or f'exit code {code}'}"
    return result
