"""Lambda-backed custom resources (`Custom::*`, `AWS::CloudFormation::CustomResource`) in the local cloud.

CloudFormation's protocol ("CloudFormation custom resource request and response reference", AWS
CloudFormation User Guide): the function named by `ServiceToken` gets a request (RequestType Create,
Update with OldResourceProperties, or Delete; ResponseURL, StackId, RequestId, ResourceType,
LogicalResourceId, PhysicalResourceId, ResourceProperties) and answers by PUTting a response document
(Status, Reason, PhysicalResourceId, StackId, RequestId, LogicalResourceId, NoEcho, Data) to the
pre-signed ResponseURL. Here the URL is served by the local cloud itself (`receive`, a path that
looks like CloudFormation's S3 response bucket, signed with a secret of this local cloud); `Data` is
what Fn::GetAtt gives; FAILED fails the resource with its Reason in CloudFormation's words.

CloudFormation waits for the response up to ServiceTimeout (default 3600 s). The local cloud waits up
to the smaller of ServiceTimeout and FORMWRIGHT_CUSTOM_RESOURCE_TIMEOUT (default 120 s), and stops
waiting as soon as the function's invocation ended without a response (CloudFormation would wait out
the timeout for a response that cannot come). The function runs in a thread of its own, and the state
lock (state.py) is released while the request waits for it.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, quote

from formwright.cloud.lambda_runtime import contract, invoke
from formwright.cloud.lambda_runtime import state as shared

CUSTOM = "AWS::CloudFormation::CustomResource"
RESPONSE_BUCKET = "cloudformation-custom-resource-response-"
DEFAULT_LOCAL_TIMEOUT = 120.0
MAX_RESPONSE = 4096  # "The total size of the response body can't exceed 4096 bytes."

_secret = secrets.token_bytes(32)
_changed = threading.Condition()
_pending: dict[str, _Pending] = {}


@dataclass
class _Pending:
    body: bytes | None = None  # the response document as PUT
    outcome: Any = None  # the invocation's runner.Outcome once it ended
    refused: str | None = None


def is_custom(kind: str) -> bool:
    """True for the custom resource types."""
    return kind.startswith("Custom::") or kind == CUSTOM


def local_timeout() -> float:
    """How long the local cloud waits for a response at most (FORMWRIGHT_CUSTOM_RESOURCE_TIMEOUT)."""
    try:
        return float(os.environ.get("FORMWRIGHT_CUSTOM_RESOURCE_TIMEOUT") or DEFAULT_LOCAL_TIMEOUT)
    except ValueError:
        return DEFAULT_LOCAL_TIMEOUT


class Failure(Exception):
    """A custom resource request failed; the message is the resource's status reason. `leftover`: what a
    failed request left for the rollback: after a Create, the resource it deletes (CloudFormation sends
    it Delete, with the PhysicalResourceId of the FAILED response); after an Update, the resource it
    sends the old properties."""

    def __init__(self, reason: str, physical: str | None = None) -> None:
        super().__init__(reason)
        self.physical = physical
        self.leftover: CustomResource | None = None


@dataclass
class CustomResource:
    """A custom resource the local cloud made: what its provider answered."""

    logical_resource_id: str
    cf_resource_type: str
    stack_id: str
    account_id: str
    region: str
    properties: dict[str, Any]
    physical_resource_id: str
    data: dict[str, Any] = field(default_factory=dict)

    def get_cfn_attribute(self, name: str) -> Any:
        """Fn::GetAtt: a key of the response's Data."""
        if name not in self.data:
            key = f"{self.stack_id}|{self.logical_resource_id}|{self.physical_resource_id}"
            raise Failure(f"CustomResource attribute error: Vendor response doesn't contain {name} key in "
                          f"object {key} in S3 bucket {RESPONSE_BUCKET}{self.region.replace('-', '')}")
        return self.data[name]

    def update(self, properties: dict[str, Any]) -> CustomResource:
        """Send Update; the resource as answered (a new object when the PhysicalResourceId changed:
        CloudFormation then deletes the old one in its clean-up)."""
        try:
            answer = send("Update", self.cf_resource_type, self.logical_resource_id, self.stack_id,
                          self.account_id, self.region, properties, self.physical_resource_id,
                          self.properties)
        except Failure as failure:
            # CloudFormation rolls a failed Update back with another Update, from the properties it tried
            self.properties, failure.leftover = properties, self
            raise
        physical = str(answer.get("PhysicalResourceId") or self.physical_resource_id)
        if physical != self.physical_resource_id:
            return CustomResource(self.logical_resource_id, self.cf_resource_type, self.stack_id,
                                  self.account_id, self.region, properties, physical,
                                  answer.get("Data") or {})
        self.properties, self.data = properties, answer.get("Data") or {}
        return self

    def delete(self, account_id: str, region_name: str) -> None:
        """Send Delete (on stack deletion, removal from the template, replacement or rollback)."""
        send("Delete", self.cf_resource_type, self.logical_resource_id, self.stack_id, account_id,
             region_name, self.properties, self.physical_resource_id)


