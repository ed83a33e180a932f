"""Bringing existing resources under a stack: IMPORT change sets (ResourcesToImport) and
ImportExistingResources.

Follows "Bringing existing resources into CloudFormation management" (AWS CloudFormation User Guide):
an IMPORT change set's template describes the whole stack, the stack's resources as they are plus the
ones imported, each of which needs a DeletionPolicy; no other resource may be added, changed or removed
("Update, create or delete operations cannot be executed during import operations"); the resource must
exist and belong to no other stack. An imported resource is looked up in its service, never created.
With ImportExistingResources (CreateChangeSet) a custom-named resource that already exists is imported
instead of created, when its DeletionPolicy is Retain or RetainExceptOnCreate (CloudFormation's message
otherwise, as aws/aws-cdk-cli#1367 quotes it).

The local cloud can import the types it can find by their primary identifier (`FINDERS`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from formwright.cloud.emulator.changes import Desired

KEEPING = ("Retain", "RetainExceptOnCreate")


def _bucket(ids: dict[str, str], account: str, region: str) -> Any:
    from moto.s3.models import s3_backends
    from moto.utilities.utils import get_partition

    return s3_backends[account][get_partition(region)].buckets.get(ids.get("BucketName", ""))


def _queue(ids: dict[str, str], account: str, region: str) -> Any:
    from moto.sqs.models import sqs_backends

    name = ids.get("QueueName") or ids.get("QueueUrl", "").rstrip("/").rsplit("/", 1)[-1]
    return sqs_backends[account][region].queues.get(name)


def _topic(ids: dict[str, str], account: str, region: str) -> Any:
    from moto.sns.models import sns_backends

    arn = ids.get("TopicArn") or f"arn:aws:sns:{region}:{account}:{ids.get('TopicName', '')}"
    return sns_backends[account][region].topics.get(arn)


def _table(ids: dict[str, str], account: str, region: str) -> Any:
    from moto.dynamodb.models import dynamodb_backends

    return dynamodb_backends[account][region].tables.get(ids.get("TableName", ""))


def _log_group(ids: dict[str, str], account: str, region: str) -> Any:
    from moto.logs.models import logs_backends

    return logs_backends[account][region].groups.get(ids.get("LogGroupName", ""))


def _parameter(ids: dict[str, str], account: str, region: str) -> Any:
    from moto.ssm.models import ssm_backends

    return ssm_backends[account][region].get_parameter(ids.get("Name", ""))


# type: the moto object of a resource from its identifier properties (primary or name), None when missing
FINDERS: dict[str, Callable[[dict[str, str], str, str], Any]] = {
    "AWS::S3::Bucket": _bucket,
    "AWS::SQS::Queue": _queue,
    "AWS::SNS::Topic": _topic,
    "AWS::DynamoDB::Table": _table,
    "AWS::Logs::LogGroup": _log_group,
    "AWS::SSM::Parameter": _parameter,
}
# the property that names a resource of the type (a custom name), for ImportExistingResources
NAMES = {"AWS::S3::Bucket": "BucketName", "AWS::SQS::Queue": "QueueName", "AWS::SNS::Topic": "TopicName",
         "AWS::DynamoDB::Table": "TableName", "AWS::Logs::LogGroup": "LogGroupName",
         "AWS::SSM::Parameter": "Name"}


def _owner(backend: Any, obj: Any) -> str | None:
    """The stack that holds `obj` already, if any."""
    for stack in backend.stacks.values():
        if stack.status not in ("DELETE_COMPLETE", "REVIEW_IN_PROGRESS") and any(
                o is obj for o in stack.resource_map._parsed_resources.values()):
            return str(stack.name)
    return None


def check_import(new: Desired, old: Desired | None, wanted: dict[str, dict[str, str]]) -> str | None:
    """CloudFormation's refusal of an IMPORT change set (a ValidationError), or None."""
    if not wanted:
        return "ResourcesToImport must be specified for a change set of type IMPORT"
    missing = sorted(set(wanted) - set(new.resources))
    if missing:
        return f"Resources {missing} to import are not in the template"
    unkept = sorted(n for n in wanted if "DeletionPolicy" not in new.resources[n])
    if unkept:
        return (f"The following resources to import {unkept} must have DeletionPolicy attribute specified "
                "in the template.")
    before = old.resources if old else {}
    others = sorted(n for n in set(new.resources) | set(before) if n not in wanted
                    and before.get(n) != new.resources.get(n))
    if others:
        return (f"You have modified resources {others} in your template that are not being imported. "
                "Update, create or delete operations cannot be executed during import operations.")
    return None


def import_changes(backend: Any, new: Desired, wanted: dict[str, dict[str, str]]) -> \
        tuple[list[dict[str, Any]], dict[str, Any], str | None]:
    """The Import changes, the moto objects found, and the reason the change set fails (None: it does not)."""
    changes, found = [], {}
    for logical, ids in sorted(wanted.items()):
        kind = str(new.resources[logical]["Type"])
        finder = FINDERS.get(kind)
        if finder is None:
            return [], {}, (f"The local cloud cannot import {kind} ({logical}): it imports "
                            f"{', '.join(FINDERS)}")
        obj = finder(ids, backend.account_id, backend.region_name)
        shown = ", ".join(f"{k}={v}" for k, v in ids.items())
        if obj is None:
            return [], {}, f"Resource {logical} of type {kind} with identifier {{{shown}}} does not exist"
        owner = _owner(backend, obj)
        if owner is not None:
            return [], {}, (f"Resource {logical} of type {kind} with identifier {{{shown}}} already "
                            f"belongs to stack {owner}")
        from formwright.cloud.emulator import resources as res

        found[logical] = obj
        changes.append({"Action": "Import", "LogicalResourceId": logical, "ResourceType": kind,
                        "PhysicalResourceId": res.physical_id(obj), "Scope": [], "Details": []})
    return changes, found, None


def existing(backend: Any, new: Desired, computed: list[dict[str, Any]]) -> \
        tuple[list[dict[str, Any]], dict[str, Any], str | None]:
    """ImportExistingResources: each Add of a custom-named resource that exists becomes an Import."""
    from formwright.cloud.emulator import resources as res

    found, refused = {}, []
    for change in computed:
        kind = change["ResourceType"]
        name = NAMES.get(kind)
        value = (new.resources[change["LogicalResourceId"]].get("Properties") or {}).get(name or "")
        if change["Action"] != "Add" or name is None or not isinstance(value, str):
            continue
        obj = FINDERS[kind]({name: value}, backend.account_id, backend.region_name)
        if obj is None or _owner(backend, obj) is not None:
            continue
        logical = change["LogicalResourceId"]
        if new.resources[logical].get("DeletionPolicy") not in KEEPING:
            refused.append(f"{logical} ({{{name}={value}}})")
            continue
        found[logical] = obj
        change.update({"Action": "Import", "PhysicalResourceId": res.physical_id(obj)})
    if refused:
        return computed, {}, ("CloudFormation is attempting to import some resources because they "
                              "already exist in your account. The resources must have the DeletionPolicy "
                              "attribute set to 'Retain' or 'RetainExceptOnCreate' in the template for "
                              f"successful import. The affected resources are {', '.join(refused)}")
    return computed, found, None
