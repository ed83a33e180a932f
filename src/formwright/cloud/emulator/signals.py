"""cfn-signal in the local cloud: a CreationPolicy and a WaitCondition wait for real signals
(with `local_cloud: {instances: boot}`, where booted instances can send them).

Where the behaviour comes from (AWS CloudFormation User Guide: "CreationPolicy attribute",
"AWS::CloudFormation::WaitCondition", "AWS::CloudFormation::WaitConditionHandle", "Create wait conditions in a
template"; API Reference: SignalResource; what CloudFormation says, from its users' reports):
- `CreationPolicy: {ResourceSignal: {Count (default 1), Timeout (ISO 8601, default PT5M, at most 12 h)}}`: the
  resource stays CREATE_IN_PROGRESS until Count SUCCESS signals with distinct UniqueIds came (SignalResource);
  each is an event "Received SUCCESS signal with UniqueId ID". A FAILURE signal fails it ("Received FAILURE
  signal with UniqueId ID"), and so does the timeout ("Failed to receive N resource signal(s) within the
  specified duration"); the stack rolls back.
- An Auto Scaling group's CreationPolicy: its instances signal it; Count is how many signals, and
  `AutoScalingCreationPolicy.MinSuccessfulInstancesPercent` (default 100) the share that must succeed; a
  signal missing at the timeout is a failure (`_judge_group`).
- SignalResource on a stack that waits for nothing: "Stack ARN is in STATUS state and cannot be signaled".
- A WaitConditionHandle's Ref is a pre-signed URL; cfn-signal (or curl) PUTs `{"Status", "Reason", "UniqueId",
  "Data"}` to it. Signals sent before the WaitCondition starts count. The WaitCondition (Handle, Timeout in
  seconds, Count default 1) completes with Count SUCCESS signals of distinct UniqueIds (a repeated UniqueId
  replaces its signal); its Ref is the stack id and the handle's name; Fn::GetAtt Data is a JSON object of
  UniqueId to Data. It fails on a FAILURE signal ("WaitCondition received failed message: 'REASON' for
  uniqueId: ID") or on the timeout ("WaitCondition timed out. Received N conditions when expecting COUNT").
  A WaitCondition with a CreationPolicy ignores Handle and Timeout and waits as a CreationPolicy does.

Here the handle's URL is served by the local cloud itself on the instance network's host address (so a booted
instance reaches it), signed with a secret of this local cloud. The waits run with the state lock released
(`locking.released`); the execution runs in a thread of its own (`api.execute_change_set`).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import math
import re
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlsplit

from formwright.cloud import persistence
from formwright.cloud.emulator import locking

WAIT_CONDITION = "AWS::CloudFormation::WaitCondition"
HANDLE_PREFIX = "/cloudformation-waitcondition-"
MAX_SECONDS = 43200  # 12 hours: CreationPolicy's Timeout and WaitCondition's Timeout alike
DURATION = re.compile(r"^PT(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)S)?$")

# kept in the local cloud's snapshot (a handle made before a restart still takes signals after it):
# "secret", the key the handle URLs are signed with; "received", (stack id, logical id) -> UniqueId -> signal
_state = persistence.register("signals")
_changed = threading.Condition()
_expected: set[tuple[str, str]] = set()  # resources a CreationPolicy waits on now (SignalResource's targets)


def _received() -> dict[tuple[str, str], dict[str, dict[str, str]]]:
    return _state.setdefault("received", {})  # type: ignore[no-any-return]  # a registry holds Any


class SignalFailure(Exception):
    """The wait ended without its signals; the message is the resource's status reason."""


@dataclass
class WaitCondition:
    """An AWS::CloudFormation::WaitCondition the local cloud waited for."""

    logical_resource_id: str
    physical_resource_id: str
    cf_resource_type: str = "AWS::CloudFormation::WaitCondition"
    data: dict[str, str] = field(default_factory=dict)

    @classmethod
    def has_cfn_attr(cls, name: str) -> bool:
        """Data is its one attribute."""
        return name == "Data"

    def get_cfn_attribute(self, name: str) -> str:
        """Fn::GetAtt Data: the signals' Data by UniqueId, as a JSON string."""
        if name != "Data":
            raise KeyError(name)
        return json.dumps(self.data, separators=(",", ":"))

    def delete(self, account_id: str, region_name: str) -> None:
        """Nothing outside the record to delete."""


