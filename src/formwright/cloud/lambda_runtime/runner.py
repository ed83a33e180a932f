"""Running one invocation of a function in a child process, under Lambda's contract.

The isolation is the local macros' (formwright.macros.isolation): a fresh process per invocation in
its own process group (a timeout kills the group: nothing it started is left), the environment built
from nothing but Lambda's variables and the function's own, the working folder and import path its
unpacked code. Besides: resource limits set before the runtime starts (open files as Lambda's 1024,
the largest file as the function's ephemeral storage, no core files; the address space of a Python
function and the heap of a Node.js one from its MemorySize), and a private scratch folder as HOME and
TMPDIR (Lambda's /tmp), removed afterwards. It is not a security sandbox: the function runs as the
local cloud's user and can read what that user can by absolute path.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from formwright.cloud.lambda_runtime import artifact, contract
from formwright.processes import wait_or_kill_group

HERE = Path(__file__).parent
#: Sets the child's resource limits and (on Linux) its death with the thread that started it, so a local
#: cloud that stops leaves no function running; then becomes the runtime (preexec_fn is unsafe in the
#: threaded server).
_LIMITS_SHIM = r"""
import json, os, resource, sys
try:
    import ctypes
    ctypes.CDLL(None).prctl(1, 9)  # PR_SET_PDEATHSIG, SIGKILL
except (OSError, AttributeError):
    pass
for name, value in json.loads(sys.argv[1]).items():
    kind = getattr(resource, name)
    hard = resource.getrlimit(kind)[1]
    value = value if hard == resource.RLIM_INFINITY else min(value, hard)
    resource.setrlimit(kind, (value, value))
os.execv(sys.argv[2], sys.argv[2:])
"""
#: A Python function's address space may exceed its MemorySize by this much (thread stacks and shared
#: libraries count there, not in Lambda's limit).
ADDRESS_SPACE_HEADROOM_MB = 256


@dataclass
class Outcome:
    """What one invocation gave: the response or Lambda's error document, and its log lines."""

    request_id: str
    payload: bytes
    failed: bool  # True: the payload is an error document (X-Amz-Function-Error: Unhandled)
    lines: list[tuple[int, str]] = field(default_factory=list)  # (epoch ms, text), START to REPORT
    stream: str = ""

    def error(self) -> dict[str, Any]:
        """The error document (empty when the invocation succeeded)."""
        if not self.failed:
            return {}
        try:
            found = json.loads(self.payload)
        except ValueError:
            return {"errorMessage": self.payload.decode("utf-8", "replace")}
        return found if isinstance(found, dict) else {}

    def log_text(self) -> str:
        """The invocation's log as text (for X-Amz-Log-Result)."""
        return "".join(line + "\n" for _, line in self.lines)


def run(function: Any, event: bytes, endpoint: str, request_id: str | None = None) -> Outcome:
    """Invoke `function` (a moto LambdaFunction) on `event` (JSON bytes); raises contract.Refused when
    the local cloud cannot run it."""
    reason = contract.refusal(function)
    if reason:
        raise contract.Refused(reason)
    request_id = request_id or str(uuid.uuid4())
    task = artifact.task_root(function)
    # a later layer wins, as when Lambda extracts them into /opt in order
    layers = [str(root) for root in reversed(artifact.layer_roots(function))]
    stream = contract.log_stream(time.strftime("%Y/%m/%d", time.gmtime()), request_id)
    timeout = float(function.timeout or contract.DEFAULT_TIMEOUT)
    memory = int(function.memory_size or contract.DEFAULT_MEMORY)
    lines: list[tuple[int, str]] = [(_now(), f"START RequestId: {request_id} Version: $LATEST")]
    with tempfile.TemporaryDirectory(prefix="formwright-lambda-run-") as scratch_dir:
        scratch = Path(scratch_dir)  # the invocation's files; its `tmp` is the function's /tmp and HOME
        (scratch / "tmp").mkdir()
        spec = {"handler": function.handler or "", "task_root": str(task), "layers": layers,
                "event": str(scratch / ".event"),
                "response": str(scratch / ".response"), "error": str(scratch / ".error"),
                "deadline": time.time() + timeout, "context": contract.context(function, request_id, stream)}
        (scratch / ".event").write_bytes(event or b"{}")
        command = _command(function.run_time, memory, scratch, spec)
        runtime_dir = str(spec.get("runtime_dir") or HERE)
        began = time.monotonic()
        env = contract.environment(function, stream, str(task), runtime_dir, str(scratch / "tmp"), endpoint,
                                   layers)
        child = subprocess.Popen(  # noqa: S603 - our interpreter, shim and bootstrap; no shell
            command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
            cwd=str(task), start_new_session=True, env=env)
        reader = threading.Thread(target=_read_lines, args=(child, lines), daemon=True)
        reader.start()
        timed_out = wait_or_kill_group(child, timeout)
        reader.join(timeout=5)
        took = (time.monotonic() - began) * 1000
        if timed_out:
            now = time.time()
            stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now)) + f".{int(now % 1 * 1000):03d}Z"
            lines.append((_now(), f"{stamp} {request_id} Task timed out after {timeout:.2f} seconds"))
            payload, failed = contract.timed_out(request_id, timeout), True
        elif (scratch / ".response").exists():
            payload, failed = (scratch / ".response").read_bytes(), False
        elif (scratch / ".error").exists():
            payload, failed = (scratch / ".error").read_bytes(), True
        else:
            payload, failed = contract.exited(request_id, child.returncode), True
            lines.append((_now(), json.loads(payload)["errorMessage"]))
    lines.append((_now(), f"END RequestId: {request_id}"))
    lines.append((_now(), f"REPORT RequestId: {request_id}\tDuration: {took:.2f} ms\tBilled Duration: "
                          f"{max(1, round(took))} ms\tMemory Size: {memory} MB"))
    return Outcome(request_id, payload, failed, lines, stream)


def _command(runtime: str, memory: int, scratch: Path, spec: dict[str, Any]) -> list[str]:
    """The shim setting the limits, then the runtime's interpreter running the bootstrap on the spec."""
    spec_path = scratch / ".spec.json"
    limits = {"RLIMIT_NOFILE": 1024, "RLIMIT_CORE": 0, "RLIMIT_FSIZE": 512 * 1024 * 1024}
    if contract.family(runtime) == "node":
        runtime_command = [*contract.interpreter(runtime), f"--max-old-space-size={memory}",
                           str(HERE / "bootstrap.js"), str(spec_path)]
    else:
        limits["RLIMIT_AS"] = (memory + ADDRESS_SPACE_HEADROOM_MB) * 1024 * 1024
        spec["runtime_dir"] = str(artifact.python_runtime_dir())
        runtime_command = [*contract.interpreter(runtime), str(HERE / "bootstrap.py"), str(spec_path)]
    spec_path.write_text(json.dumps(spec), encoding="utf-8")
    return [sys.executable, "-I", "-S", "-c", _LIMITS_SHIM, json.dumps(limits), *runtime_command]


def _read_lines(child: subprocess.Popen, lines: list[tuple[int, str]]) -> None:
    """Collect the child's output line by line, each with the time it came (CloudWatch's timestamp)."""
    assert child.stdout is not None
    for raw in child.stdout:
        lines.append((_now(), raw.decode("utf-8", "replace").rstrip("\n")))


def _now() -> int:
    return int(time.time() * 1000)
