"""One resource in moto: create, update in place, delete, tag, and read its attributes.

moto implements `update_from_cloudformation_json` for a few types only; for the others the changes
listed in IN_PLACE are applied through moto's service backends, tags through each model's tag store.
Whatever is left cannot be updated in place, and `can_update` says so before a change set is offered.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from formwright.cloud.emulator import completions, in_place, lambda_grants, moto_inputs, own, schemas
from formwright.cloud.emulator import tags as resource_tags
from formwright.cloud.emulator.context import request
from formwright.cloud.emulator.handler_errors import handler_message
from formwright.cloud.emulator.in_place import (
    COMPLETE_CREATE,
    COMPLETE_UPDATE,
    IN_PLACE,
    MOTO_APPLIES,
    MOTO_IGNORES,
    OWN_UPDATE,
)
from formwright.cloud.lambda_runtime import custom_resources as custom


class ResourceFailure(Exception):
    """A resource operation failed; `logical` names the resource, the message is the reason."""

    def __init__(self, logical: str, reason: str) -> None:
        super().__init__(reason)
        self.logical = logical
        self.reason = reason
        self.leftover: Any = None  # what a failed custom resource request left for the rollback


@dataclass
class Stub:
    """A resource the project chose to stub: it exists only in the stack's record, never in a service."""

    logical_resource_id: str
    cf_resource_type: str
    physical_resource_id: str
    properties: dict[str, Any] = field(default_factory=dict)

    def get_cfn_attribute(self, name: str) -> str:
        """A stubbed resource's attributes are placeholders naming it."""
        return f"stub:{self.logical_resource_id}.{name}"

    def delete(self, account_id: str, region_name: str) -> None:
        """Nothing to delete."""


def model_class(kind: str) -> Any:
    """The local cloud's own model class for a type (`own`), else moto's, or None."""
    from moto.cloudformation.parsing import get_model_map

    return own.model(kind) or get_model_map().get(kind)


def implemented() -> set[str]:
    """Types the local cloud can create: moto's CloudFormation models and its own."""
    from moto.cloudformation.parsing import get_model_map

    return set(get_model_map()) | set(own.models())


def _has_update(kind: str) -> bool:
    cls = model_class(kind)
    update = getattr(cls, "update_from_cloudformation_json", None)
    return update is not None and not hasattr(update, "__isabstractmethod__")


NESTED = "AWS::CloudFormation::Stack"
# the model attribute moto's update takes as the resource's name, where it is not the physical id
UPDATE_NAME = {"AWS::SNS::Topic": "name"}
# names CloudFormation generates when the template gives none, for models that do not generate one
GENERATED_NAMES = {"AWS::SSM::Parameter": {"Name": "CFN"}}
# generated names a service restricts, which moto's `<stack>-<logical>-<suffix>` can break: at most this many
# letters, digits and single hyphens, starting with a letter (RDS: CreateDBInstance's DBInstanceIdentifier)
FITTED_NAMES = {"AWS::RDS::DBInstance": {"DBInstanceIdentifier": 63}}
# identifiers CloudFormation generates from the stack's name for types the local cloud creates itself
STACK_NAMED = {lambda_grants.PERMISSION: {"Id": lambda_grants.statement_id},
               completions.LOAD_BALANCER_V2: {"Name": completions.load_balancer_name}}
# properties CloudFormation takes in any case and moto's service only in lower case (RDS: `Engine: MySQL`)
LOWER_CASE = {"AWS::RDS::DBInstance": "Engine", "AWS::RDS::DBCluster": "Engine"}


def can_update(kind: str, names: set[str]) -> bool:
    """True when the local cloud can change these properties (and tags) of a `kind` in place."""
    if own.model(kind):
        return own.can_update(kind, names, schemas.tag_property(kind))
    if custom.is_custom(kind):  # its provider gets an Update request
        return True
    if kind in MOTO_APPLIES:
        return not names - MOTO_APPLIES[kind] - {schemas.tag_property(kind)}
    if _has_update(kind):
        return not names & MOTO_IGNORES.get(kind, set())
    tag_property = schemas.tag_property(kind)
    return not (names - {tag_property} - set(IN_PLACE.get(kind, {})))


def physical_id(obj: Any) -> str:
    """The physical id CloudFormation shows (Ref) for a moto object (a nested stack's is its id: see
    `moto_server.patch_moto`)."""
    return str(getattr(obj, "physical_resource_id", None) or obj)