# ---- the handle's URL ------------------------------------------------------------------------------------

def handle_url(stack: Any, logical: str, base: str) -> str:
    """A WaitConditionHandle's URL, in the form of CloudFormation's pre-signed one, served at `base`."""
    token = base64.urlsafe_b64encode(f"{stack.stack_id}|{logical}".encode()).decode().rstrip("=")
    path = f"{HANDLE_PREFIX}{stack.region_name}/{token}"
    stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    return (f"{base}{path}?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Date={stamp}&X-Amz-SignedHeaders=host"
            f"&X-Amz-Expires=86399&X-Amz-Credential=formwright-local-cloud&X-Amz-Signature={_sign(path)}")


def _sign(path: str) -> str:
    secret = bytes.fromhex(_state.setdefault("secret", secrets.token_hex(32)))
    return hmac.new(secret, path.encode(), hashlib.sha256).hexdigest()


def _handle_key(url: str) -> tuple[str, str] | None:
    """(stack id, handle logical id) of a handle URL this local cloud made, else None."""
    path = urlsplit(url).path
    parts = path[len(HANDLE_PREFIX):].split("/") if path.startswith(HANDLE_PREFIX) else []
    if len(parts) != 2:
        return None
    try:
        stack_id, _, logical = base64.urlsafe_b64decode(parts[1] + "=" * (-len(parts[1]) % 4)).decode() \
            .rpartition("|")
    except ValueError:
        return None
    return (stack_id, logical) if stack_id and logical else None


def is_handle(environ: dict[str, Any]) -> bool:
    """True for a request to a WaitConditionHandle URL."""
    return str(environ.get("PATH_INFO", "")).startswith(HANDLE_PREFIX)


def receive(environ: dict[str, Any], start_response: Any) -> list[bytes]:
    """The WSGI answer to a PUT on a handle URL: the signal is kept for the WaitCondition (S3 keeps the object
    CloudFormation reads)."""
    from formwright.cloud.lambda_runtime.custom_resources import s3_error

    path = str(environ.get("PATH_INFO", ""))
    signature = (parse_qs(str(environ.get("QUERY_STRING", ""))).get("X-Amz-Signature") or [""])[0]
    key = _handle_key(path)
    if environ.get("REQUEST_METHOD") != "PUT" or key is None \
            or not hmac.compare_digest(signature, _sign(path)):
        return s3_error(start_response, "403 Forbidden", "SignatureDoesNotMatch",
                       "The request signature we calculated does not match the signature you provided.")
    length = int(environ.get("CONTENT_LENGTH") or 0)
    body = environ["wsgi.input"].read(length) if length else environ["wsgi.input"].read()
    try:
        signal = json.loads(body)
        status, unique = signal["Status"], str(signal["UniqueId"])
    except (ValueError, KeyError, TypeError):
        return s3_error(start_response, "400 Bad Request", "InvalidArgument",
                       "A wait condition signal is a JSON object with Status and UniqueId")
    if status not in ("SUCCESS", "FAILURE"):
        return s3_error(start_response, "400 Bad Request", "InvalidArgument",
                       f"Status must be SUCCESS or FAILURE, not {status}")
    record(key, {"Status": status, "UniqueId": unique, "Reason": str(signal.get("Reason") or ""),
                 "Data": str(signal.get("Data") or "")})
    start_response("200 OK", [("ETag", f'"{hashlib.md5(body).hexdigest()}"'),  # noqa: S324 - S3's ETag
                              ("Content-Length", "0")])
    return [b""]


def record(key: tuple[str, str], signal: dict[str, str]) -> None:
    """Keep one signal (a repeated UniqueId replaces the earlier one) and wake the waits."""
    with _changed:
        _received().setdefault(key, {})[signal["UniqueId"]] = signal
        _changed.notify_all()


# ---- SignalResource --------------------------------------------------------------------------------------

