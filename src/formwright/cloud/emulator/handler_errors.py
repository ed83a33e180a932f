"""A failure of moto's as CloudFormation words a failed resource handler."""

from __future__ import annotations

from typing import Any

from formwright.cloud.emulator import schemas

# HandlerErrorCode (the resource provider contract, aws-cloudformation/cloudformation-cli) for the words
# of a service's error code, first match wins; anything else is GeneralServiceException
HANDLER_CODES = (
    (("AlreadyExists", "Duplicate", "AlreadyOwned"), "AlreadyExists"),
    (("NotFound", "NoSuch", "DoesNotExist"), "NotFound"),
    (("Throttl", "TooManyRequests"), "Throttling"),
    (("LimitExceeded",), "ServiceLimitExceeded"),
    (("AccessDenied", "Unauthorized"), "AccessDenied"),
    (("InUse", "Conflict"), "ResourceConflict"),
    (("Invalid", "Validation", "Malformed", "Missing"), "InvalidRequest"),
)


def handler_message(err: Exception, kind: str | None = None, props: dict[str, Any] | None = None) -> str:
    """A moto exception as CloudFormation words a failed resource handler:
    `Resource handler returned message: "..." (RequestToken: ..., HandlerErrorCode: ...)`, the code one
    of the contract's; AlreadyExists with the contract's own message where the identifier is known."""
    import uuid

    from moto.core.exceptions import ServiceException
    from werkzeug.exceptions import HTTPException

    text = (getattr(err, "message", None) or getattr(err, "description", None) or str(err)
            or type(err).__name__)
    raw = str(getattr(err, "code", None) or getattr(err, "error_type", None) or type(err).__name__)
    code = next((c for words, c in HANDLER_CODES if any(w in raw for w in words)), "GeneralServiceException")
    if not isinstance(err, ServiceException | HTTPException):
        # not a service's answer but moto's own code failing: said as such, never passed off as AWS's
        code = "InternalFailure"
        text = (f"Internal Failure: the local cloud's model of {kind or 'this resource'} failed "
                f"({type(err).__name__}: {err}); a limit of the local cloud, not an error of the template")
    primary = (schemas.schema(kind) or {}).get("primaryIdentifier") or [] if kind else []
    identifier = (props or {}).get(primary[0].rsplit("/", 1)[-1]) if len(primary) == 1 else None
    if code == "AlreadyExists" and isinstance(identifier, str):
        text = f"Resource of type '{kind}' with identifier '{identifier}' already exists."
    token = uuid.uuid4()
    return f'Resource handler returned message: "{text}" (RequestToken: {token}, HandlerErrorCode: {code})'