def wait_handle_url(stack: Any, logical: str) -> str:
    """A WaitConditionHandle's physical id: the URL cfn-signal would PUT to, in CloudFormation's form
    (AWS::CloudFormation::WaitConditionHandle, "Return values": Ref gives a presigned URL); nothing
    answers it here."""
    from urllib.parse import quote

    return (f"https://cloudformation-waitcondition-{stack.region_name}.s3.amazonaws.com/"
            f"{quote(stack.stack_id, safe='')}/{logical}")


def create(logical: str, kind: str, props: dict[str, Any], resource_map: Any, account: str,
           region: str) -> Any:
    """Create one resource in moto; raises ResourceFailure with a CloudFormation-style reason."""
    from moto.cloudformation.parsing import parse_and_create_resource

    if custom.is_custom(kind):
        try:
            return custom.create(logical, kind, props, resource_map.stack_id, account, region)
        except custom.Failure as err:
            failure = ResourceFailure(logical, str(err))
            failure.leftover = err.leftover
            raise failure from None
    props = dict(props)
    for name, prefix in GENERATED_NAMES.get(kind, {}).items():
        props.setdefault(name, f"{prefix}-{logical}-{_suffix()}")
    for name, limit in FITTED_NAMES.get(kind, {}).items():
        props.setdefault(name, fitted_name(str(resource_map["AWS::StackName"]), logical, limit))
    for name, generate in STACK_NAMED.get(kind, {}).items():
        props.setdefault(name, generate(str(resource_map["AWS::StackName"]), logical))
    if isinstance(props.get(LOWER_CASE.get(kind, "")), str):
        props[LOWER_CASE[kind]] = props[LOWER_CASE[kind]].lower()
    obj: Any  # a moto model or one of ours (its type varies with the resource type)
    try:
        if own.model(kind):
            obj = own.create(kind, logical, props, str(resource_map["AWS::StackName"]), account, region)
        elif kind in completions.OWN_CREATE:
            obj = completions.OWN_CREATE[kind](logical, props, account, region)
        else:
            given = moto_inputs.for_moto(kind, props, account, region)
            instance = kind == "AWS::EC2::Instance"
            request.block_iops = completions.block_device_iops(props) if instance else None
            try:
                obj = parse_and_create_resource(logical, {"Type": kind, "Properties": given}, resource_map,
                                                account_id=account, region_name=region)
            finally:
                request.block_iops = None
    except Exception as err:  # noqa: BLE001 - any moto failure becomes the resource's reason
        raise ResourceFailure(logical, handler_message(err, kind, props)) from None
    if obj is None:
        raise ResourceFailure(logical, f"the local cloud could not create {kind}")
    try:
        in_place.set_in_place(kind, obj, props, set(props), account, region)
        if kind in COMPLETE_CREATE:
            COMPLETE_CREATE[kind](obj, props, account, region)
    except Exception as err:  # noqa: BLE001 - any moto failure becomes the resource's reason
        raise ResourceFailure(logical, handler_message(err)) from None
    if kind == NESTED and obj.status != "CREATE_COMPLETE":
        raise ResourceFailure(logical, f"Embedded stack {obj.stack_id} was not successfully created: "
                                       f"{_nested_reason(obj)}")
    return obj


def _nested_reason(stack: Any) -> str:
    """The reason a nested stack gave for rolling back."""
    return next((e.resource_status_reason for e in reversed(stack.events)
                 if e.logical_resource_id == stack.name and e.resource_status_reason
                 and "ROLLBACK_IN_PROGRESS" in e.resource_status), stack.status)


def _update_nested(logical: str, stack: Any, props: dict[str, Any], account: str, region: str) -> Any:
    """A nested stack is updated in place, as an UpdateStack of the child."""
    from moto.cloudformation.utils import get_stack_from_s3_url
    from moto.core.exceptions import ServiceException
    from moto.utilities.utils import get_partition

    body = get_stack_from_s3_url(props["TemplateURL"], account_id=account, partition=get_partition(region))
    try:
        stack.update(body, parameters={k: str(v) for k, v in (props.get("Parameters") or {}).items()})
    except ServiceException as err:
        if "No updates are to be performed" not in str(err):
            raise
    if stack.status != "UPDATE_COMPLETE" and stack.status not in ("CREATE_COMPLETE",):
        raise ResourceFailure(logical, f"Embedded stack {stack.stack_id} was not successfully updated. "
                                       f"Currently in {stack.status} with reason: {_nested_reason(stack)}")
    return stack


