"""What the resource provider schemas (shipped with cfn-lint) say about a resource type."""

from __future__ import annotations

import functools
from typing import Any

REGION = "us-east-1"


@functools.lru_cache(maxsize=1024)
def schema(resource_type: str) -> dict[str, Any] | None:
    """The provider schema of `resource_type`, or None when CloudFormation does not know the type."""
    from cfnlint.schema import PROVIDER_SCHEMA_MANAGER

    try:
        return dict(PROVIDER_SCHEMA_MANAGER.get_resource_schema(REGION, resource_type).schema)
    except Exception:  # noqa: BLE001 - cfn-lint raises its own ResourceNotFoundError (and KeyError)
        return None


def known_type(resource_type: str) -> bool:
    """True for a type CloudFormation accepts in a template (custom resources included)."""
    if resource_type.startswith("Custom::") or resource_type == "AWS::CloudFormation::CustomResource":
        return True
    return schema(resource_type) is not None


def _paths(resource_type: str, key: str) -> list[tuple[str, ...]]:
    found = (schema(resource_type) or {}).get(key) or []
    return [tuple(p.split("/")[2:]) for p in found if p.startswith("/properties/")]


@functools.lru_cache(maxsize=1024)
def create_only(resource_type: str) -> tuple[tuple[str, ...], ...]:
    """Property paths (e.g. ('QueueName',), ('KeySchema',)) whose change requires replacement."""
    return tuple(_paths(resource_type, "createOnlyProperties"))


@functools.lru_cache(maxsize=1024)
def properties(resource_type: str) -> frozenset[str] | None:
    """Top-level property names a template may set; None when the type is not described."""
    found = schema(resource_type)
    if found is None:
        return None
    read_only = {p[0] for p in _paths(resource_type, "readOnlyProperties") if len(p) == 1}
    return frozenset(set(found.get("properties") or {}) - read_only)


@functools.lru_cache(maxsize=1024)
def attributes(resource_type: str) -> frozenset[str]:
    """The names Fn::GetAtt accepts for the type (its read-only properties, dotted for nested ones)."""
    from cfnlint.schema import PROVIDER_SCHEMA_MANAGER

    try:
        return frozenset(PROVIDER_SCHEMA_MANAGER.get_type_getatts(resource_type, REGION))
    except Exception:  # noqa: BLE001 - an unknown type has none
        return frozenset()


def tag_property(resource_type: str) -> str | None:
    """The property holding the resource's tags, when the type is taggable."""
    tagging = (schema(resource_type) or {}).get("tagging") or {}
    if not tagging.get("taggable", False):
        return None
    path = tagging.get("tagProperty", "/properties/Tags")
    return str(path).split("/")[-1]



@functools.lru_cache(maxsize=1024)
def required(resource_type: str) -> tuple[str, ...]:
    """Top-level properties the type's schema requires (in the schema's order)."""
    return tuple(str(n) for n in (schema(resource_type) or {}).get("required") or [])


@functools.lru_cache(maxsize=1024)
def write_only(resource_type: str) -> tuple[tuple[str, ...], ...]:
    """Property paths the provider schema marks write-only (a password, a template body): never read back,
    so never compared by drift detection ('*' stands for any item of a list)."""
    return tuple(_paths(resource_type, "writeOnlyProperties"))