def create(logical: str, kind: str, properties: dict[str, Any], stack_id: str, account: str,
           region: str) -> CustomResource:
    """Send Create and make the resource from the response; raises Failure."""
    try:
        answer = send("Create", kind, logical, stack_id, account, region, properties)
    except Failure as failure:
        if failure.physical:
            failure.leftover = CustomResource(logical, kind, stack_id, account, region, properties,
                                              failure.physical)
        raise
    return CustomResource(logical, kind, stack_id, account, region, properties,
                          str(answer["PhysicalResourceId"]), answer.get("Data") or {})


def send(request_type: str, kind: str, logical: str, stack_id: str, account: str, region: str,
         properties: dict[str, Any], physical: str | None = None,
         old_properties: dict[str, Any] | None = None) -> dict[str, Any]:
    """Send one request to the provider and wait for its response; the response document, or Failure
    with CloudFormation's reason."""
    token = str(properties.get("ServiceToken") or "")
    function = _function(token, account, region)
    request_id = str(uuid.uuid4())
    request: dict[str, Any] = {
        "RequestType": request_type, "ServiceToken": token,
        "ResponseURL": response_url(region, stack_id, logical, request_id), "StackId": stack_id,
        "RequestId": request_id, "ResourceType": kind, "LogicalResourceId": logical,
        "ResourceProperties": stringified(properties)}
    if physical is not None:
        request["PhysicalResourceId"] = physical
    if old_properties is not None:
        request["OldResourceProperties"] = stringified(old_properties)
    pending = _Pending()
    with _changed:
        _pending[request_id] = pending
    try:
        with shared.released():  # the provider calls the local cloud back: nothing is held meanwhile
            _run(function, request, pending)
            _wait(pending, _deadline(properties))
    finally:
        with _changed:
            _pending.pop(request_id, None)
    return _answer(pending, request, function, _deadline_seconds(properties))


def stringified(value: Any) -> Any:
    """Properties as CloudFormation sends them to a provider: every scalar a string."""
    if isinstance(value, dict):
        return {k: stringified(v) for k, v in value.items()}
    if isinstance(value, list):
        return [stringified(v) for v in value]
    if isinstance(value, bool):
        return "true" if value else "false"
    return value if isinstance(value, str) or value is None else str(value)


def _function(token: str, account: str, region: str) -> Any:
    from moto.awslambda.utils import get_backend

    if ":lambda:" not in token:
        raise Failure(f"The local cloud invokes Lambda-backed custom resources only: ServiceToken "
                      f"{token or '(none)'} is not a Lambda function's ARN (SNS-backed custom resources are "
                      "not emulated)")
    try:
        return get_backend(account, region).get_function(token)
    except Exception:  # noqa: BLE001 - moto answers a missing function with one of several errors
        raise Failure(f"Invalid service token: function {token} does not exist") from None


def _run(function: Any, request: dict[str, Any], pending: _Pending) -> None:
    """Invoke the provider in a thread (CloudFormation invokes it asynchronously)."""
    def target() -> None:
        try:
            outcome = invoke.call(function, json.dumps(request).encode("utf-8"))
        except contract.Refused as err:
            with _changed:
                pending.refused = str(err)
                _changed.notify_all()
            return
        with _changed:
            pending.outcome = outcome
            _changed.notify_all()

    name = f"custom-resource-{request['LogicalResourceId']}"
    threading.Thread(target=target, name=name, daemon=True).start()


def _deadline_seconds(properties: dict[str, Any]) -> float:
    try:
        service = float(properties.get("ServiceTimeout") or 3600)
    except (TypeError, ValueError):
        service = 3600.0
    return min(service, local_timeout())


def _deadline(properties: dict[str, Any]) -> float:
    return time.monotonic() + _deadline_seconds(properties)


def _wait(pending: _Pending, deadline: float) -> None:
    with _changed:
        while pending.body is None and pending.outcome is None and pending.refused is None:
            left = deadline - time.monotonic()
            if left <= 0:
                return
            _changed.wait(left)