def signal_resource(stack: Any, logical: str, unique: str, status: str) -> None:
    """SignalResource: a signal to a resource whose CreationPolicy waits now; ValidationError otherwise."""
    if status not in ("SUCCESS", "FAILURE"):
        from moto.cloudformation.exceptions import ValidationError

        raise ValidationError(message=f"1 validation error detected: Value '{status}' at 'status' failed "
                                      "to satisfy constraint: Member must satisfy enum value set: "
                                      "[SUCCESS, FAILURE]")
    key = (stack.stack_id, logical)
    with _changed:
        waiting = key in _expected
    if not waiting:
        from moto.cloudformation.exceptions import ValidationError

        raise ValidationError(message=f"Stack {stack.stack_id} is in {stack.status} state and cannot be "
                                      "signaled")
    record(key, {"Status": status, "UniqueId": unique, "Reason": "", "Data": ""})


# ---- the waits -------------------------------------------------------------------------------------------

def seconds(duration: Any, what: str) -> int:
    """A CreationPolicy Timeout (ISO 8601, PT#H#M#S) in seconds; SignalFailure naming a bad one."""
    found = DURATION.match(str(duration))
    if not found or not any(found.groups()):
        raise SignalFailure(f"{what} {duration} is not an ISO 8601 duration (PT#H#M#S)")
    hours, minutes, secs = (int(g or 0) for g in found.groups())
    total = hours * 3600 + minutes * 60 + secs
    if total > MAX_SECONDS:
        raise SignalFailure(f"{what} {duration} is longer than the maximum of 12 hours (PT12H)")
    return total


def expect(stack_id: str, logical: str) -> None:
    """From now on SignalResource may signal this resource (call before booting what signals it)."""
    with _changed:
        _expected.add((stack_id, logical))
        _received().pop((stack_id, logical), None)


def await_creation_policy(stack_id: str, logical: str, policy: dict[str, Any],
                          say: Callable[[str], None], group: bool = False) -> None:
    """Wait for a CreationPolicy's ResourceSignal; `say` gets each signal's event text; SignalFailure.
    `group`: an Auto Scaling group's, judged by its AutoScalingCreationPolicy (`_judge_group`)."""
    signal = policy.get("ResourceSignal") or {}
    count = int(signal.get("Count", 1))
    limit = seconds(signal.get("Timeout", "PT5M"), "CreationPolicy Timeout")
    percent = _percent(policy) if group else 100.0
    needed = math.ceil(count * percent / 100 - 1e-9)  # 5 instances at 50 %: 3 must succeed (the User Guide)
    key = (stack_id, logical)
    finished = _group_decided(count, needed) if group else _count_or_failure(count)
    try:
        got = _wait(key, limit, lambda s: say(f"Received {s['Status']} signal with UniqueId {s['UniqueId']}"),
                    finished)
    finally:
        with _changed:
            _expected.discard(key)
    if group:
        _judge_group(got, count, needed, percent, say)
        return
    failed = [s for s in got if s["Status"] == "FAILURE"]
    if failed:
        raise SignalFailure(f"Received FAILURE signal with UniqueId {failed[0]['UniqueId']}")
    if len(got) < count:
        raise SignalFailure(f"Failed to receive {count - len(got)} resource signal(s) within the specified "
                            "duration")


def _percent(policy: dict[str, Any]) -> float:
    """AutoScalingCreationPolicy's MinSuccessfulInstancesPercent (0 to 100, default 100), to a tenth."""
    given = (policy.get("AutoScalingCreationPolicy") or {}).get("MinSuccessfulInstancesPercent", 100)
    try:
        percent = round(float(given), 1)
    except (TypeError, ValueError):
        percent = -1.0
    if not 0 <= percent <= 100:
        raise SignalFailure(f"MinSuccessfulInstancesPercent {given} must be a number from 0 to 100")
    return percent


def _group_decided(count: int, needed: int) -> Callable[[list[dict[str, str]]], bool]:
    """An Auto Scaling group's signals decide once `needed` succeeded or too many failed for that."""
    def decided(got: list[dict[str, str]]) -> bool:
        successes = sum(s["Status"] == "SUCCESS" for s in got)
        return successes >= needed or len(got) - successes > count - needed

    return decided


