"""A fault-injecting HTTP proxy in front of the local cloud that makes it answer like real AWS.

moto executes change sets synchronously and never throttles. Real CloudFormation does neither, so
this proxy (loopback only, bounded in requests, body size and lifetime) adds what AWS does:

- the next DescribeStacks of a stack after an ExecuteChangeSet is answered with the stack as it was
  before the execution (DescribeStacks is eventually consistent: aws-cdk-cli#1802); a DescribeStacks
  without a name (a listing) answers each of its stacks the same way;
- a new change set answers CREATE_PENDING for `change_set_pending` seconds;
- after an ExecuteChangeSet the stack answers CREATE_/UPDATE_IN_PROGRESS, with its old outputs, for
  `stack_in_progress` seconds (math.inf: until the test calls `settle`);
- meanwhile DescribeStackEvents shows the execution's events as CloudFormation does, a few at a time:
  moto records them all at once, so the proxy reveals them oldest first, one every `event_interval`
  seconds (default: spread over `stack_in_progress`), and the stack's own closing event (its
  CREATE_/UPDATE_COMPLETE, or ROLLBACK_...) only once the stack has settled; each stamped with the
  time it is revealed at, as CloudFormation stamps an event when it happens;
- a drift detection answers DETECTION_IN_PROGRESS for `drift_in_progress` seconds after its
  DetectStackDrift (CloudFormation detects asynchronously; the local cloud at once);
- a share of CloudFormation calls is throttled (HTTP 400, Code Throttling, "Rate exceeded") and a
  share answered 500 / 503 (before reaching the local cloud, so a retry is safe).

Used by tests/aws and by `bench/deploy.py --aws-like`. Mocking here is the only way to meet these
behaviours offline: AWS itself cannot run in the tests.
"""

from __future__ import annotations

import http.server
import random
import re
import socket
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

CFN_VERSION = "Version=2010-05-15"
MAX_BODY = 8 * 1024 * 1024
_HOP_HEADERS = ("content-length", "connection", "transfer-encoding", "server", "date")


@dataclass
class Faults:
    """What the proxy does to the local cloud's answers."""

    stale_after_execute: bool = True
    change_set_pending: float = 0.0
    stack_in_progress: float = 0.0
    event_interval: float | None = None
    drift_in_progress: float = 0.0
    throttle: float = 0.0
    server_errors: float = 0.0
    seed: int = 7


def _error(code: str, message: str, kind: str = "Sender") -> bytes:
    return (f"<ErrorResponse><Error><Type>{kind}</Type><Code>{code}</Code><Message>{message}</Message>"
            "</Error><RequestId>fault-proxy</RequestId></ErrorResponse>").encode()


def _tag(xml: str, tag: str) -> str | None:
    found = re.search(rf"<{tag}>(.*?)</{tag}>", xml, re.S)
    return found.group(1) if found else None


def _members(xml: str) -> list[str]:
    """The <member> elements of a DescribeStackEvents answer (events hold no nested members)."""
    return re.findall(r"<member>.*?</member>", xml, re.S)


def _event_ids(xml: str) -> list[str]:
    return [_tag(m, "EventId") or "" for m in _members(xml)]


def _outputs(xml: str) -> str:
    found = re.search(r"<Outputs>.*?</Outputs>|<Outputs/>", xml, re.S)
    return found.group(0) if found else ""


@dataclass
class _Execution:
    stack_id: str
    name: str
    kind: str  # CREATE | UPDATE
    snapshot: bytes
    stale_pending: bool
    running_until: float
    change_set: str
    known_events: set[str] = field(default_factory=set)  # the stack's event ids before it
    events: list[str] = field(default_factory=list)  # its own event ids, oldest first
    closing: str | None = None  # the stack's own closing event among them
    started: float = 0.0
    started_wall: datetime = field(default_factory=lambda: datetime.now(UTC))
    recorded: bool = False  # its events are known (just after the local cloud has executed it)


