"""The local cloud's hot CloudFormation reads, answered without moto's per-request machinery.

A DescribeStacks through moto costs ~4.7 ms of the local cloud's CPU: Flask/werkzeug routing, moto's
per-request class set-up, and its generic response serializer, which resolves every member of every
stack through a chain of alias providers on each call. formwright's own share is ~0.03 ms. The
no-op deploy and the plan of a large project are nearly only such reads, so the local cloud answers
the reads in `ACTIONS` here, ahead of moto's application (`formwright.cloud.serving` calls `answer`
under the state lock):

- the same backend calls as moto's response handlers (`describe_stacks`, `list_stacks`,
  `describe_stack_events`, `describe_change_set`), with moto's paging of DescribeStacks (50 stacks a
  page, the NextToken being the last stack's id);
- the same XML: the operation's output shape from the same service model, each member read from the
  backend's objects by the attribute names moto's `XFormedAttributePicker` tries (asked of moto once
  per member and class, then kept), moto's response transformers (Tags and Parameters as lists), its
  timestamp format and its error shapes (`Stack with id X does not exist`: a 400 ValidationError);
- anything else — another action or service, an unexpected parameter, JSON asked for, moto's IAM
  checks switched on, a header `x-formwright-path: moto`, a backend not made yet, or any failure while
  answering — goes on to moto unchanged (`answer` returns None).

tests/localcloud/test_fast_reads.py renders a variety of stacks through both paths and compares what
botocore parses of each.
"""

from __future__ import annotations

import io
import os
import secrets
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qsl
from xml.sax.saxutils import escape

Answer = tuple[str, list[tuple[str, str]], bytes]
BYPASS_HEADER = "HTTP_X_FORMWRIGHT_PATH"  # `x-formwright-path: moto` sends a request down moto's path
ANSWERED_HEADER = "x-formwright-path"  # on the fast path's answers: `fast`
VERSION = "2010-05-15"
PAGE = 50  # moto's DescribeStacks page (moto.cloudformation.responses.describe_stacks)

# the parameters each action reads (anything else given goes to moto); a list parameter ends in "[]"
ACTIONS: dict[str, tuple[str, ...]] = {
    "DescribeStacks": ("StackName", "NextToken"),
    "ListStacks": ("StackStatusFilter[]",),
    "DescribeStackEvents": ("StackName",),
    "DescribeChangeSet": ("ChangeSetName", "StackName"),
}


class _Pass(Exception):
    """This request is moto's to answer."""


def answer(environ: dict[str, Any]) -> Answer | None:
    """The response (status, headers, body) to a hot read, or None to leave the request to moto."""
    if environ.get("REQUEST_METHOD") != "POST" or environ.get("PATH_INFO") not in ("/", "") \
            or environ.get(BYPASS_HEADER) == "moto":
        return None
    if "/cloudformation/aws4_request" not in environ.get("HTTP_AUTHORIZATION", "") \
            or not environ.get("CONTENT_TYPE", "").startswith("application/x-www-form-urlencoded"):
        return None
    body = environ.get("wsgi.input")
    if not isinstance(body, io.BytesIO):  # the body is read (serving._read_body) before the lock is taken
        return None
    try:
        params = _params(body.getvalue().decode())
        return _answer(environ, params)
    except _Pass:
        return None
    except Exception:  # noqa: BLE001 - whatever fails here is answered by moto's own path, as before
        return None


def _params(text: str) -> dict[str, Any]:
    """The query protocol's parameters: lists (`Name.member.N`) gathered in order."""
    params: dict[str, Any] = {}
    members: dict[str, list[tuple[int, str]]] = {}
    for key, value in parse_qsl(text, keep_blank_values=True):
        name, _, index = key.partition(".member.")
        if index:
            if not index.isdigit():
                raise _Pass
            members.setdefault(name + "[]", []).append((int(index), value))
        elif key in params:
            raise _Pass
        else:
            params[key] = value
    for name, items in members.items():
        params[name] = [v for _, v in sorted(items)]
    return params


def _answer(environ: dict[str, Any], params: dict[str, Any]) -> Answer:
    from moto import settings

    action = params.pop("Action", None)
    if action not in ACTIONS or params.pop("Version", None) != VERSION \
            or any(k not in ACTIONS[action] or v == "" for k, v in params.items()) \
            or float("inf") != settings.INITIAL_NO_AUTH_ACTION_COUNT:
        raise _Pass
    backend = _backend(environ)
    try:
        result = READS[action](backend, params)
    except Exception as err:
        from moto.core.exceptions import ServiceException

        if isinstance(err, ServiceException):
            return _error(action, err)
        raise
    return _respond("200 OK", _document(action, result))