def _judge_group(got: list[dict[str, str]], count: int, needed: int, percent: float,
                 say: Callable[[str], None]) -> None:
    """An Auto Scaling group's CreationPolicy outcome, in CloudFormation's words: a signal missing at the
    timeout counts as a FAILURE ("Failed to receive N resource signal(s) for the current batch. ..."), and
    the group fails with "Received N SUCCESS|FAILURE signal(s) out of COUNT. Unable to satisfy P%
    MinSuccessfulInstancesPercent requirement" (as CloudFormation's events read, e.g.
    widdix/aws-cf-templates#565, aws-quickstart/quickstart-linux-bastion#144)."""
    successes = sum(s["Status"] == "SUCCESS" for s in got)
    if successes >= needed:
        return
    shown = f"{percent:g}"
    unable = f"Unable to satisfy {shown}% MinSuccessfulInstancesPercent requirement"
    failures = len(got) - successes
    if failures > count - needed:
        raise SignalFailure(f"Received {failures} FAILURE signal(s) out of {count}. {unable}")
    say(f"Failed to receive {count - len(got)} resource signal(s) for the current batch. Each resource "
        "signal timeout is counted as a FAILURE.")
    raise SignalFailure(f"Received {successes} SUCCESS signal(s) out of {count}. {unable}")


def await_wait_condition(stack_id: str, logical: str, props: dict[str, Any]) -> dict[str, str]:
    """Wait for a WaitCondition's signals on its handle; the Data by UniqueId; SignalFailure."""
    count = int(props.get("Count", 1))
    key = _handle_key(str(props.get("Handle") or ""))
    if key is None:
        raise SignalFailure(f"Handle {props.get('Handle')} is not a WaitConditionHandle of this local cloud")
    try:
        limit = int(str(props.get("Timeout")))
    except ValueError:
        raise SignalFailure(f"Timeout {props.get('Timeout')} is not a number of seconds") from None
    if not 0 < limit <= MAX_SECONDS:
        raise SignalFailure(f"Timeout {limit} must be between 1 and {MAX_SECONDS} seconds")
    got = _wait(key, limit, lambda s: None, _count_or_failure(count))
    failed = [s for s in got if s["Status"] == "FAILURE"]
    if failed:
        raise SignalFailure(f"WaitCondition received failed message: '{failed[0]['Reason']}' for uniqueId: "
                            f"{failed[0]['UniqueId']}")
    if len(got) < count:
        raise SignalFailure(f"WaitCondition timed out. Received {len(got)} conditions when expecting {count}")
    return {s["UniqueId"]: s["Data"] for s in got}


def _wait(key: tuple[str, str], limit: float, on_signal: Callable[[dict[str, str]], None],
          finished: Callable[[list[dict[str, str]]], bool]) -> list[dict[str, str]]:
    """The signals received for `key` until `finished` says they decide the wait, or `limit` seconds; each
    new one handed to `on_signal` with the state lock held."""
    deadline = time.monotonic() + limit
    seen: dict[str, dict[str, str]] = {}
    while True:
        with locking.released(), _changed:
            while True:
                fresh = [s for u, s in _received().get(key, {}).items() if seen.get(u) != s]
                left = deadline - time.monotonic()
                if fresh or left <= 0:
                    break
                _changed.wait(left)
        for signal in fresh:
            seen[signal["UniqueId"]] = signal
            on_signal(signal)
        done = list(seen.values())
        if finished(done) or not fresh:
            return done


def _count_or_failure(count: int) -> Callable[[list[dict[str, str]]], bool]:
    """An instance's CreationPolicy and a WaitCondition: decided by `count` signals or one FAILURE."""
    return lambda got: len(got) >= count or any(s["Status"] == "FAILURE" for s in got)


def condition_id(stack_id: str, props: dict[str, Any]) -> str:
    """A WaitCondition's physical id: its stack's id and its handle's logical id."""
    key = _handle_key(str(props.get("Handle") or ""))
    return f"{stack_id}/{key[1] if key else 'WaitCondition'}"


