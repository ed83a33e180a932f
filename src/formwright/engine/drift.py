"""Drift of deployed stacks: DetectStackDrift, its status polled as the engine's waits poll, and each
drifted resource's property differences (DescribeStackResourceDrifts).

Follows "Detect unmanaged configuration changes to stacks and resources with drift detection" (AWS
CloudFormation User Guide): a detection runs asynchronously (DescribeStackDriftDetectionStatus until it
is no longer DETECTION_IN_PROGRESS); a resource is IN_SYNC, MODIFIED, DELETED or NOT_CHECKED (a type
drift detection does not support). NOT_CHECKED resources are counted, never hidden: a stack whose every
resource is NOT_CHECKED is "in sync" only as far as anyone could tell. After a detection, one
ListStackResources counts a stack's resources by status (DescribeStackResourceDrifts leaves the NOT_CHECKED
ones out); only a drifted stack's drifted resources are read for their property differences. The sync loop
(`sync/drift.py`) reads drifted resources through `drifted_resources` here.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Any

from formwright.engine.cfn import CloudFormation, StackInfo

DRIFTED_STATUSES = ("MODIFIED", "DELETED")


@dataclass
class PropertyDrift:
    """One property of a resource that differs from the template (PropertyDifference)."""

    path: str  # e.g. /VisibilityTimeout
    expected: str
    actual: str
    kind: str  # NOT_EQUAL | ADD | REMOVE


@dataclass
class ResourceDrift:
    """One resource's drift (StackResourceDrift)."""

    logical_id: str
    resource_type: str
    status: str  # IN_SYNC | MODIFIED | DELETED | NOT_CHECKED | UNKNOWN
    physical_id: str = ""
    properties: list[PropertyDrift] = field(default_factory=list)

    @classmethod
    def from_api(cls, data: dict[str, Any]) -> ResourceDrift:
        """From one element of DescribeStackResourceDrifts' StackResourceDrifts."""
        return cls(str(data.get("LogicalResourceId", "")), str(data.get("ResourceType", "")),
                   str(data.get("StackResourceDriftStatus", "")), str(data.get("PhysicalResourceId", "")),
                   [PropertyDrift(str(d.get("PropertyPath", "")), str(d.get("ExpectedValue", "")),
                                  str(d.get("ActualValue", "")), str(d.get("DifferenceType", "")))
                    for d in data.get("PropertyDifferences") or []])


@dataclass
class StackDrift:
    """The drift of one project stack."""

    name: str
    stack_name: str
    status: str  # IN_SYNC | DRIFTED | NOT_DEPLOYED | FAILED
    drifted: list[ResourceDrift] = field(default_factory=list)
    in_sync: int = 0
    not_checked: int = 0
    not_checked_types: list[str] = field(default_factory=list)
    error: str = ""

    def to_json(self) -> dict[str, Any]:
        """As plain data."""
        return asdict(self)


@dataclass(frozen=True)
class Detection:
    """A drift detection started: its id, and when DetectStackDrift returned it (monotonic seconds)."""

    detection_id: str
    started: float


def start(cfn: CloudFormation, stack_name: str) -> Detection:
    """Start a drift detection of the whole stack."""
    detection_id = str(cfn.call("detect_stack_drift", StackName=stack_name)["StackDriftDetectionId"])
    return Detection(detection_id, time.monotonic())


def wait(cfn: CloudFormation, detection: Detection, timeout: float | None = None) -> dict[str, Any]:
    """DescribeStackDriftDetectionStatus until the detection is over, at the engine's wait cadence counted
    from the detection's start, not from this wait's: a detection waited for after others (one worker
    for many stacks) is read at once when it is old enough, never after a first delay of its own."""
    return cfn.poll(lambda: cfn.read("describe_stack_drift_detection_status",
                                     StackDriftDetectionId=detection.detection_id),
                    lambda answer: answer.get("DetectionStatus") != "DETECTION_IN_PROGRESS",
                    what="waiting for the drift detection", timeout=timeout, since=detection.started)


