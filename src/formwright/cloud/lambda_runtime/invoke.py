"""Lambda's Invoke in the local cloud: moto's `LambdaFunction.invoke` (which needs Docker) replaced by
a run in a child process (runner.py), its output saved to CloudWatch Logs (logs.py).

Invocation types as the Invoke API defines them: RequestResponse answers the function's response, or
its error document with `X-Amz-Function-Error: Unhandled` (HTTP 200, as Lambda answers a failed
function); Event answers 202 at once and runs the function in the background; DryRun answers 204
without running it. `LogType: Tail` adds the last 4 KB of the log as `X-Amz-Log-Result`. A runtime
the local cloud cannot run is refused by name with InvalidRuntimeException (HTTP 400 here, not
Lambda's 502, so that SDKs do not retry what cannot change).
"""

from __future__ import annotations

import base64
import json
import logging
import threading
from typing import Any

from formwright.cloud.lambda_runtime import contract, logs, runner, state

_endpoint = {"url": "http://127.0.0.1:5000"}  # moto's default port, until `set_endpoint` says ours
log = logging.getLogger(__name__)


def set_endpoint(url: str) -> None:
    """Where the local cloud answers: the functions' AWS_ENDPOINT_URL and custom resources' ResponseURL."""
    _endpoint["url"] = url


def endpoint() -> str:
    """The local cloud's endpoint, as `set_endpoint` recorded it."""
    return _endpoint["url"]


def call(function: Any, event: bytes, request_id: str | None = None) -> runner.Outcome:
    """Run the function once and keep its log; raises contract.Refused when it cannot run here. Nothing is
    held while it runs (it calls the local cloud back); its log is saved holding the state."""
    with state.released():
        outcome = runner.run(function, event, endpoint(), request_id)
    with state.held():
        logs.save(function, outcome)
    return outcome


def in_background(function: Any, event: bytes) -> None:
    """Run the function once without waiting (InvocationType Event, S3 notifications)."""
    def quietly() -> None:
        try:
            call(function, event)
        except contract.Refused as err:  # nobody waits for the answer: the local cloud's log says it
            log.warning("%s", err)

    threading.Thread(target=quietly, name=f"lambda-{function.function_name}", daemon=True).start()


def _client_error(code: str, message: str) -> Exception:
    from moto.awslambda.exceptions import LambdaClientError

    return LambdaClientError(code, message)


def _header(headers: Any, name: str) -> str | None:
    if not headers:
        return None
    return headers.get(name) or headers.get(name.lower())


def invoke(function: Any, body: Any, request_headers: Any, response_headers: dict[str, Any]) -> bytes:
    """moto's LambdaFunction.invoke, answered by running the function (installed by install.py)."""
    kind = _header(request_headers, "X-Amz-Invocation-Type") or "RequestResponse"
    reason = contract.refusal(function)
    if reason:
        raise _client_error("InvalidRuntimeException", reason)
    event = body.encode("utf-8") if isinstance(body, str) else (body or b"{}")
    try:
        json.loads(event)
    except ValueError as err:
        raise _client_error("InvalidRequestContentException",
                            f"Could not parse request body into json: {err}") from None
    if kind == "DryRun":
        return b""
    if kind == "Event":
        in_background(function, event)
        return b""
    try:
        outcome = call(function, event)
    except contract.Refused as err:
        raise _client_error("InvalidRuntimeException", str(err)) from None
    response_headers["x-amz-executed-version"] = "$LATEST"
    if outcome.failed:
        response_headers["x-amz-function-error"] = "Unhandled"
    if _header(request_headers, "X-Amz-Log-Type") == "Tail":
        tail = outcome.log_text().encode("utf-8")[-4096:]
        response_headers["x-amz-log-result"] = base64.b64encode(tail).decode("ascii")
    return outcome.payload
