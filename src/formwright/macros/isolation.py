"""Running one macro handler invocation the way Lambda would: in its own process.

Each invocation starts a fresh interpreter (a fresh module cache: two macros may both have a
`helpers.py`) with the handler's folder as working folder and first on the import path, an
environment like Lambda's plus the macro's declared variables, and its stdout/stderr appended to the
macro's log file (Lambda sends them to CloudWatch Logs). The child is its own process group: a timeout
kills the group, so nothing it started is left behind. The bootstrap is a few lines of plain Python
(it imports nothing of formwright) to keep the start cost low.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

from formwright.macros.errors import MacroFailed
from formwright.processes import kill_group, wait_or_kill_group

__all__ = ["Invocation", "invoke", "kill_group", "lambda_environment", "log_file", "read_log"]

#: Variables of the parent passed on: what the interpreter and AWS SDKs need to work, as a Lambda
#: function has a PATH and its role's credentials.
_PASSED_ON = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "SYSTEMROOT", "AWS_ACCESS_KEY_ID",
              "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_CONFIG_FILE",
              "AWS_SHARED_CREDENTIALS_FILE", "AWS_CA_BUNDLE", "AWS_ENDPOINT_URL")

_BOOTSTRAP = r"""
import importlib, importlib.util, json, os, sys, time, traceback
spec = json.loads(sys.argv[1])
def answer(payload):
    with open(spec["answer"], "w", encoding="utf-8") as handle:
        json.dump(payload, handle)
class Context:
    def __init__(self):
        for key, value in spec["context"].items():
            setattr(self, key, value)
        self.identity = None
        self.client_context = None
    def get_remaining_time_in_millis(self):
        return max(0, int((spec["deadline"] - time.time()) * 1000))
def where(err):
    frames = traceback.extract_tb(err.__traceback__)
    return f" ({frames[-1].filename}:{frames[-1].lineno})" if frames else ""
try:
    with open(spec["event"], encoding="utf-8") as handle:
        event = json.load(handle)
    sys.path.insert(0, os.getcwd())
    if spec.get("entry_point"):
        module_name, _, attr = spec["entry_point"].partition(":")
        handler = importlib.import_module(module_name)
        for part in attr.split("."):
            handler = getattr(handler, part)
    else:
        handler = getattr(importlib.import_module(spec["module"]), spec["function"], None)
    if not callable(handler):
        answer({"error": f"{spec['module']}.py has no function {spec['function']}(event, context)"})
        sys.exit(0)
    result = handler(event, Context())
    try:
        text = json.dumps(result)
    except (TypeError, ValueError) as err:
        answer({"error": f"the response is not JSON: {err}"})
    else:
        with open(spec["answer"], "w", encoding="utf-8") as handle:
            handle.write('{"response": ' + text + "}")
except SystemExit as err:
    if not os.path.exists(spec["answer"]):
        answer({"error": f"the handler exited with code {err.code}"})
except BaseException as err:
    traceback.print_exc()
    answer({"error": f"the handler raised {type(err).__name__}: {err}{where(err)}"})
"""


@dataclass
class Invocation:
    """What one handler call needs: where its code is, its name, environment, timeout and log."""

    name: str
    folder: Path
    module: str = "index"
    function: str = "handler"
    entry_point: str | None = None
    environment: dict[str, str] = field(default_factory=dict)
    timeout: float = 60.0
    log: Path | None = None
    #: Import path entries beyond the interpreter's own (an entry point's package, where installed).
    python_path: list[str] = field(default_factory=list)


def log_file(name: str) -> Path:
    """The macro's log, like its CloudWatch log group: `$FORMWRIGHT_HOME/logs/macros/<name>.log`."""
    from formwright.cloud.local import formwright_home

    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in name)
    return formwright_home() / "logs" / "macros" / f"{safe}.log"