def await_signals(stack: Any, logical: str, kind: str, obj: Any, policy: dict[str, Any],
                  props: dict[str, Any], event: Callable[..., None],
                  status: str = "CREATE_IN_PROGRESS") -> None:
    """Wait for the signals of a resource just created (its CreationPolicy, or a WaitCondition's handle);
    ResourceFailure with CloudFormation's reason when they do not come. `status`: its events' (a replacement's
    are UPDATE_IN_PROGRESS)."""
    from formwright.cloud.emulator.resources import ResourceFailure, physical_id

    def say(text: str) -> None:
        event(stack, logical, physical_id(obj), kind, status, text)

    try:
        if policy:
            await_creation_policy(stack.stack_id, logical, policy, say,
                                  group=kind == "AWS::AutoScaling::AutoScalingGroup")
        else:
            say("Resource creation Initiated")
            obj.data = await_wait_condition(stack.stack_id, logical, props)
    except SignalFailure as failure:
        raise ResourceFailure(logical, str(failure)) from None


def keep_metadata(stack: Any, logical: str, metadata: Any) -> None:
    """Keep a resource's Metadata as resolved when it was made (DescribeStackResource gives it cfn-init)."""
    stack.fw_metadata = {**getattr(stack, "fw_metadata", {}), logical: metadata}


def metadata(stack: Any, logical: str) -> Any:
    """A resource's Metadata: as resolved when made, else as the deployed template has it, else None."""
    kept = getattr(stack, "fw_metadata", {})
    if logical in kept:
        return kept[logical]
    entry = ((stack.template_dict or {}).get("Resources") or {}).get(logical) or {}
    return entry.get("Metadata") if isinstance(entry, dict) else None


def forget(stack_id: str) -> None:
    """Drop the signals kept for a deleted stack."""
    with _changed:
        for key in [k for k in _received() if k[0] == stack_id]:
            del _received()[key]


def install() -> None:
    """Answer handle URLs ahead of moto's routing, and SignalResource (moto lacks it)."""
    from moto.cloudformation import responses
    from moto.core.responses import ActionResult
    from moto.moto_server.werkzeug_app import DomainDispatcherApplication

    dispatch = DomainDispatcherApplication.__call__
    if getattr(dispatch, "_formwright_signals", False):
        return

    def call(self: Any, environ: dict[str, Any], start_response: Any) -> Any:
        if is_handle(environ):
            return receive(environ, start_response)
        return dispatch(self, environ, start_response)

    call._formwright_signals = True  # type: ignore[attr-defined]
    DomainDispatcherApplication.__call__ = call  # type: ignore[method-assign]  # moto has no hook: patched in place

    def handle_signal(self: Any) -> ActionResult:
        stack = self.cloudformation_backend.get_stack(self._get_param("StackName"))
        signal_resource(stack, self._get_param("LogicalResourceId"), str(self._get_param("UniqueId")),
                        str(self._get_param("Status")))
        return ActionResult({})

    responses.CloudFormationResponse.signal_resource = handle_signal  # type: ignore[attr-defined]
    describe = responses.CloudFormationResponse.describe_stack_resource

    def describe_stack_resource(self: Any) -> Any:  # moto's StackResourceDetail has no Metadata
        answer = describe(self)
        detail = answer.result["StackResourceDetail"]  # type: ignore[index]  # moto types result loosely
        stack = self.cloudformation_backend.get_stack(self._get_param("StackName"))
        found = metadata(stack, detail.logical_resource_id)
        if found is not None:
            detail.metadata = json.dumps(found)
        return answer

    responses.CloudFormationResponse.describe_stack_resource = describe_stack_resource  # type: ignore[method-assign]
    from moto.cloudformation.models import Stack

    def made_resources(self: Any) -> list[Any]:
        """The stack's resources made so far: moto's reads every resource of the template through its map,
        which *creates* one not made yet (from its type alone, during an execution: a booted instance's
        cfn-init calls DescribeStackResource while the rest of its stack waits)."""
        made = self.resource_map._parsed_resources
        return [made[k] for k in self.resource_map.resources if made.get(k) is not None]

    Stack.stack_resources = property(made_resources)  # type: ignore[assignment,method-assign]
