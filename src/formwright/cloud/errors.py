"""Turning botocore exceptions into one-line formwright errors."""

from __future__ import annotations

from botocore.exceptions import BotoCoreError, ClientError

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


def error_code(err: ClientError) -> str:
    """The AWS error code of a ClientError."""
    return str(err.response.get("Error", {}).get("Code", ""))


def error_message(err: ClientError) -> str:
    """The AWS error message of a ClientError."""
    return str(err.response.get("Error", {}).get("Message", "")) or str(err)


def translate(err: Exception, *, where: str | None = None) -> FormwrightError:
    """One line for an AWS error: access denied, throttling, validation, or anything else."""
    if isinstance(err, FormwrightError):
        return err
    if isinstance(err, ClientError):
        code, message = error_code(err), error_message(err)
        op = err.operation_name
        if code in _ACCESS:
            return CloudError(f"access denied to {op}: {message}", where=where,
                              hint="check the credentials and IAM permissions of the target")
        if code in _THROTTLE:
            return CloudError(f"{op} was throttled after all retries: {message}", where=where,
                              hint="lower --max-concurrency or try again")
        if code == "InsufficientCapabilitiesException":
            return InputError(f"{op} rejected: {message}", where=where,
                              hint="add the capability to the stack's `capabilities:` in formwright.yaml")
        if code == "ValidationError" and not any(text in message for text in _STATE_CONFLICTS):
            return InputError(f"{op} rejected: {message}", where=where)
        return CloudError(f"{op} failed ({code}): {message}", where=where)
    if isinstance(err, BotoCoreError) and "NoCredentialsError" in type(err).__name__:
        return InputError(
            "no AWS credentials found",
            where=where,
            hint="configure a profile or AWS_* variables, or use the local cloud (--target local)",
        )
    if isinstance(err, BotoCoreError) and "Internal Server Error" in str(err):
        return CloudError(
            "the target answered HTTP 500 (an internal error)",
            where=where,
            hint="on the local cloud this is usually a feature moto lacks; its log file says which",
        )
    if isinstance(err, BotoCoreError):
        return CloudError(f"cannot reach the target: {err}", where=where,
                          hint="is the local cloud running (`formwright local-cloud status`)?")
    return CloudError(f"{type(err).__name__}: {err}", where=where)