def lambda_environment(call: Invocation, region: str, request_id: str) -> dict[str, str]:
    """The variables a Python Lambda function sees, then the macro's own."""
    env = {key: os.environ[key] for key in _PASSED_ON if key in os.environ}
    env.update({
        "AWS_REGION": region,
        "AWS_DEFAULT_REGION": region,
        "AWS_LAMBDA_FUNCTION_NAME": call.name,
        "AWS_LAMBDA_FUNCTION_VERSION": "$LATEST",
        "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "128",
        "AWS_LAMBDA_FUNCTION_TIMEOUT": str(int(call.timeout)),
        "AWS_LAMBDA_LOG_GROUP_NAME": f"/aws/lambda/{call.name}",
        "AWS_LAMBDA_LOG_STREAM_NAME": f"formwright/{request_id}",
        "AWS_EXECUTION_ENV": f"AWS_Lambda_python{sys.version_info.major}.{sys.version_info.minor}",
        "LAMBDA_TASK_ROOT": str(call.folder),
        "_HANDLER": call.entry_point or f"{call.module}.{call.function}",
        "TZ": ":UTC",
        "PYTHONUNBUFFERED": "1",
        "PYTHONDONTWRITEBYTECODE": "1",
    })
    if call.python_path:
        env["PYTHONPATH"] = os.pathsep.join(call.python_path)
    env.update({str(k): str(v) for k, v in call.environment.items()})
    return env


def invoke(call: Invocation, event: dict[str, Any], region: str, account_id: str) -> Any:
    """Run the handler once on `event` in a child process; its JSON response, or MacroFailed saying
    what went wrong, with the tail of its output and where its log is."""
    request_id = str(event.get("requestId", ""))
    log = call.log or log_file(call.name)
    log.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="formwright-macro-") as scratch:
        event_path, answer_path = Path(scratch) / "event.json", Path(scratch) / "answer.json"
        event_path.write_text(json.dumps(event), encoding="utf-8")
        spec = {
            "event": str(event_path), "answer": str(answer_path), "module": call.module,
            "function": call.function, "entry_point": call.entry_point,
            "deadline": time.time() + call.timeout,
            "context": {
                "function_name": call.name, "function_version": "$LATEST", "memory_limit_in_mb": 128,
                "invoked_function_arn": f"arn:aws:lambda:{region}:{account_id}:function:{call.name}",
                "aws_request_id": request_id, "log_group_name": f"/aws/lambda/{call.name}",
                "log_stream_name": f"formwright/{request_id}",
            },
        }
        with open(log, "ab") as out:
            start = out.tell()
            out.write(f"START RequestId: {request_id} Version: $LATEST\n".encode())
            out.flush()
            began = time.monotonic()
            try:
                child = subprocess.Popen(  # noqa: S603 - our own interpreter and bootstrap, no shell
                    [sys.executable, "-c", _BOOTSTRAP, json.dumps(spec)], stdin=subprocess.DEVNULL,
                    stdout=out, stderr=out, cwd=str(call.folder),
                    env=lambda_environment(call, region, request_id), start_new_session=True,
                )
            except OSError as err:
                raise MacroFailed(f"cannot start the handler: {err.strerror or err}") from None
            timed_out = wait_or_kill_group(child, call.timeout)
            took = (time.monotonic() - began) * 1000
            out.write(f"END RequestId: {request_id}\nREPORT RequestId: {request_id}\t"
                      f"Duration: {took:.2f} ms\n".encode())
        answer = _read_answer(answer_path)
    if timed_out:
        _fail(f"Task timed out after {call.timeout:g} seconds", log, start)
    if answer is None:
        _fail(f"the handler's process ended with exit code {child.returncode} without answering", log, start)
    if "error" in answer:
        _fail(str(answer["error"]), log, start)
    return answer["response"]


def _read_answer(path: Path) -> dict | None:
    try:
        answer = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return answer if isinstance(answer, dict) else None


def _fail(message: str, log: Path, start: int) -> NoReturn:
    """MacroFailed with the last lines the handler printed in this invocation and the log's path."""
    with open(log, "rb") as handle:
        handle.seek(start)
        lines = [line for line in handle.read().decode("utf-8", "replace").splitlines()
                 if line.strip() and not line.startswith(("START RequestId", "END RequestId", "REPORT"))]
    tail = " | ".join(line.strip() for line in lines[-3:])[:400]
    hint = (f"its output: {tail}; " if tail else "") + f"log: {log}"
    raise MacroFailed(message, hint=hint)


def read_log(log: Path, start: int = 0) -> str:
    """The log from byte `start` (for --verbose)."""
    try:
        with open(log, "rb") as handle:
            handle.seek(start)
            return handle.read().decode("utf-8", "replace")
    except OSError:
        return ""