def resource_drifts(cfn: CloudFormation, stack_name: str,
                    statuses: tuple[str, ...] = ()) -> list[ResourceDrift]:
    """Every page of DescribeStackResourceDrifts (only `statuses` when given)."""
    kwargs: dict[str, Any] = {"StackName": stack_name}
    if statuses:
        kwargs["StackResourceDriftStatusFilters"] = list(statuses)
    found: list[ResourceDrift] = []
    while True:
        page = cfn.call("describe_stack_resource_drifts", **kwargs)
        found.extend(ResourceDrift.from_api(d) for d in page.get("StackResourceDrifts") or [])
        if not page.get("NextToken"):
            return found
        kwargs["NextToken"] = page["NextToken"]


def drifted_resources(cfn: CloudFormation, stack_name: str) -> list[ResourceDrift]:
    """The MODIFIED and DELETED resources of the stack's latest drift detection."""
    return resource_drifts(cfn, stack_name, DRIFTED_STATUSES)


def detect(cfn: CloudFormation, name: str, stack_name: str) -> StackDrift:
    """Detect one deployed stack's drift and read every resource's (in sync, drifted, not checked)."""
    return result(cfn, name, stack_name, start(cfn, stack_name))


def resource_statuses(cfn: CloudFormation, stack_name: str) -> dict[str, tuple[str, str]]:
    """Each resource's type and status in the stack's latest drift detection (ListStackResources'
    DriftInformation, every page): the only place CloudFormation says NOT_CHECKED, as
    DescribeStackResourceDrifts leaves out the resources it could not check."""
    kwargs: dict[str, Any] = {"StackName": stack_name}
    found: dict[str, tuple[str, str]] = {}
    while True:
        page = cfn.call("list_stack_resources", **kwargs)
        for summary in page.get("StackResourceSummaries") or []:
            status = (summary.get("DriftInformation") or {}).get("StackResourceDriftStatus") or "NOT_CHECKED"
            found[str(summary.get("LogicalResourceId", ""))] = (str(summary.get("ResourceType", "")), status)
        if not page.get("NextToken"):
            return found
        kwargs["NextToken"] = page["NextToken"]


def result(cfn: CloudFormation, name: str, stack_name: str, detection: Detection) -> StackDrift:
    """Wait for a started detection; count its resources by status (in sync, not checked: one listing) and
    read the property differences of a drifted stack's drifted resources (DescribeStackResourceDrifts,
    for drifted stacks only)."""
    answer = wait(cfn, detection)
    if answer.get("DetectionStatus") == "DETECTION_FAILED" and not answer.get("StackDriftStatus"):
        return StackDrift(name, stack_name, "FAILED",
                          error=str(answer.get("DetectionStatusReason") or "drift detection failed"))
    statuses = resource_statuses(cfn, stack_name)
    drifted = answer.get("StackDriftStatus") == "DRIFTED"
    unchecked = [kind for kind, status in statuses.values() if status not in (*DRIFTED_STATUSES, "IN_SYNC")]
    result = StackDrift(name, stack_name, "DRIFTED" if drifted else "IN_SYNC",
                        drifted=drifted_resources(cfn, stack_name) if drifted else [],
                        in_sync=sum(status == "IN_SYNC" for _, status in statuses.values()),
                        not_checked=len(unchecked), not_checked_types=sorted(set(unchecked)))
    if answer.get("DetectionStatus") == "DETECTION_FAILED":
        # CloudFormation still reports what it could check: "failed" names the resources it could not
        result.error = str(answer.get("DetectionStatusReason") or "")
    return result


def drift_note(info: StackInfo) -> str:
    """What the stack's latest drift detection found, when it found drift (said once per stack)."""
    if info.drift != "DRIFTED":
        return ""
    when = f" at {info.drift_checked:%Y-%m-%d %H:%M} UTC" if info.drift_checked else ""
    return (f"drifted (drift detection{when}): `formwright drift` shows what, "
            "`deploy --revert-drift` sets it back")


def join_notes(*notes: str) -> str:
    """Notes of a plan, in one line."""
    return "; ".join(n for n in notes if n)