def _backend(environ: dict[str, Any]) -> Any:
    """The CloudFormation backend moto would answer from (its account and region, as moto reads them)."""
    from moto.cloudformation.models import cloudformation_backends
    from moto.cloudformation.responses import CloudFormationResponse
    from werkzeug.datastructures import EnvironHeaders

    headers = EnvironHeaders(environ)
    reader = CloudFormationResponse()
    reader.headers = headers
    reader.querystring = {}
    url = f"{environ.get('wsgi.url_scheme', 'http')}://{environ.get('HTTP_HOST', '')}/"
    region = reader.get_region_from_url(_Request(headers), url)
    account = reader.get_current_account()
    regions = dict.get(cloudformation_backends, account)
    backend = dict.get(regions, region) if regions is not None else None
    if backend is None:  # moto makes a backend on first use: its own path does that
        raise _Pass
    return backend


class _Request:
    """What moto's `get_region_from_url` reads of a request."""

    def __init__(self, headers: Any) -> None:
        self.headers = headers


def _describe_stacks(backend: Any, params: dict[str, Any]) -> dict[str, Any]:
    stacks = backend.describe_stacks(params.get("StackName"))
    start = 0
    token = params.get("NextToken")
    if token:
        ids = [stack.stack_id for stack in stacks]
        if token not in ids:
            raise _Pass  # moto fails on an unknown token: its own path answers it
        start = ids.index(token) + 1
    page = stacks[start:start + PAGE]
    return {"Stacks": page, "NextToken": page[-1].stack_id if len(stacks) > start + PAGE else None}


def _list_stacks(backend: Any, params: dict[str, Any]) -> dict[str, Any]:
    return {"StackSummaries": backend.list_stacks(params.get("StackStatusFilter[]", []))}


def _describe_stack_events(backend: Any, params: dict[str, Any]) -> dict[str, Any]:
    return {"StackEvents": backend.describe_stack_events(params.get("StackName"))[::-1]}


def _describe_change_set(backend: Any, params: dict[str, Any]) -> Any:
    return backend.describe_change_set(change_set_name=params.get("ChangeSetName"))


READS: dict[str, Callable[[Any, dict[str, Any]], Any]] = {
    "DescribeStacks": _describe_stacks,
    "ListStacks": _list_stacks,
    "DescribeStackEvents": _describe_stack_events,
    "DescribeChangeSet": _describe_change_set,
}


def _respond(status: str, body: str, *extra: tuple[str, str]) -> Answer:
    """The answer with moto's headers, and a request id (52 characters, as moto's) in them and the body."""
    request_id = secrets.token_hex(26)
    headers = [("Content-Type", "text/xml"), *extra, ("x-amzn-requestid", request_id),
               ("Access-Control-Allow-Origin", "*"), (ANSWERED_HEADER, "fast")]
    return status, headers, body.replace("<RequestId>request-id</RequestId>",
                                         f"<RequestId>{request_id}</RequestId>", 1).encode()


def _element(name: str, inner: str) -> str:
    return f"<{name}>{inner}</{name}>" if inner else f"<{name}/>"


def _document(action: str, result: Any) -> str:
    """moto's QuerySerializer document: the result in its wrapper, and the response metadata."""
    from formwright.cloud.fast_render import render_output

    model = _service_model()
    operation = model.operation_model(action)
    shape = operation.output_shape
    wrapper = shape.serialization.get("resultWrapper", f"{shape.name}Result")
    inner = render_output(operation, result)
    namespace = model.metadata["xmlNamespace"]
    return (f'<{action}Response xmlns="{namespace}">{_element(wrapper, inner)}'
            f"<ResponseMetadata><RequestId>request-id</RequestId></ResponseMetadata></{action}Response>")


def _error(action: str, err: Exception) -> Answer:
    """moto's QuerySerializer error document for a service error (e.g. a stack that does not exist)."""
    from moto.core.errors import get_error_model

    from formwright.cloud.fast_render import render_error_members

    model = _service_model()
    shape = get_error_model(err, model)
    message = getattr(err, "message", None)
    if shape.query_compatible_error_message:
        message = shape.query_compatible_error_message
    inner = (f"<Type>{'Sender' if shape.is_sender_fault else 'Receiver'}</Type>"
             f"<Code>{escape(str(shape.error_code))}</Code>"
             + (f"<Message>{escape(str(message))}</Message>" if message is not None else "")
             + render_error_members(model.operation_model(action), shape, err))
    status = int(shape.metadata.get("error", {}).get("httpStatusCode", 400))
    body = (f'<ErrorResponse xmlns="{model.metadata["xmlNamespace"]}"><Error>{inner}</Error>'
            f"<RequestId>request-id</RequestId></ErrorResponse>")
    reason = "Bad Request" if status == 400 else "Error"
    return _respond(f"{status} {reason}", body, ("status", str(status)))


_model: list[Any] = []


def _service_model() -> Any:
    if not _model:
        from moto.core.utils import get_service_model

        _model.append(get_service_model("cloudformation"))
    return _model[0]


def enabled() -> bool:
    """False when FORMWRIGHT_LOCAL_CLOUD_FAST_READS=0 (every request then takes moto's path)."""
    return os.environ.get("FORMWRIGHT_LOCAL_CLOUD_FAST_READS", "1") != "0"
