"""Drift detection: the live resource as moto holds it, compared with the properties last applied.

Follows "Detect unmanaged configuration changes to stacks and resources with drift detection" (AWS
CloudFormation User Guide): a resource is IN_SYNC, MODIFIED (with PropertyDifferences: NOT_EQUAL,
REMOVE, ADD), DELETED, or NOT_CHECKED when the local cloud has no reader for its type; the stack
is DRIFTED when any resource is MODIFIED or DELETED. Only properties the template sets explicitly
are compared ("This does not include default values for resource properties"); objects in an array
are matched whatever their order; the aws: tags and the stack's own tags are not the resource's.
"""

from __future__ import annotations

import copy
import json
import uuid
from typing import Any

from formwright.cloud.emulator import resources as res
from formwright.cloud.emulator import schemas
from formwright.cloud.emulator import tags as resource_tags
from formwright.cloud.emulator.completions_services import EXPECTED
from formwright.cloud.emulator.drift_readers import DOCUMENTS, READERS
from formwright.cloud.emulator.own import Model as OwnModel
from formwright.cloud.emulator.stack_record import record


def _same(expected: Any, actual: Any) -> bool:
    if isinstance(expected, bool) or isinstance(actual, bool):
        return str(expected).lower() == str(actual).lower()
    return str(expected) == str(actual)


def _text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)


def _difference(path: str, expected: Any, actual: Any, kind: str) -> dict[str, Any]:
    return {"PropertyPath": path, "ExpectedValue": "" if expected is None else _text(expected),
            "ActualValue": "" if actual is None else _text(actual), "DifferenceType": kind}


def differences(expected: Any, actual: Any, path: str = "") -> list[dict[str, Any]]:
    """PropertyDifferences of an actual value against the expected one (keys the template sets)."""
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return [_difference(path, expected, actual, "NOT_EQUAL")]
        found: list[dict[str, Any]] = []
        for key, value in expected.items():
            if actual.get(key) is None:
                found.append(_difference(f"{path}/{key}", value, None, "REMOVE"))
            else:
                found.extend(differences(value, actual[key], f"{path}/{key}"))
        return found
    if isinstance(expected, list):
        if not isinstance(actual, list):
            return [_difference(path, expected, actual, "NOT_EQUAL")]
        unmatched = list(range(len(actual)))
        missing = []
        for i, item in enumerate(expected):
            j = next((j for j in unmatched if not differences(item, actual[j])), None)
            if j is None:
                missing.append(i)
            else:
                unmatched.remove(j)
        found = []
        for i in missing:  # an item changed in place is compared with the one at its position
            if i in unmatched:
                unmatched.remove(i)
                found.extend(differences(expected[i], actual[i], f"{path}/{i}"))
            else:
                found.append(_difference(f"{path}/{i}", expected[i], None, "REMOVE"))
        found.extend(_difference(f"{path}/{j}", None, actual[j], "ADD") for j in unmatched)
        return found
    return [] if _same(expected, actual) else [_difference(path, expected, actual, "NOT_EQUAL")]


def _single(value: Any) -> Any:
    """A policy document with one-item lists as their item (IAM treats both forms alike)."""
    if isinstance(value, dict):
        return {k: _single(v) for k, v in value.items()}
    if isinstance(value, list):
        items = [_single(v) for v in value]
        return items[0] if len(items) == 1 else items
    return value


def _pairs(tags: Any) -> dict[str, str]:
    return dict(tags) if isinstance(tags, dict) else {t.get("Key"): t.get("Value") for t in tags or []}


def _tag_differences(name: str, declared: Any, expected: dict[str, str], live: dict[str, str],
                     stack_tags: dict[str, str]) -> list[dict[str, Any]]:
    """Tags by key: a declared tag changed or removed, or one added outside the stack."""
    as_map = isinstance(declared, dict)
    found = []
    for i, (key, value) in enumerate(expected.items()):
        at = f"/{name}/{key}" if as_map else f"/{name}/{i}"
        if key not in live:
            found.append(_difference(at, {"Key": key, "Value": value}, None, "REMOVE"))
        elif not _same(value, live[key]):
            found.append(_difference(at if as_map else f"{at}/Value", value, live[key], "NOT_EQUAL"))
    extra = sorted(k for k in live if k not in expected and k not in stack_tags
                   and not k.startswith(resource_tags.SYSTEM_PREFIX))
    for n, key in enumerate(extra, start=len(expected)):
        at = f"/{name}/{key}" if as_map else f"/{name}/{n}"
        found.append(_difference(at, None, {"Key": key, "Value": live[key]}, "ADD"))
    return found


def _attached_ingress(rec: Any, group_id: str) -> list[dict[str, Any]]:
    """The rules the stack's AWS::EC2::SecurityGroupIngress resources add to a group: CloudFormation
    "analyses the stack template for attachments before performing the drift comparison"."""
    kept = ("IpProtocol", "FromPort", "ToPort", "CidrIp", "CidrIpv6", "SourceSecurityGroupId", "Description")
    return [{k: v for k, v in rec.props.get(logical, {}).items() if k in kept}
            for logical, entry in (rec.desired.resources.items() if rec.desired else [])
            if entry.get("Type") == "AWS::EC2::SecurityGroupIngress"
            and rec.props.get(logical, {}).get("GroupId") == group_id]


def _drop(value: Any, path: tuple[str, ...]) -> None:
    """Remove the property at `path` ('*': every item of a list) from a properties object, in place."""
    if not path:
        return
    if isinstance(value, list) and path[0] == "*":
        for item in value:
            _drop(item, path[1:])
    elif isinstance(value, dict) and path[0] in value:
        if len(path) == 1:
            value.pop(path[0])
        else:
            _drop(value[path[0]], path[1:])


