"""The two event sources the local cloud runs functions for: SQS event source mappings and S3 bucket
notifications with a Lambda target.

SQS ("Using Lambda with Amazon SQS", AWS Lambda Developer Guide): a poller receives up to BatchSize
messages with the queue's visibility timeout and invokes the function once per batch, synchronously,
with the documented record shape. On success the batch is deleted; with `ReportBatchItemFailures` in
FunctionResponseTypes only the messages not listed in `batchItemFailures` are. On an error the
messages stay: they come back after the visibility timeout and are retried, and the queue's
RedrivePolicy moves them to its dead-letter queue after maxReceiveCount receives (moto's SQS does
that move on receive). moto delivered to the function inside SendMessage itself, once; that path is
turned off (`detach`).

S3 ("Event notifications", Amazon S3 User Guide): moto matches the bucket's notification
configuration (events, prefix/suffix filters) on PutObject and the other object events; the function
is invoked asynchronously, as S3 does, with the record completed to the documented shape.
"""

from __future__ import annotations

import base64
import json
import logging
import threading
import time
from typing import Any
from urllib.parse import quote_plus

from formwright.cloud.lambda_runtime import contract, invoke, state

log = logging.getLogger(__name__)
_wake = threading.Event()  # set when a message may have arrived (SendMessage, a dead-letter move)
_busy: set[str] = set()  # mappings with a batch in flight
_busy_lock = threading.Lock()
_poller: list[threading.Thread] = []
#: How long the poller sleeps when nothing wakes it: messages whose visibility timeout ran out.
IDLE_POLL = 1.0


def wake() -> None:
    """Tell the poller a message may be waiting."""
    _wake.set()


def start_poller() -> None:
    """Start the SQS poller thread (once per local cloud)."""
    if _poller:
        return
    thread = threading.Thread(target=_poll_forever, name="lambda-sqs-poller", daemon=True)
    _poller.append(thread)
    thread.start()


def detach(mapping: Any) -> None:
    """Take a new mapping out of moto's delivery inside SendMessage (the poller delivers instead)."""
    from moto.sqs.models import sqs_backends

    for queue in sqs_backends[mapping.account_id][mapping.region].queues.values():
        if queue.queue_arn == mapping.event_source_arn:
            queue.lambda_event_source_mappings.pop(mapping.function_arn, None)
    wake()


def _poll_forever() -> None:
    while True:
        _wake.wait(IDLE_POLL)
        _wake.clear()
        try:
            with state.held():
                mappings = _sqs_mappings()
            for mapping in mappings:
                with _busy_lock:
                    if mapping.uuid in _busy:
                        continue
                    _busy.add(mapping.uuid)
                threading.Thread(target=_deliver_guarded, args=(mapping,), daemon=True,
                                 name=f"lambda-sqs-{mapping.uuid}").start()
        except Exception:
            log.exception("the SQS poller failed; it goes on")


def _sqs_mappings() -> list[Any]:
    from moto.awslambda.models import lambda_backends

    found: list[Any] = []
    for regions in list(lambda_backends.values()):
        for backend in list(regions.values()):
            found.extend(m for m in list(backend._event_source_mappings.values())
                         if m.enabled and m.event_source_arn.split(":")[2] == "sqs")
    return found


def _deliver_guarded(mapping: Any) -> None:
    try:
        if deliver(mapping):
            wake()  # there may be more: take the next batch at once
    except Exception:
        log.exception("delivering SQS messages to %s failed", mapping.function_arn)
    finally:
        with _busy_lock:
            _busy.discard(mapping.uuid)


def deliver(mapping: Any) -> bool:
    """Deliver one batch of the mapping's queue to its function; True when there was one."""
    from moto.awslambda.utils import get_backend
    from moto.sqs.models import sqs_backends

    with state.held():
        sqs = sqs_backends[mapping.account_id][mapping.region]
        queue = next((q for q in sqs.queues.values() if q.queue_arn == mapping.event_source_arn), None)
        if queue is None:
            return False
        # moto sets a queue's attributes by name from its Attributes, undeclared on the class
        visibility = int(queue.visibility_timeout or 30)  # type: ignore[attr-defined]
        messages = sqs.receive_message(queue.name, int(mapping.batch_size or 10), 0, visibility,
                                       message_attribute_names=["All"])
        if not messages:
            return False
        function = get_backend(mapping.account_id, mapping.region).get_function(mapping.function_arn)
        event = {"Records": [_sqs_record(m, queue.queue_arn, mapping.region) for m in messages]}
    try:
        outcome = invoke.call(function, json.dumps(event).encode("utf-8"))
    except contract.Refused as err:
        log.warning("%s", err)
        return True  # the messages come back after the visibility timeout, as after a failed batch
    if outcome.failed:
        return True
    failed = _reported_failures(outcome.payload) if "ReportBatchItemFailures" in (
        mapping.function_response_types or []) else set()
    with state.held():
        for message in messages:
            if message.id not in failed and message.receipt_handle:  # a received message has its handle
                sqs.delete_message(queue.name, message.receipt_handle)
    return True


