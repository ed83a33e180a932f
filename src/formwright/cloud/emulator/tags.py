"""A resource's tags in moto: where each model keeps them, read and replaced there.

Each service's list-tags call reads its own store (an EC2 tag table, a bucket's tagger, a queue's
dict, a table's Key/Value list, ...); the emulator writes to the same store, so what the stack set is
what `aws ... list-tags` shows. The `aws:cloudformation:stack-name|stack-id|logical-id` tags go on
every resource whose store is known here, as CloudFormation puts them on every taggable resource
("Resource tag", AWS CloudFormation User Guide); a tag update from a stack never removes them.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

SYSTEM_PREFIX = "aws:"
Tags = dict[str, str]


def _ec2(account: str, region: str) -> Any:
    from moto.ec2.models import ec2_backends

    return ec2_backends[account][region]


def _ec2_read(obj: Any, account: str, region: str) -> Tags:
    return dict(_ec2(account, region).tags.get(obj.id, {}))


def _ec2_write(obj: Any, tags: Tags, account: str, region: str) -> None:
    backend = _ec2(account, region)
    current = backend.tags.get(obj.id, {})
    stale = {k: v for k, v in current.items() if k not in tags}
    if stale:
        backend.delete_tags([obj.id], stale)
    if tags:
        backend.create_tags([obj.id], tags)


def _s3_tagger(account: str, region: str) -> Any:
    from moto.s3.models import s3_backends
    from moto.utilities.utils import get_partition

    return s3_backends[account][get_partition(region)].tagger


def _logs_tagger(account: str, region: str) -> Any:
    from moto.logs.models import logs_backends

    return logs_backends[account][region].tagger


def _tagger(get: Callable[[str, str], Any]) -> tuple[Any, Any]:
    """Read and replace on a service's TaggingService, keyed by the resource's ARN (S3, Logs)."""
    def read(obj: Any, account: str, region: str) -> Tags:
        return dict(get(account, region).get_tag_dict_for_resource(obj.arn))

    def write(obj: Any, tags: Tags, account: str, region: str) -> None:
        tagger = get(account, region)
        tagger.delete_all_tags_for_resource(obj.arn)
        if tags:
            tagger.tag_resource(obj.arn, tagger.convert_dict_to_tags_input(tags))

    return read, write


def _ssm_tags(obj: Any, account: str, region: str) -> dict[str, str]:
    from moto.ssm.models import ssm_backends

    return ssm_backends[account][region]._resource_tags["Parameter"][obj.name]  # type: ignore[no-any-return]


def _ssm_write(obj: Any, tags: Tags, account: str, region: str) -> None:
    store = _ssm_tags(obj, account, region)
    store.clear()
    store.update(tags)


def _attr(name: str, shape: str = "dict") -> tuple[Any, Any]:
    """Read and replace on tags kept on the model itself: a dict, or a list of Key/Value (`shape`
    is the one written when the model holds none yet; an existing value keeps its shape)."""
    def read(obj: Any, account: str, region: str) -> Tags:
        value = getattr(obj, name, None) or {}
        if isinstance(value, list):
            return {t["Key"]: t["Value"] for t in value}
        return {k: v["Value"] if isinstance(v, dict) else v for k, v in value.items()}

    def write(obj: Any, tags: Tags, account: str, region: str) -> None:
        current = getattr(obj, name, None)
        as_list = isinstance(current, list) if current else shape == "list"
        # a list entry's other fields (an Auto Scaling group's PropagateAtLaunch) stay with its key
        kept = {t["Key"]: t for t in current} if isinstance(current, list) else {}
        setattr(obj, name, [{**kept.get(k, {}), "Key": k, "Value": v} for k, v in tags.items()] if as_list
                else dict(tags))

    return read, write


def _emr_write(obj: Any, tags: Tags, account: str, region: str) -> None:
    obj._tags = dict(tags)


def _own_read(obj: Any, account: str, region: str) -> Tags:
    return obj.live_tags()  # type: ignore[no-any-return]


def _own_write(obj: Any, tags: Tags, account: str, region: str) -> None:
    obj.write_tags(tags)


# type -> (read, replace) on moto's store of that type's tags
STORES: dict[str, tuple[Callable[[Any, str, str], Tags], Callable[[Any, Tags, str, str], None]]] = {
    "AWS::SQS::Queue": _attr("tags"),
    "AWS::SNS::Topic": _attr("_tags"),
    "AWS::S3::Bucket": _tagger(_s3_tagger),
    "AWS::Logs::LogGroup": _tagger(_logs_tagger),
    "AWS::DynamoDB::Table": _attr("tags", "list"),
    "AWS::IAM::Role": _attr("tags", "list"),
    "AWS::Lambda::Function": _attr("tags"),
    "AWS::SSM::Parameter": (lambda obj, account, region: dict(_ssm_tags(obj, account, region)), _ssm_write),
    # moto's EMR cluster answers `tags` (a read-only list) from its `_tags` map
    "AWS::EMR::Cluster": (lambda obj, account, region: dict(obj._tags), _emr_write),
}


def _store(obj: Any, kind: str) -> tuple[Any, Any] | None:
    from moto.ec2.models.core import TaggedEC2Resource

    from formwright.cloud.emulator.own import Model

    if isinstance(obj, Model):
        return (_own_read, _own_write) if obj.taggable else None
    if isinstance(obj, TaggedEC2Resource):
        return _ec2_read, _ec2_write
    found = STORES.get(kind)
    if found is not None:
        return found
    existing = getattr(obj, "tags", None)
    if isinstance(existing, dict):
        return _attr("tags")
    if isinstance(existing, list):
        return _attr("tags", "list")
    return None


def live(obj: Any, kind: str, account: str, region: str) -> Tags | None:
    """The resource's tags as its service lists them (None when the local cloud does not know where)."""
    store = _store(obj, kind)
    return None if store is None else store[0](obj, account, region)


def replace(obj: Any, kind: str, tags: Tags, account: str, region: str) -> bool:
    """Set the resource's own tags to `tags`, keeping its `aws:` tags; False when there is no store."""
    store = _store(obj, kind)
    if store is None:
        return False
    system = {k: v for k, v in store[0](obj, account, region).items() if k.startswith(SYSTEM_PREFIX)}
    store[1](obj, {**tags, **system}, account, region)
    return True


def add_system(obj: Any, kind: str, own: Tags, stack: Any, logical: str) -> None:
    """Put its own tags and the aws:cloudformation:* tags on a resource the stack made (where its
    tags are known)."""
    store = _store(obj, kind)
    if store is None:
        return
    account, region = stack.account_id, stack.region_name
    current = store[0](obj, account, region)
    store[1](obj, {**current, **own, "aws:cloudformation:stack-name": stack.name,
                   "aws:cloudformation:stack-id": stack.stack_id,
                   "aws:cloudformation:logical-id": logical}, account, region)