class _Server(http.server.ThreadingHTTPServer):
    # socketserver's listen backlog of 5 drops the SYNs of a burst of new connections (a deploy opens
    # one per worker thread at once), and each dropped one costs the client a 1 s retransmit: AWS's
    # endpoints do not do that
    request_queue_size = 128


@dataclass
class FaultProxy:
    """Forwards to `upstream`; see the module docstring. `calls` counts CloudFormation actions (those
    that reached the local cloud), `stack_reads` those DescribeStacks by name (or id) and listings;
    `timeline` every CloudFormation call as (arrived, replied: monotonic seconds, action, the StackName
    or ChangeSetName it names, HTTP status), for benchmarks to see where time went."""

    upstream: str
    faults: Faults = field(default_factory=Faults)
    max_requests: int = 200_000
    max_seconds: float = 1800.0
    calls: Counter[str] = field(default_factory=Counter)
    stack_reads: Counter[str] = field(default_factory=Counter)
    injected: Counter[str] = field(default_factory=Counter)
    timeline: list[tuple[float, float, str, str, int]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._rng = random.Random(self.faults.seed)
        self._pending: dict[str, float] = {}  # change set id -> CREATE_PENDING until
        self._detecting: dict[str, float] = {}  # drift detection id -> DETECTION_IN_PROGRESS until
        self._change_set_stack: dict[str, str] = {}  # change set id -> stack id
        self._executions: dict[str, _Execution] = {}  # stack id and stack name -> execution
        self._started = time.monotonic()
        self._seen = 0
        proxy = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def setup(self) -> None:
                # each write sent at once: the answer's headers and body go in two writes, and on a kept-open
                # connection Nagle's algorithm held the body for the client's delayed ACK (~40 ms a call)
                super().setup()
                self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

            def _handle(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                if length > MAX_BODY:
                    self._reply(413, b"too large", {})
                    return
                body = self.rfile.read(length) if length else b""
                status, data, headers = proxy.handle(self.command, self.path, dict(self.headers.items()),
                                                     body)
                self._reply(status, data, headers)

            def _reply(self, status: int, data: bytes, headers: dict[str, str]) -> None:
                self.send_response(status)
                for key, value in headers.items():
                    if key.lower() not in _HOP_HEADERS:
                        self.send_header(key, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(data)

            do_GET = do_POST = do_PUT = do_DELETE = do_HEAD = _handle  # noqa: N815 - http.server's names

            def log_message(self, *args: object) -> None:
                pass

        self.server = _Server(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.endpoint = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self._thread.start()

    def stack_of(self, key: str) -> str:
        """The stack name a timeline entry's StackName or ChangeSetName (name or id) stands for."""
        with self._lock:
            key = self._change_set_stack.get(key, key)  # a change set's id -> its stack's id
        return key.split("/")[1] if key.startswith("arn:aws:cloudformation:") else key

    def settle(self, stack: str) -> None:
        """End the run of the stack's execution now (name or id): it answers settled from here on."""
        with self._lock:
            execution = self._executions.get(stack)
            if execution is not None:
                execution.running_until = min(execution.running_until, time.monotonic())

    def running(self, stack: str) -> bool:
        """Whether the stack (name or id) has been executed by the local cloud and is still answered as in
        progress."""
        with self._lock:
            execution = self._executions.get(stack)
            return execution is not None and execution.recorded and execution.running_until > time.monotonic()

    def close(self) -> None:
        """Stop serving."""
        self.server.shutdown()
        self.server.server_close()

    def __enter__(self) -> FaultProxy:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    # ---- forwarding ---------------------------------------------------------------------------
    def _forward(self, method: str, path: str, headers: dict[str, str],
                 body: bytes) -> tuple[int, bytes, dict]:
        request = urllib.request.Request(self.upstream + path, data=body if method != "GET" else None,
                                         method=method, headers=headers)
        try:
            reply = urllib.request.urlopen(request, timeout=30)  # noqa: S310 - the loopback local cloud
        except urllib.error.HTTPError as error_reply:  # 4xx/5xx answers are answers too
            reply = error_reply
        with reply:
            return reply.status, reply.read(), dict(reply.headers.items())

    def _cfn(self, params: dict[str, str], headers: dict[str, str]) -> bytes:
        """A CloudFormation query of the proxy's own to the local cloud, with the headers of the request
        it serves: moto picks the service from the signature's scope and does not check the signature."""
        body = urllib.parse.urlencode({**params, "Version": "2010-05-15"}).encode()
        kept = {k: v for k, v in headers.items() if k.lower() not in ("content-length", "host")}
        return self._forward("POST", "/", kept, body)[1]

    # ---- the faults ---------------------------------------------------------------------------
    def handle(self, method: str, path: str, headers: dict[str, str], body: bytes) -> tuple[int, bytes, dict]:
        """Answer one request."""
        with self._lock:
            self._seen += 1
            if self._seen > self.max_requests or time.monotonic() - self._started > self.max_seconds:
                return 503, _error("ProxyExhausted", "the fault proxy's bounds were reached", "Receiver"), {}
        text = body.decode("utf-8", "replace")
        if method != "POST" or CFN_VERSION not in text:
            return self._forward(method, path, headers, body)
        params = dict(urllib.parse.parse_qsl(text))
        action = params.get("Action", "")
        arrived = time.monotonic()
        status, data, reply_headers = self._answer(action, params, method, path, headers, body)
        with self._lock:
            self.timeline.append((arrived, time.monotonic(), action,
                                  params.get("StackName") or params.get("ChangeSetName") or "", status))
        return status, data, reply_headers

    def _answer(self, action: str, params: dict[str, str], method: str, path: str, headers: dict[str, str],
                body: bytes) -> tuple[int, bytes, dict]:
        with self._lock:
            self.calls[action] += 1
            roll = self._rng.random()
            flip = self._rng.random() < 0.5
        xml_headers = {"Content-Type": "text/xml"}
        if roll < self.faults.throttle:
            self.injected["Throttling"] += 1
            return 400, _error("Throttling", "Rate exceeded"), xml_headers
        if roll < self.faults.throttle + self.faults.server_errors:
            code = 500 if flip else 503
            self.injected[str(code)] += 1
            name = "InternalFailure" if code == 500 else "ServiceUnavailable"
            return code, _error(name, "injected by the fault proxy", "Receiver"), xml_headers
        if action in ("ExecuteChangeSet", "CreateStack", "UpdateStack"):
            return self._execute(action, params, path, headers, body)
        status, data, reply_headers = self._forward(method, path, headers, body)
        if status != 200:
            return status, data, reply_headers
        if action == "CreateChangeSet":
            self._created(data)
        elif action == "DescribeChangeSet":
            data = self._describe_change_set(params, data)
        elif action == "DescribeStacks":
            self.stack_reads["by name" if params.get("StackName") else "listing"] += 1
            data = self._describe_stacks(params, data)
        elif action == "DescribeStackEvents":
            data = self._describe_stack_events(params.get("StackName", ""), data)
        elif action in ("DetectStackDrift", "DescribeStackDriftDetectionStatus"):
            data = self._drift_detection(action, params, data)
        return status, data, reply_headers

    def _drift_detection(self, action: str, params: dict[str, str], data: bytes) -> bytes:
        xml = data.decode()
        now = time.monotonic()
        with self._lock:
            if action == "DetectStackDrift":
                until = now + self.faults.drift_in_progress
                self._detecting[_tag(xml, "StackDriftDetectionId") or ""] = until
                return data
            detecting = self._detecting.get(params.get("StackDriftDetectionId", ""), 0.0) > now
        if detecting:
            xml = re.sub(r"<DetectionStatus>[^<]*</DetectionStatus>",
                         "<DetectionStatus>DETECTION_IN_PROGRESS</DetectionStatus>", xml)
            xml = re.sub(r"<StackDriftStatus>[^<]*</StackDriftStatus>", "", xml)
        return xml.encode()

    def _created(self, data: bytes) -> None:
        xml = data.decode()
        change_set, stack_id = _tag(xml, "Id"), _tag(xml, "StackId")
        if change_set and stack_id:
            with self._lock:
                self._pending[change_set] = time.monotonic() + self.faults.change_set_pending
                self._change_set_stack[change_set] = stack_id

    def _describe_change_set(self, params: dict[str, str], data: bytes) -> bytes:
        change_set = params.get("ChangeSetName", "")
        now = time.monotonic()
        with self._lock:
            pending = self._pending.get(change_set, 0.0) > now
            stack_id = self._change_set_stack.get(change_set)
            running = stack_id in self._executions and self._executions[stack_id].change_set == change_set \
                and self._executions[stack_id].running_until > now
        xml = data.decode()
        if pending:
            xml = re.sub(r"<Status>[^<]*</Status>", "<Status>CREATE_PENDING</Status>", xml)
            xml = re.sub(r"<ExecutionStatus>[^<]*</ExecutionStatus>",
                         "<ExecutionStatus>UNAVAILABLE</ExecutionStatus>", xml)
            xml = re.sub(r"<Changes>.*?</Changes>", "<Changes/>", xml, flags=re.S)
        elif running:
            xml = re.sub(r"<ExecutionStatus>[^<]*</ExecutionStatus>",
                         "<ExecutionStatus>EXECUTE_IN_PROGRESS</ExecutionStatus>", xml)
        return xml.encode()

    def _execute(self, action: str, params: dict[str, str], path: str, headers: dict[str, str],
                 body: bytes) -> tuple[int, bytes, dict]:
        """ExecuteChangeSet, and CreateStack / UpdateStack for tools without change sets (sceptre)."""
        change_set = params.get("ChangeSetName", "")
        with self._lock:
            stack_id = self._change_set_stack.get(change_set) or params.get("StackName")
        snapshot = b""
        if stack_id and action != "CreateStack":
            snapshot = self._cfn({"Action": "DescribeStacks", "StackName": stack_id}, headers)
        xml = snapshot.decode() if snapshot else ""
        kind = "CREATE" if action == "CreateStack" or _tag(xml, "StackStatus") == "REVIEW_IN_PROGRESS" \
            else "UPDATE"
        execution = _Execution(stack_id or "", _tag(xml, "StackName") or params.get("StackName", ""), kind,
                               snapshot, self.faults.stale_after_execute and bool(snapshot),
                               float("inf"), change_set)
        if snapshot:
            execution.known_events = set(_event_ids(self._cfn(
                {"Action": "DescribeStackEvents", "StackName": stack_id or ""}, headers).decode()))
        keys = {k for k in (stack_id, execution.name) if k}
        with self._lock:  # in place before the local cloud executes (synchronously): no read sees it done
            previous = {k: self._executions.get(k) for k in keys}
            self._executions.update(dict.fromkeys(keys, execution))
        status, data, reply_headers = self._forward("POST", path, headers, body)
        with self._lock:
            if status != 200:  # not executed: as before
                for key, was in previous.items():
                    if was is None:
                        self._executions.pop(key, None)
                    else:
                        self._executions[key] = was
                return status, data, reply_headers
            execution.stack_id = _tag(data.decode(), "StackId") or execution.stack_id
            self._executions[execution.stack_id] = execution
            execution.started = time.monotonic()  # its events' clock (again once they are recorded)
        self._record_events(execution, headers)
        with self._lock:
            execution.started = time.monotonic()
            execution.started_wall = datetime.now(UTC)
            execution.running_until = execution.started + self.faults.stack_in_progress
            execution.recorded = True
        return status, data, reply_headers

    def _record_events(self, execution: _Execution, headers: dict[str, str]) -> None:
        """The events the local cloud recorded for the execution (all at once), to reveal over its run."""
        if not execution.stack_id:
            return
        xml = self._cfn({"Action": "DescribeStackEvents", "StackName": execution.stack_id}, headers).decode()
        members = [m for m in _members(xml) if _tag(m, "EventId") not in execution.known_events]
        members.reverse()  # DescribeStackEvents lists newest first
        last = members[-1] if members else ""
        with self._lock:
            execution.events = [_tag(m, "EventId") or "" for m in members]
            if last and _tag(last, "ResourceType") == "AWS::CloudFormation::Stack" \
                    and not (_tag(last, "ResourceStatus") or "").endswith("_IN_PROGRESS"):
                execution.closing = _tag(last, "EventId")

    def _happens_at(self, execution: _Execution) -> dict[str, float]:
        """When each of the execution's events happens, in seconds after it started: the opening ones
        one every `event_interval`, the stack's closing one when the run ends (inf: not yet)."""
        opening = [e for e in execution.events if e != execution.closing]
        interval = self.faults.event_interval
        if interval is None:
            interval = self.faults.stack_in_progress / max(1, len(opening))
        end = execution.running_until - execution.started
        at = {event: min(i * interval if i else 0.0, end) for i, event in enumerate(opening)}
        if execution.closing:
            at[execution.closing] = end
        return at

    def _describe_stack_events(self, stack: str, data: bytes) -> bytes:
        """The stack's events without those of an execution that have not happened yet, each stamped with
        the time it happened (moto stamps them all at the execution)."""
        with self._lock:
            execution = self._executions.get(stack)
            if execution is None:
                return data
            recorded = execution.recorded
            at = self._happens_at(execution) if recorded else {}
            order = {event: i for i, event in enumerate(execution.events)}
            elapsed = time.monotonic() - execution.started
        xml = data.decode()
        found = re.search(r"<StackEvents>(.*)</StackEvents>", xml, re.S)
        if not found:
            return data
        kept = []
        for member in _members(found.group(0)):
            event = _tag(member, "EventId") or ""
            if not recorded and event not in execution.known_events:
                continue  # executing this very moment: none of its events has happened yet
            if event in at:
                if at[event] > elapsed:
                    continue
                happened = execution.started_wall + timedelta(seconds=at[event], microseconds=order[event])
                stamp = happened.strftime("%Y-%m-%dT%H:%M:%S.%fZ")  # in the order of the events
                member = re.sub(r"<Timestamp>[^<]*</Timestamp>", f"<Timestamp>{stamp}</Timestamp>", member)
            kept.append(member)
        return (xml[:found.start(1)] + "".join(kept) + xml[found.end(1):]).encode()

    def _describe_stacks(self, params: dict[str, str], data: bytes) -> bytes:
        if not params.get("StackName"):  # a listing of every stack: each one as it would be answered
            xml = data.decode()
            found = re.search(r"<Stacks>(.*)</Stacks>", xml, re.S)
            if not found:
                return data
            members = [m for m in re.split(r"(?=<member><StackId>)", found.group(1)) if m]
            answered = "".join(self._member(m, _tag(m, "StackId") or "") for m in members)
            return (xml[:found.start(1)] + answered + xml[found.end(1):]).encode()
        return self._member_of(params["StackName"], data)

    def _member(self, member: str, stack_id: str) -> str:
        """One stack of a listing, as a DescribeStacks of that stack would answer it now."""
        answer = self._member_of(stack_id, f"<Stacks>{member}</Stacks>".encode()).decode()
        found = re.search(r"<Stacks>(.*)</Stacks>", answer, re.S)
        return found.group(1) if found else member

    def _member_of(self, stack: str, data: bytes) -> bytes:
        """The answer about one stack (by name or id): stale once after an execution, then in
        progress with the old outputs while the execution runs."""
        with self._lock:
            execution = self._executions.get(stack)
            if execution is None:
                return data
            if execution.stale_pending:
                execution.stale_pending = False
                self.injected["stale read"] += 1
                return execution.snapshot
            running = execution.running_until > time.monotonic()
        if not running:
            return data
        xml = data.decode()
        xml = re.sub(r"<StackStatus>[^<]*</StackStatus>",
                     f"<StackStatus>{execution.kind}_IN_PROGRESS</StackStatus>", xml)
        old_outputs = _outputs(execution.snapshot.decode())  # outputs change when the operation ends
        new_outputs = _outputs(xml)
        if new_outputs:
            xml = xml.replace(new_outputs, old_outputs or "<Outputs/>")
        return xml.encode()