def _reported_failures(payload: bytes) -> set[str]:
    """The message ids a function listed in `batchItemFailures` (partial batch response)."""
    try:
        answer = json.loads(payload)
    except ValueError:
        return set()
    items = answer.get("batchItemFailures") if isinstance(answer, dict) else None
    return {str(i.get("itemIdentifier")) for i in items or [] if isinstance(i, dict)}


def _sqs_record(message: Any, queue_arn: str, region: str) -> dict[str, Any]:
    """One message as an SQS event record ("Using Lambda with Amazon SQS", example event)."""
    attributes = {"ApproximateReceiveCount": str(message.approximate_receive_count),
                  "SentTimestamp": str(message.sent_timestamp), "SenderId": str(message.sender_id),
                  "ApproximateFirstReceiveTimestamp": str(message.approximate_first_receive_timestamp)}
    if message.group_id:
        attributes.update({"MessageGroupId": message.group_id,
                           "MessageDeduplicationId": str(message.deduplication_id),
                           "SequenceNumber": str(message.sequence_number)})
    shaped = {name: _message_attribute(value) for name, value in (message.message_attributes or {}).items()}
    return {"messageId": message.id, "receiptHandle": message.receipt_handle, "body": message.body,
            "attributes": attributes, "messageAttributes": shaped,
            "md5OfBody": message.body_md5, "eventSource": "aws:sqs", "eventSourceARN": queue_arn,
            "awsRegion": region}


def _message_attribute(value: dict[str, Any]) -> dict[str, Any]:
    shaped: dict[str, Any] = {"stringListValues": [], "binaryListValues": [],
                              "dataType": value.get("DataType")}
    if "StringValue" in value:
        shaped["stringValue"] = value["StringValue"]
    if "BinaryValue" in value:
        binary = value["BinaryValue"]
        shaped["binaryValue"] = base64.b64encode(binary).decode() if isinstance(binary, bytes) else binary
    return shaped


def s3_record(event: dict[str, Any], owner: str, key: str, version_id: str | None) -> dict[str, Any]:
    """moto's S3 event completed to the documented record ("Event message structure", Amazon S3 User
    Guide): userIdentity, requestParameters, responseElements, the bucket's ownerIdentity, the object's
    sequencer and versionId, and its key URL-encoded as S3 encodes it (moto encoded `/` too)."""
    for record in event.get("Records") or []:
        record.setdefault("userIdentity", {"principalId": f"AWS:{owner}"})
        record.setdefault("requestParameters", {"sourceIPAddress": "127.0.0.1"})
        record.setdefault("responseElements", {"x-amz-request-id": "FORMWRIGHTLOCAL0",
                                               "x-amz-id-2": "formwright"})
        s3 = record.get("s3") or {}
        s3.get("bucket", {}).setdefault("ownerIdentity", {"principalId": owner})
        target = s3.get("object", {})
        target["key"] = quote_plus(key, safe="/")
        target.setdefault("sequencer", f"{time.time_ns():016X}")
        if version_id and version_id != "null":
            target.setdefault("versionId", version_id)
    return event


#: CloudFormation's NotificationConfiguration lists -> (target key, moto's key, moto's list name)
_NOTIFICATION_LISTS = {"LambdaConfigurations": ("Function", "CloudFunction", "CloudFunctionConfiguration"),
                       "QueueConfigurations": ("Queue", "Queue", "QueueConfiguration"),
                       "TopicConfigurations": ("Topic", "Topic", "TopicConfiguration")}


def moto_notifications(config: dict[str, Any] | None) -> dict[str, Any]:
    """An AWS::S3::Bucket NotificationConfiguration in the form moto's bucket takes (that of
    PutBucketNotificationConfiguration's body); moto's CloudFormation model ignored the property."""
    shaped: dict[str, Any] = {}
    for key, (target, moto_target, moto_list) in _NOTIFICATION_LISTS.items():
        for entry in (config or {}).get(key) or []:
            item: dict[str, Any] = {moto_target: entry[target], "Event": [entry["Event"]]}
            rules = ((entry.get("Filter") or {}).get("S3Key") or {}).get("Rules") or []
            if rules:
                shaped_rules = [{"Name": str(r["Name"]).lower(), "Value": r["Value"]} for r in rules]
                item["Filter"] = {"S3Key": {"FilterRule": shaped_rules}}
            shaped.setdefault(moto_list, []).append(item)
    bridge = ((config or {}).get("EventBridgeConfiguration") or {}).get("EventBridgeEnabled")
    if str(bridge).lower() == "true":
        shaped["EventBridgeConfiguration"] = {}
    return shaped