def _checkable(kind: str, obj: Any, values: dict[str, Any]) -> dict[str, Any]:
    """A copy of the applied `values` without what cannot be read back: the provider schema's write-only
    properties, and what the local cloud's own model of the type cannot tell (`Model.comparable`)."""
    values = copy.deepcopy(values)
    if kind in EXPECTED:
        values = EXPECTED[kind](values)
    for path in schemas.write_only(kind):
        _drop(values, path)
    return obj.comparable(values) if isinstance(obj, OwnModel) else values


def resource_drift(stack: Any, logical: str) -> dict[str, Any]:
    """One StackResourceDrift of a stack's resource."""
    rec = record(stack)
    obj = stack.resource_map._parsed_resources.get(logical)
    entry = rec.desired.resources.get(logical, {}) if rec.desired else {}
    kind = str(entry.get("Type", ""))
    applied = rec.props.get(logical, {})
    drift: dict[str, Any] = {"StackId": stack.stack_id, "LogicalResourceId": logical, "ResourceType": kind,
                             "PhysicalResourceId": res.physical_id(obj) if obj is not None else "",
                             "PropertyDifferences": []}
    reader = READERS.get(kind)
    if reader is None or obj is None or isinstance(obj, res.Stub):
        drift["StackResourceDriftStatus"] = "NOT_CHECKED"
        return drift
    account, region = stack.account_id, stack.region_name
    try:
        actual = reader(obj, account, region)
        live_tags = resource_tags.live(obj, kind, account, region) if actual is not None else None
    except Exception:  # noqa: BLE001 - a reader that cannot tell leaves the resource unchecked, never a 500
        drift["StackResourceDriftStatus"] = "NOT_CHECKED"
        return drift
    if actual is None:
        drift["StackResourceDriftStatus"] = "DELETED"
        return drift
    tag_property = schemas.tag_property(kind)
    checkable = _checkable(kind, obj, {n: _single(v) if n in DOCUMENTS else v for n, v in applied.items()
                                       if n != tag_property})
    names = [n for n in checkable if n in actual]
    expected = {n: checkable[n] for n in names}
    if "SecurityGroupIngress" in expected and kind == "AWS::EC2::SecurityGroup":
        expected["SecurityGroupIngress"] = [*expected["SecurityGroupIngress"],
                                            *_attached_ingress(rec, res.physical_id(obj))]
    seen = {n: _single(actual[n]) if n in DOCUMENTS else actual[n] for n in names}
    found = [d for n in names for d in (differences(expected[n], seen[n], f"/{n}")
                                        if seen[n] is not None
                                        else [_difference(f"/{n}", expected[n], None, "REMOVE")])]
    declared = (entry.get("Properties") or {}).get(tag_property) if tag_property else None
    if tag_property and live_tags is not None and declared:
        own = _pairs(declared) if isinstance(declared, dict) else {
            t.get("Key") for t in declared or [] if isinstance(t, dict)}
        wanted = {k: v for k, v in _pairs(applied.get(tag_property)).items() if k in own}
        found += _tag_differences(tag_property, declared, wanted, live_tags, dict(stack.tags or {}))
        expected[tag_property] = [{"Key": k, "Value": v} for k, v in wanted.items()]
        seen[tag_property] = [{"Key": k, "Value": v} for k, v in live_tags.items()
                              if not k.startswith(resource_tags.SYSTEM_PREFIX)]
    drift["ExpectedProperties"] = json.dumps(expected, sort_keys=True, default=str)
    drift["ActualProperties"] = json.dumps(seen, sort_keys=True, default=str)
    drift["PropertyDifferences"] = found
    drift["StackResourceDriftStatus"] = "MODIFIED" if found else "IN_SYNC"
    return drift


def unapplied(kind: str, obj: Any, props: dict[str, Any], names: set[str], account: str,
              region: str) -> list[str]:
    """Which of the properties `names` the live resource does not hold as `props` sets them, read as
    drift detection reads it (none when the type has no reader): a create or an update moto took and
    ignored. A property the reader reads as None (absent from the service) counts when `props` sets it."""
    reader = READERS.get(kind)
    if reader is None:
        return []
    actual = reader(obj, account, region)
    if actual is None:  # the service does not know it at all
        return ["the resource itself (its service does not find it)"]

    def seen(value: Any, name: str) -> Any:
        return _single(value) if name in DOCUMENTS else value

    wanted = _checkable(kind, obj, {n: props[n] for n in names if n in props})
    # only what the template sets and the resource lacks: an item others add (an ingress rule of an
    # AWS::EC2::SecurityGroupIngress, a policy attached from elsewhere) is not a failed update
    def missed(name: str) -> bool:
        if actual.get(name) is None:
            return name in actual and wanted[name] not in (None, "", [], {})
        return any(d["DifferenceType"] != "ADD" for d in differences(seen(wanted[name], name),
                                                                     seen(actual[name], name)))

    return sorted(n for n in wanted if missed(n))


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
    from moto.core.utils import utcnow

    # DescribeStacks' DriftInformation: the latest detection's, until the next one
    stack.drift_information = {"StackDriftStatus": detection["StackDriftStatus"],
                               "LastCheckTimestamp": utcnow()}
    detections = getattr(backend, "fw_drift_detections", None)
    if detections is None:
        detections = backend.fw_drift_detections = {}
    detections[detection["StackDriftDetectionId"]] = detection
    return detection
