"""Turning botocore exceptions into one-line formwright errors, and telling passing faults from real ones."""

from __future__ import annotations

import threading
from typing import Any

from botocore.exceptions import (
    BotoCoreError,
    ClientError,
    ConnectionClosedError,
    ConnectTimeoutError,
    EndpointConnectionError,
    ProfileNotFound,
    ReadTimeoutError,
)
from botocore.parsers import ResponseParserError

from formwright.errors import CloudError, FormwrightError, InputError

_ACCESS = {
    "AccessDenied",
    "AccessDeniedException",
    "UnauthorizedOperation",
    "ExpiredToken",
    "InvalidClientTokenId",
}
# ValidationErrors that describe the stack's state, not the input: the cloud said no, exit 1.
_STATE_CONFLICTS = ("state and can not be", "is in ", "does not exist", "already exists", "cannot be deleted")
_THROTTLE = {"Throttling", "ThrottlingException", "RequestLimitExceeded", "TooManyRequestsException"}
_PASSING = (EndpointConnectionError, ConnectionClosedError, ConnectTimeoutError, ReadTimeoutError)
_last_status = threading.local()
_target = {"kind": "local"}  # the kind of the target last resolved: its hints name the right fix


def set_target_kind(kind: str) -> None:
    """Remember which target (local or aws) errors come from, for their hints."""
    _target["kind"] = kind


def remember_http_status(client: Any) -> None:
    """Keep the HTTP status of each response of `client` (per thread): a page botocore cannot parse
    (ResponseParserError) carries none, yet its status tells whose fault it was."""

    def keep(response_dict: dict[str, Any], **_: Any) -> None:
        _last_status.code = response_dict.get("status_code")

    client.meta.events.register("before-parse", keep)


def http_status(err: Exception) -> int | None:
    """The HTTP status of the response that raised `err`, when known."""
    if isinstance(err, ClientError):
        return err.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
    if isinstance(err, ResponseParserError):
        return getattr(_last_status, "code", None)
    return None


def is_transient(err: Exception) -> bool:
    """True for a fault that a later identical read may not meet: throttling, HTTP 5xx, a dropped
    connection, a page that is not an AWS answer. Never true for access or validation errors."""
    if isinstance(err, ClientError):
        return error_code(err) in _THROTTLE or (http_status(err) or 0) >= 500
    if isinstance(err, ResponseParserError):  # a gateway's page: passing unless it refused us (4xx)
        return not 400 <= (http_status(err) or 0) < 500
    return isinstance(err, _PASSING)


def error_code(err: ClientError) -> str:
    """The AWS error code of a ClientError."""
    return str(err.response.get("Error", {}).get("Code", ""))


def error_message(err: ClientError) -> str:
    """The AWS error message of a ClientError."""
    return str(err.response.get("Error", {}).get("Message", "")) or str(err)


def translate(err: Exception, *, where: str | None = None, target: str | None = None) -> FormwrightError:
    """One line for an AWS error: access denied, throttling, validation, or anything else.

    `target` (local or aws; default: the target last resolved) chooses the hints: no local-cloud
    advice for AWS."""
    if isinstance(err, FormwrightError):
        return err
    local = (target or _target["kind"]) == "local"
    if isinstance(err, ClientError):
        code, message = error_code(err), error_message(err)
        op = err.operation_name
        if code in _ACCESS:
            return CloudError(f"access denied to {op}: {message}", where=where,
                              hint="check the credentials and IAM permissions of the target")
        if code in _THROTTLE:
            return CloudError(f"{op} was throttled after all retries: {message}", where=where,
                              hint="lower --max-concurrency or try again")
        status: int = http_status(err) or 0
        if code.isdigit() or (code == "Unknown" and status):
            return CloudError(f"{op}: the endpoint answered HTTP {status} with a page that is not an AWS "
                              f"answer ({message})", where=where,
                              hint="on the local cloud this is usually a feature moto lacks; its log file "
                              "says which" if local and status == 500 else
                              "the endpoint's fault, not the request's: a proxy or gateway in between?")
        if code == "InsufficientCapabilitiesException":
            return InputError(f"{op} rejected: {message}", where=where,
                              hint="add the capability to the stack's `capabilities:` in formwright.yaml")
        if code == "ValidationError" and not any(text in message for text in _STATE_CONFLICTS):
            return InputError(f"{op} rejected: {message}", where=where)
        return CloudError(f"{op} failed ({code}): {message}", where=where)
    if isinstance(err, ResponseParserError):
        page_status = http_status(err)
        answered = f"HTTP {page_status} with " if page_status else ""
        return CloudError(f"the endpoint answered {answered}a page that is not an AWS answer", where=where,
                          hint="the endpoint's fault, not the request's: a proxy or gateway in between?")
    if isinstance(err, ProfileNotFound):
        return InputError(str(err), where=where, hint="name a profile from ~/.aws/config (aws configure "
                          "list-profiles), or unset AWS_PROFILE")
    if isinstance(err, BotoCoreError) and "NoCredentialsError" in type(err).__name__:
        return InputError(
            "no AWS credentials found",
            where=where,
            hint="configure a profile or AWS_* variables" + (", or use the local cloud (--target local)"
                                                             if local else ""),
        )
    if isinstance(err, BotoCoreError) and "Internal Server Error" in str(err):
        return CloudError(
            "the target answered HTTP 500 (an internal error)",
            where=where,
            hint="on the local cloud this is usually a feature moto lacks; its log file says which" if local
            else "the endpoint's fault: try again later",
        )
    if isinstance(err, BotoCoreError):
        return CloudError(f"cannot reach the target: {err}", where=where,
                          hint="is the local cloud running (`formwright local-cloud status`)?" if local
                          else "check the network, the region and AWS_ENDPOINT_URL")
    return CloudError(f"{type(err).__name__}: {err}", where=where)
