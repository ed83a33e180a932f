"""Drift detection: the live resource as moto holds it, compared with the properties last applied.

Follows "Detect unmanaged configuration changes to stacks and resources" (AWS CloudFormation User
Guide): a resource is IN_SYNC, MODIFIED (with PropertyDifferences), DELETED, or NOT_CHECKED when
the local cloud has no reader for its type; the stack is DRIFTED when any resource is MODIFIED or
DELETED.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any

from formwright.cloud.emulator import resources as res
from formwright.cloud.emulator.execute import record


def _sqs(obj: Any, account: str, region: str) -> dict[str, Any] | None:
    from moto.sqs.models import sqs_backends

    queue = sqs_backends[account][region].queues.get(obj.name)
    if queue is None:
        return None
    return {name: queue.attributes.get(name) for name in (
        "DelaySeconds", "MaximumMessageSize", "MessageRetentionPeriod", "ReceiveMessageWaitTimeSeconds",
        "VisibilityTimeout")} | {"QueueName": queue.name}


def _ssm(obj: Any, account: str, region: str) -> dict[str, Any] | None:
    from moto.ssm.models import ssm_backends

    parameter = ssm_backends[account][region].get_parameter(obj.name)
    if parameter is None:
        return None
    return {"Name": parameter.name, "Value": parameter.value, "Type": parameter.parameter_type,
            "Description": parameter.description}


def _sns(obj: Any, account: str, region: str) -> dict[str, Any] | None:
    from moto.sns.models import sns_backends

    topic = sns_backends[account][region].topics.get(obj.arn)
    if topic is None:
        return None
    return {"TopicName": topic.name, "DisplayName": topic.display_name}


READERS: dict[str, Callable[[Any, str, str], dict[str, Any] | None]] = {
    "AWS::SQS::Queue": _sqs,
    "AWS::SSM::Parameter": _ssm,
    "AWS::SNS::Topic": _sns,
}


def _same(expected: Any, actual: Any) -> bool:
    if isinstance(expected, bool) or isinstance(actual, bool):
        return str(expected).lower() == str(actual).lower()
    return str(expected) == str(actual)


def resource_drift(stack: Any, logical: str) -> dict[str, Any]:
    """One StackResourceDrift of a stack's resource."""
    rec = record(stack)
    obj = stack.resource_map._parsed_resources.get(logical)
    kind = str(rec.desired.resources[logical]["Type"]) if rec.desired else ""
    expected = rec.props.get(logical, {})
    drift: dict[str, Any] = {"StackId": stack.stack_id, "LogicalResourceId": logical, "ResourceType": kind,
                             "PhysicalResourceId": res.physical_id(obj) if obj is not None else "",
                             "PropertyDifferences": []}
    reader = READERS.get(kind)
    if reader is None or obj is None or isinstance(obj, res.Stub):
        drift["StackResourceDriftStatus"] = "NOT_CHECKED"
        return drift
    try:
        actual = reader(obj, stack.account_id, stack.region_name)
    except Exception:  # noqa: BLE001 - a reader that cannot tell leaves the resource unchecked, never a 500
        drift["StackResourceDriftStatus"] = "NOT_CHECKED"
        return drift
    if actual is None:
        drift["StackResourceDriftStatus"] = "DELETED"
        return drift
    differences = [{"PropertyPath": f"/{name}", "ExpectedValue": str(value), "ActualValue": str(actual[name]),
                    "DifferenceType": "NOT_EQUAL"}
                   for name, value in sorted(expected.items())
                   if name in actual and actual[name] is not None and not _same(value, actual[name])]
    drift["PropertyDifferences"] = differences
    drift["StackResourceDriftStatus"] = "MODIFIED" if differences else "IN_SYNC"
    return drift


def detect(backend: Any, stack: Any) -> dict[str, Any]:
    """Run a drift detection of the whole stack; return its DescribeStackDriftDetectionStatus answer."""
    rec = record(stack)
    logicals = sorted(rec.desired.resources) if rec.desired else []
    drifts = [resource_drift(stack, logical) for logical in logicals]
    stack.fw_drifts = drifts
    drifted = sum(d["StackResourceDriftStatus"] in ("MODIFIED", "DELETED") for d in drifts)
    detection = {"StackId": stack.stack_id, "StackDriftDetectionId": str(uuid.uuid4()),
                 "StackDriftStatus": "DRIFTED" if drifted else "IN_SYNC",
                 "DetectionStatus": "DETECTION_COMPLETE", "DriftedStackResourceCount": drifted}
    detections = getattr(backend, "fw_drift_detections", None)
    if detections is None:
        detections = backend.fw_drift_detections = {}
    detections[detection["StackDriftDetectionId"]] = detection
    return detection
