"""The request a macro receives and the response it must give, as CloudFormation defines them.

See "CloudFormation macro function interface" in the CloudFormation User Guide: the event carries
region, accountId, fragment, transformId, params, requestId and templateParameterValues; the
response must echo requestId, carry status `success` (case-insensitive) and the fragment.
"""

from __future__ import annotations

import json
import time
import uuid
from typing import Any

from formwright.macros.errors import TransformationDataLimitExceeded

#: A macro is a synchronous Lambda invocation, and "for synchronous invocations, the maximum payload
#: size is 6 MB" (AWS Lambda API reference, Invoke). CloudFormation says only that it "allows some
#: buffer" for in-process templates (User Guide, "Troubleshoot the processed template"); the Lambda
#: payload bound is the documented ceiling that buffer cannot exceed, so we hold request and response
#: of every invocation to it and report `Transformation data limit exceeded` beyond it.
TRANSFORMATION_DATA_LIMIT = 6 * 1024 * 1024

_PARAMETER_LIST_TYPES = ("CommaDelimitedList", "List<")


def transform_id(name: str, account_id: str) -> str:
    """`<accountId>::<Name>` for a user macro; AWS-hosted transforms go by their own name."""
    return name if name.startswith("AWS::") else f"{account_id}::{name}"


def template_parameter_values(template: dict, given: dict[str, str] | None) -> dict[str, Any]:
    """Parameter values as CloudFormation evaluates them: given values over defaults, lists split.

    A parameter with neither a given value nor a default is left out (CloudFormation would have
    refused the stack before running macros; locally we let `expand` work without every value).
    """
    given = given or {}
    declared = template.get("Parameters")
    values: dict[str, Any] = {}
    if isinstance(declared, dict):
        for name, spec in declared.items():
            spec = spec if isinstance(spec, dict) else {}
            if name in given:
                raw: Any = given[name]
            elif "Default" in spec:
                raw = spec["Default"]
            else:
                continue
            kind = spec.get("Type", "String")
            if isinstance(kind, str) and kind.startswith(_PARAMETER_LIST_TYPES) and isinstance(raw, str):
                values[name] = [item.strip() for item in raw.split(",")] if raw else []
            elif isinstance(raw, (int, float)) and not isinstance(raw, bool):
                values[name] = str(raw)
            else:
                values[name] = raw
    for name, value in given.items():
        values.setdefault(name, value)
    return values


def build_request(
    *,
    name: str,
    fragment: Any,
    params: Any,
    region: str,
    account_id: str,
    parameter_values: dict[str, Any],
) -> dict[str, Any]:
    """The event CloudFormation sends a macro's function."""
    return {
        "region": region,
        "accountId": account_id,
        "fragment": fragment,
        "transformId": transform_id(name, account_id),
        "params": params if params is not None else {},
        "requestId": str(uuid.uuid4()),
        "templateParameterValues": parameter_values,
    }


def encode(payload: Any, *, what: str) -> bytes:
    """JSON bytes of a request or response, held to the transformation data limit."""
    try:
        data = json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    except (TypeError, ValueError) as err:
        raise ValueError(f"{what} is not JSON: {err}") from None
    check_payload(len(data), what=what)
    return data


def check_payload(size: int, *, what: str) -> None:
    """Raise `Transformation data limit exceeded` when a payload is over the bound."""
    if size > TRANSFORMATION_DATA_LIMIT:
        raise TransformationDataLimitExceeded(
            "Transformation data limit exceeded",
            hint=f"the {what} is {size} bytes, over {TRANSFORMATION_DATA_LIMIT}; split the template "
            "into nested stacks or make the macro return less",
        )


class LambdaContext:
    """The context object a Lambda handler receives, enough for macro code to run unchanged."""

    def __init__(
        self, function_name: str, region: str, account_id: str, request_id: str, timeout: float
    ) -> None:
        self.function_name = function_name
        self.function_version = "$LATEST"
        self.invoked_function_arn = f"arn:aws:lambda:{region}:{account_id}:function:{function_name}"
        self.memory_limit_in_mb = 128
        self.aws_request_id = request_id
        self.log_group_name = f"/aws/lambda/{function_name}"
        self.log_stream_name = f"formwright/{request_id}"
        self.identity = None
        self.client_context = None
        self._deadline = time.monotonic() + timeout

    def get_remaining_time_in_millis(self) -> int:
        """Milliseconds left before the invocation's timeout."""
        return max(0, int((self._deadline - time.monotonic()) * 1000))
