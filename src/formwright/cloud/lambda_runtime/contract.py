"""What Lambda promises a function, as data: which runtimes the local cloud runs, the environment
variables and context it sets, and the documents it answers with when the function does not.

Sources: "Defined runtime environment variables" and "Using the Lambda context object" (AWS Lambda
Developer Guide), "Troubleshoot invocation issues in Lambda" (Sandbox.Timedout, Runtime.ExitError).
"""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import subprocess
import sys
from typing import Any

#: Credentials a function gets in the local cloud (Lambda gives its role's; moto accepts any).
FAKE_CREDENTIALS = {"AWS_ACCESS_KEY_ID": "ASIAFORMWRIGHTLOCAL0", "AWS_SECRET_ACCESS_KEY": "formwright-local",
                    "AWS_SESSION_TOKEN": "formwright-local"}
#: Lambda's default function settings (CreateFunction, API Reference)
DEFAULT_TIMEOUT, DEFAULT_MEMORY = 3, 128


class Refused(Exception):
    """The local cloud cannot run this function (its runtime or package type); the message says why."""


def family(runtime: str | None) -> str | None:
    """'python' or 'node' for the runtimes the local cloud runs, else None."""
    if runtime and re.fullmatch(r"python3\.\d+", runtime):
        return "python"
    if runtime and re.fullmatch(r"nodejs(\d+\.x)?", runtime):
        return "node"
    return None


def refusal(function: Any) -> str | None:
    """Why the local cloud cannot run `function` (a moto LambdaFunction), or None when it can."""
    name = function.function_name
    if getattr(function, "package_type", "Zip") == "Image":
        what = "container image functions"
    elif family(function.run_time) is None:
        what = f"runtime {function.run_time or '(none)'}"
    else:
        return None
    return (f"The local cloud cannot run {what} (function {name}): it runs python3.x and nodejs functions "
            "from their .zip code, without Docker. Deploy with --target aws to run it")


def interpreter(runtime: str) -> list[str]:
    """The command that runs a function of `runtime`: `python3.N` when installed (else the local cloud's
    own Python), `node` for nodejs."""
    if family(runtime) == "node":
        found = shutil.which("node")
        if found is None:
            raise Refused(f"The local cloud cannot run runtime {runtime}: no `node` on PATH. Install Node.js")
        return [found]
    return [_python(runtime), "-I", "-S", "-u"]


@functools.cache
def _python(runtime: str) -> str:
    """`python3.N` when one that runs is installed (a pyenv shim may name a version it lacks), else the
    local cloud's own interpreter; asked once per runtime."""
    found = shutil.which(runtime)
    if found:
        try:
            answer = subprocess.run([found, "-I", "-S", "-c", "import sys; print(sys.executable)"],  # noqa: S603
                                    capture_output=True, text=True, timeout=30, check=True)
            if answer.stdout.strip():
                return answer.stdout.strip()
        except (OSError, subprocess.SubprocessError):
            pass
    return sys.executable


@functools.cache
def _node_major() -> str:
    """The major version of the `node` that runs Node.js functions (its layers' nodejs/nodeNN folder)."""
    try:
        answer = subprocess.run([interpreter("nodejs")[0], "--version"], capture_output=True, text=True,  # noqa: S603
                                timeout=30, check=True)
    except (OSError, subprocess.SubprocessError, Refused):
        return ""
    return answer.stdout.strip().lstrip("v").split(".")[0]


def log_stream(date: str, request_id: str) -> str:
    """The log stream of one invocation, in Lambda's form `YYYY/MM/DD/[$LATEST]id`."""
    return f"{date}/[$LATEST]{request_id.replace('-', '')}"


def environment(function: Any, stream: str, task_root: str, runtime_dir: str, scratch: str,
                endpoint: str, layers: list[str]) -> dict[str, str]:
    """The variables a function sees: Lambda's reserved ones, AWS_ENDPOINT_URL at the local cloud and
    fake credentials (the SDKs then call the local cloud), then the function's own. `layers`: the
    unpacked layers, the first winning (what Lambda's /opt would be)."""
    memory = str(function.memory_size or DEFAULT_MEMORY)
    env = {
        "PATH": os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin"),
        "LANG": "en_US.UTF-8",
        "TZ": ":UTC",
        "HOME": scratch,
        "TMPDIR": scratch,
        "_HANDLER": str(function.handler),
        "AWS_REGION": function.region,
        "AWS_DEFAULT_REGION": function.region,
        "AWS_EXECUTION_ENV": f"AWS_Lambda_{function.run_time}",
        "AWS_LAMBDA_FUNCTION_NAME": function.function_name,
        "AWS_LAMBDA_FUNCTION_MEMORY_SIZE": memory,
        "AWS_LAMBDA_FUNCTION_VERSION": "$LATEST",
        "AWS_LAMBDA_INITIALIZATION_TYPE": "on-demand",
        "AWS_LAMBDA_LOG_GROUP_NAME": f"/aws/lambda/{function.function_name}",
        "AWS_LAMBDA_LOG_STREAM_NAME": stream,
        "AWS_ENDPOINT_URL": endpoint,
        "LAMBDA_TASK_ROOT": task_root,
        "LAMBDA_RUNTIME_DIR": runtime_dir,
        **FAKE_CREDENTIALS,
    }
    if family(function.run_time) == "node":  # Lambda's NODE_PATH, with each layer's folders for /opt
        major = _node_major()
        env["NODE_PATH"] = os.pathsep.join([*(f"{layer}/nodejs/node{major}/node_modules" for layer in layers),
                                            *(f"{layer}/nodejs/node_modules" for layer in layers), task_root])
    env["PATH"] = os.pathsep.join([*(f"{layer}/bin" for layer in layers), env["PATH"]])
    env.update({str(k): str(v) for k, v in (function.environment_vars or {}).items()})
    return env


def context(function: Any, request_id: str, stream: str) -> dict[str, Any]:
    """The context object's fields (get_remaining_time_in_millis is computed by the child)."""
    return {
        "function_name": function.function_name, "function_version": "$LATEST",
        "invoked_function_arn": function.function_arn,
        # a string, as Lambda's Python runtime reads it from AWS_LAMBDA_FUNCTION_MEMORY_SIZE
        "memory_limit_in_mb": str(function.memory_size or DEFAULT_MEMORY),
        "aws_request_id": request_id, "log_group_name": f"/aws/lambda/{function.function_name}",
        "log_stream_name": stream,
    }


def timed_out(request_id: str, seconds: float) -> bytes:
    """Lambda's answer for an invocation that ran past its timeout."""
    message = f"RequestId: {request_id} Error: Task timed out after {seconds:.2f} seconds"
    return json.dumps({"errorType": "Sandbox.Timedout", "errorMessage": message}).encode()


def exited(request_id: str, returncode: int) -> bytes:
    """Lambda's answer when the runtime's process ended without answering."""
    how = f"signal: {_signal_name(-returncode)}" if returncode < 0 else f"exit status {returncode}"
    message = f"RequestId: {request_id} Error: Runtime exited with error: {how}"
    return json.dumps({"errorType": "Runtime.ExitError", "errorMessage": message}).encode()


def _signal_name(number: int) -> str:
    import signal

    try:
        return {"SIGKILL": "killed", "SIGSEGV": "segmentation fault", "SIGABRT": "aborted"}.get(
            signal.Signals(number).name, signal.Signals(number).name.lower())
    except ValueError:
        return str(number)