def _answer(pending: _Pending, request: dict[str, Any], function: Any, waited: float) -> dict[str, Any]:
    """The response document, or Failure with CloudFormation's reason for what came instead."""
    if pending.refused is not None:
        raise Failure(pending.refused)
    request_id = request["RequestId"]
    if pending.body is None:
        why = f"it waited {waited:g} s"
        if pending.outcome is not None:
            error = pending.outcome.error()
            why = (f"function {function.function_name} ended without sending one"
                   + (f" ({error.get('errorType')}: {error.get('errorMessage')})" if error else ""))
        raise Failure("CloudFormation did not receive a response from your Custom Resource. Please check "
                      f"your logs for requestId [{request_id}]. (The local cloud stopped waiting: {why}; "
                      "CloudFormation waits the resource's ServiceTimeout, 3600 s by default)")
    if len(pending.body) > MAX_RESPONSE:
        raise Failure("Response object is too long.")
    try:
        answer = json.loads(pending.body)
    except ValueError as err:
        raise Failure(f"Invalid response object: the response is not JSON ({err})") from None
    if not isinstance(answer, dict) or answer.get("Status") not in ("SUCCESS", "FAILED"):
        raise Failure("Invalid response object: Status must be SUCCESS or FAILED")
    if answer["Status"] == "FAILED":
        raise Failure(f"Received response status [FAILED] from custom resource. Message returned: "
                      f"{answer.get('Reason') or ''} (RequestId: {request_id})",
                      str(answer.get("PhysicalResourceId") or "") or None)
    if not answer.get("PhysicalResourceId") and request["RequestType"] != "Delete":
        raise Failure("Invalid PhysicalResourceId")
    if not isinstance(answer.get("Data") or {}, dict):
        raise Failure("Invalid response object: Data must be an object")
    return answer


# ---- the ResponseURL, served by the local cloud ------------------------------------------------------------

def response_url(region: str, stack_id: str, logical: str, request_id: str) -> str:
    """A URL of the form of CloudFormation's pre-signed S3 response URL, answered by `receive`."""
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    key = quote(f"{stack_id}|{logical}|{request_id}", safe="")
    return (f"{invoke.endpoint()}/{RESPONSE_BUCKET}{region.replace('-', '')}/{key}"
            f"?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Date={stamp}&X-Amz-SignedHeaders=host&X-Amz-Expires=7200"
            f"&X-Amz-Credential=formwright-local-cloud&X-Amz-Signature={_signature(request_id)}")


def _signature(request_id: str) -> str:
    return hmac.new(_secret, request_id.encode(), hashlib.sha256).hexdigest()


def is_response(environ: dict[str, Any]) -> bool:
    """True for a request to a ResponseURL."""
    return str(environ.get("PATH_INFO", "")).startswith(f"/{RESPONSE_BUCKET}")


def receive(environ: dict[str, Any], start_response: Any) -> list[bytes]:
    """The WSGI answer to a PUT on a ResponseURL: the response is handed to the waiting request, as S3
    would keep the object CloudFormation reads."""
    request_id = str(environ.get("PATH_INFO", "")).rsplit("|", 1)[-1]
    signature = (parse_qs(str(environ.get("QUERY_STRING", ""))).get("X-Amz-Signature") or [""])[0]
    if environ.get("REQUEST_METHOD") != "PUT" or not hmac.compare_digest(signature, _signature(request_id)):
        return s3_error(start_response, "403 Forbidden", "SignatureDoesNotMatch",
                         "The request signature we calculated does not match the signature you provided.")
    length = int(environ.get("CONTENT_LENGTH") or 0)
    body = environ["wsgi.input"].read(length) if length else environ["wsgi.input"].read()
    with _changed:
        pending = _pending.get(request_id)
        if pending is not None and pending.body is None:
            pending.body = body
            _changed.notify_all()
    if pending is None:
        return s3_error(start_response, "403 Forbidden", "AccessDenied", "Request has expired")
    start_response("200 OK", [("ETag", f'"{hashlib.md5(body).hexdigest()}"'),  # noqa: S324 - S3's ETag
                              ("Content-Length", "0")])
    return [b""]


def s3_error(start_response: Any, status: str, code: str, message: str) -> list[bytes]:
    """An S3 error document as the answer (a pre-signed URL refused, as S3 refuses it)."""
    body = (f'<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>{code}</Code><Message>{message}</Message>'
            "</Error>").encode()
    start_response(status, [("Content-Type", "application/xml"), ("Content-Length", str(len(body)))])
    return [body]