def system_tags(obj: Any, kind: str, props: dict[str, Any], stack: Any, logical: str) -> None:
    """The resource's tags (some of moto's models drop them on create) and the aws:cloudformation:*
    tags on a resource the stack made; a failure is the resource's."""
    own = props.get(schemas.tag_property(kind) or "") or {}
    pairs = own if isinstance(own, dict) else {t["Key"]: t["Value"] for t in own}
    try:
        resource_tags.add_system(obj, kind, pairs, stack, logical)
    except Exception as err:  # noqa: BLE001 - any moto failure becomes the resource's reason
        raise ResourceFailure(logical, handler_message(err)) from None


def fitted_name(stack: str, logical: str, limit: int) -> str:
    """`<stack>-<logical>-<suffix>` lowercased and cut to `limit` characters, as CloudFormation names a
    resource whose service allows only letters, digits and single hyphens: the suffix is kept whole, no
    hyphen doubles or ends the prefix (a long stack name never makes an invalid identifier)."""
    suffix = _suffix().lower()
    prefix = re.sub(r"-{2,}", "-", re.sub(r"[^a-z0-9-]", "-", f"{stack}-{logical}".lower()))
    return prefix[:limit - len(suffix) - 1].rstrip("-") + "-" + suffix


def _suffix() -> str:
    import random
    import string

    return "".join(random.choices(string.ascii_letters + string.digits, k=12))  # noqa: S311 - a name


def update(logical: str, kind: str, obj: Any, props: dict[str, Any], names: set[str], account: str,
           region: str, before: dict[str, Any] | None = None) -> Any:
    """Apply `props` to a resource in place (`before`: the properties it has now); return the (possibly
    new) moto object."""
    props = dict(props)
    for name in GENERATED_NAMES.get(kind, {}):
        props.setdefault(name, physical_id(obj))
    try:
        if kind == NESTED:
            return _update_nested(logical, obj, props, account, region)
        if isinstance(obj, custom.CustomResource):
            return obj.update(props)
        tag_property = schemas.tag_property(kind)
        if isinstance(obj, own.Model):
            obj.update(props, names - {tag_property})
            new = obj
        elif kind in OWN_UPDATE:
            new = OWN_UPDATE[kind](obj, props, before or {}, account, region)
        elif _has_update(kind) and names - {tag_property}:
            # moto's update of some types (SNS) makes the resource anew: tags alone are set in place
            name = getattr(obj, UPDATE_NAME[kind]) if kind in UPDATE_NAME else physical_id(obj)
            new = model_class(kind).update_from_cloudformation_json(
                original_resource=obj, new_resource_name=name,
                cloudformation_json={"Type": kind, "Properties": props},
                account_id=account, region_name=region)
            new.cf_resource_type, new.logical_resource_id = kind, logical
        else:
            in_place.set_in_place(kind, obj, props, names, account, region)
            new = obj
        if kind in COMPLETE_UPDATE:
            COMPLETE_UPDATE[kind](new, props, names, account, region)
        if tag_property in names:  # moto's updates leave tags alone: set them where list-tags reads them
            set_tags(new, kind, props.get(tag_property) or [], account, region)
        return new
    except ResourceFailure:
        raise
    except custom.Failure as err:
        failure = ResourceFailure(logical, str(err))
        failure.leftover = err.leftover
        raise failure from None
    except Exception as err:  # noqa: BLE001 - any moto failure becomes the resource's reason
        raise ResourceFailure(logical, handler_message(err)) from None


def set_tags(obj: Any, kind: str, tags: Any, account: str, region: str) -> None:
    """Replace a resource's own tags (a list of Key/Value or a map) in moto's store for its type."""
    pairs = tags if isinstance(tags, dict) else {t["Key"]: t["Value"] for t in tags}
    if not resource_tags.replace(obj, kind, pairs, account, region):
        raise ResourceFailure(getattr(obj, "logical_resource_id", "?"),
                              "the local cloud cannot change this resource's tags")


def delete(obj: Any, kind: str, props: dict[str, Any], account: str, region: str) -> None:
    """Delete one resource from moto; raises ResourceFailure."""
    from moto.cloudformation.parsing import parse_and_delete_resource

    logical = getattr(obj, "logical_resource_id", "?")
    if isinstance(obj, Stub):
        return
    try:
        if isinstance(obj, own.Model):
            obj.remove()
            return
        if completions.delete_own(obj, kind, account, region):
            return
        try:
            obj.delete(account, region)
        except (TypeError, AttributeError):
            parse_and_delete_resource(physical_id(obj), {"Type": kind, "Properties": props}, account, region)
    except custom.Failure as err:
        raise ResourceFailure(logical, str(err)) from None
    except Exception as err:  # noqa: BLE001 - any moto failure becomes the resource's reason
        raise ResourceFailure(logical, handler_message(err)) from None
