"""Fn::GetAtt of a live resource: moto's answer where it is a template value, else the backend lookups
moto's models lack, the primary identifier or the property the template set; otherwise a named failure."""

from __future__ import annotations

import re
from typing import Any

from formwright.cloud.emulator import schemas
from formwright.cloud.emulator.resources import ResourceFailure, Stub, physical_id
from formwright.cloud.lambda_runtime import custom_resources as custom


def attribute(logical: str, kind: str, obj: Any, name: str, props: dict[str, Any]) -> Any:
    """Fn::GetAtt of a live resource; raises ResourceFailure when the local cloud cannot tell it."""
    if isinstance(obj, Stub):
        return obj.get_cfn_attribute(name)
    if isinstance(obj, custom.CustomResource):
        try:
            return obj.get_cfn_attribute(name)
        except custom.Failure as err:
            raise ResourceFailure(logical, str(err)) from None
    if kind == "AWS::CloudFormation::Stack" and name.startswith("Outputs."):
        return _nested_output(logical, obj, name.split(".", 1)[1])
    cls = type(obj)
    if getattr(cls, "has_cfn_attr", None) and cls.has_cfn_attr(name):
        try:
            value = obj.get_cfn_attribute(name)
            if value is not None and _template_value(value):
                return value
        except Exception:  # noqa: BLE001,S110 - moto raises NotImplementedError and others: fall through
            pass
    extra = EXTRA_ATTRIBUTES.get((kind, name))
    if extra is not None:
        try:
            return extra(obj)
        except LookupError as err:  # the resource has no such value: CloudFormation's reason
            raise ResourceFailure(logical, str(err)) from None
    primary = (schemas.schema(kind) or {}).get("primaryIdentifier") or []
    if len(primary) == 1 and primary[0] == f"/properties/{name}":
        return physical_id(obj)
    if name in props and not isinstance(props[name], dict | list):
        return props[name]
    snake = re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()
    value = getattr(obj, snake, None)
    if isinstance(value, str | int | float | bool) and value is not None:
        return value
    raise ResourceFailure(logical, f"the local cloud cannot resolve Fn::GetAtt {logical}.{name}: moto does "
                                   f"not expose {kind} attribute {name}")


def _template_value(value: Any) -> bool:
    """True for what a template can hold (a string, number, boolean or a list of them): a moto object
    or record handed back as an attribute is not one."""
    if isinstance(value, list):
        return all(isinstance(v, str | int | float | bool) for v in value)
    return isinstance(value, str | int | float | bool)


def _cidr_associations(vpc: Any) -> list[str]:
    return [str(a["association_id"]) for a in vpc.cidr_block_association_set]


def _default_acl(vpc: Any) -> str:
    acls = vpc.ec2_backend.network_acls.values()
    return next(a.id for a in acls if a.vpc_id == vpc.id and a.default)


def _default_group(vpc: Any) -> str:
    return str(vpc.ec2_backend.get_security_group_from_name("default", vpc_id=vpc.id).id)


# attributes moto's models do not answer, read from moto's service backends
def _secondary_addresses(eni: Any) -> list[str]:
    return [str(a["PrivateIpAddress"]) for a in eni.private_ip_addresses if not a.get("Primary")]


def _public(name: str) -> Any:
    """An instance's PublicIp or PublicDnsName; one without a public address fails the reference as
    CloudFormation fails it ("Attribute: PublicIp was not found for resource: i-...")."""
    def value(instance: Any) -> str:
        found = instance.public_ip if name == "PublicIp" else instance.public_dns_name
        if not found:
            raise LookupError(f"Attribute: {name} was not found for resource: {instance.id}")
        return str(found)
    return value


EXTRA_ATTRIBUTES = {
    ("AWS::EC2::VPC", "DefaultNetworkAcl"): _default_acl,
    ("AWS::EC2::VPC", "DefaultSecurityGroup"): _default_group,
    ("AWS::EC2::VPC", "CidrBlockAssociations"): _cidr_associations,
    ("AWS::EC2::NetworkInterface", "SecondaryPrivateIpAddresses"): _secondary_addresses,
    ("AWS::EC2::Instance", "PublicIp"): _public("PublicIp"),
    ("AWS::EC2::Instance", "PublicDnsName"): _public("PublicDnsName"),
}


def _nested_output(logical: str, obj: Any, key: str) -> Any:
    for output in obj.outputs or []:
        if output["OutputKey"] == key:
            return output["OutputValue"]
    raise ResourceFailure(logical, f"Output '{key}' not found in nested stack {logical}")
