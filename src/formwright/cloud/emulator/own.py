"""The local cloud's own CloudFormation models, for types moto's CloudFormation parsing lacks or gets wrong.

Each model is a class registered for one resource type in a `types_*` module. It creates, updates,
reads back and deletes its resource through moto's service backend, so the service's own API (boto3's
`get_*` / `describe_*` calls) answers what the template made. A model keeps only plain values (ids,
names), never a backend object, and looks its resource up again each time: a resource deleted or changed
outside the stack shows as such.

A model says which properties it changes in place (`in_place`); a change of any other property that
the provider schema does not mark create-only fails the change set by name, never a quiet no-op.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable
from typing import Any, ClassVar

from moto.core.exceptions import ServiceException

# the modules holding the models, imported when the registry is first read
MODULES = ("types_apigateway", "types_apigatewayv2", "types_policies", "types_monitoring",
           "types_identity", "types_lambda", "types_network",
           "types_databases", "types_integration", "types_messaging",
           "types_cloudfront", "types_stacksets", "types_iam", "types_apigateway_account")

_MODELS: dict[str, type[Model]] = {}
_loaded = False


class Invalid(ServiceException):
    """A request the service itself would refuse (a missing or malformed property)."""

    code = "ValidationException"


class Missing(ServiceException):
    """A resource the model needs (its parent, its target) that does not exist."""

    code = "NotFoundException"


class Model:
    """One resource of a type the local cloud models itself (the moto model protocol the emulator uses:
    `logical_resource_id`, `physical_resource_id`, `cf_resource_type`, `get_cfn_attribute`)."""

    kind: ClassVar[str] = ""
    in_place: ClassVar[frozenset[str]] = frozenset()  # properties updated in place, tags aside
    taggable: ClassVar[bool] = False  # True when live_tags / write_tags reach the service's tag store
    ref_attributes: ClassVar[frozenset[str]] = frozenset()  # Fn::GetAtt names whose value is the Ref value

    def __init__(self, logical: str, account: str, region: str) -> None:
        self.logical_resource_id = logical
        self.cf_resource_type = self.kind
        self.account_id, self.region_name = account, region
        self.physical_resource_id = ""

    # ---- the lifecycle each model implements ---------------------------------------------------
    def create(self, props: dict[str, Any], stack_name: str) -> None:
        """Make the resource from its properties and set `physical_resource_id` (the Ref value)."""
        raise NotImplementedError

    def update(self, props: dict[str, Any], names: set[str]) -> None:
        """Apply the in-place properties among `names` (the changed ones) as `props` sets them."""
        raise NotImplementedError

    def remove(self) -> None:
        """Delete the resource from its service; a resource already gone is not an error."""
        raise NotImplementedError

    def read(self) -> dict[str, Any] | None:
        """The live resource in CloudFormation's property names, None when it is gone (drift)."""
        raise NotImplementedError

    def comparable(self, expected: dict[str, Any]) -> dict[str, Any]:
        """The part of the applied properties `read` can tell (drift compares only that; the contract table
        of docs/local-cloud.md lists it): all of them unless a model narrows it."""
        return expected

    def attribute(self, name: str) -> Any:
        """An Fn::GetAtt value; raises KeyError for one the model does not know."""
        if name in self.ref_attributes:
            return self.physical_resource_id
        raise KeyError(name)

    def live_tags(self) -> dict[str, str]:
        """The resource's tags as its service lists them (taggable models)."""
        raise NotImplementedError

    def write_tags(self, tags: dict[str, str]) -> None:
        """Replace the resource's tags in its service's store (taggable models)."""
        raise NotImplementedError

    # ---- the moto protocol -------------------------------------------------------------------
    def delete(self, account: str | None = None, region: str | None = None) -> None:
        """moto's name for removing a resource."""
        self.remove()

    @classmethod
    def has_cfn_attr(cls, name: str) -> bool:
        """Any attribute is asked of `attribute` (which raises for one it does not know)."""
        return True

    def get_cfn_attribute(self, name: str) -> Any:
        """moto's name for an attribute."""
        return self.attribute(name)


def register(cls: type[Model]) -> type[Model]:
    """Class decorator: the model of `cls.kind`."""
    _MODELS[cls.kind] = cls
    return cls


def models() -> dict[str, type[Model]]:
    """Every model by type."""
    global _loaded
    if not _loaded:
        _loaded = True
        for name in MODULES:
            importlib.import_module(f"formwright.cloud.emulator.{name}")
    return _MODELS


def model(kind: str) -> type[Model] | None:
    """The local cloud's own model of a type, or None."""
    return models().get(kind)


def create(kind: str, logical: str, props: dict[str, Any], stack_name: str, account: str,
           region: str) -> Model:
    """Make one resource of a modelled type."""
    obj = models()[kind](logical, account, region)
    obj.create(props, stack_name)
    return obj


def can_update(kind: str, names: set[str], tag_property: str | None) -> bool:
    """True when the model changes all of `names` in place."""
    cls = models()[kind]
    return not names - cls.in_place - ({tag_property} if cls.taggable else set())


def pairs(tags: Any) -> dict[str, str]:
    """A Key/Value list or a map of tags as a map."""
    if isinstance(tags, dict):
        return {str(k): str(v) for k, v in tags.items()}
    return {str(t["Key"]): str(t["Value"]) for t in tags or []}


def document(value: Any) -> Any:
    """A JSON policy document given as text or an object, as an object."""
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def generated_name(kind: str, stack_name: str, logical: str) -> str:
    """CloudFormation's `<stack>-<logical>-<suffix>` name for a resource the template leaves unnamed."""
    from moto.cloudformation.parsing import generate_resource_name

    return str(generate_resource_name(kind, stack_name, logical))


def apply_fields(target: Any, props: dict[str, Any], names: set[str], fields: dict[str, str]) -> None:
    """Set the service object's attributes (`fields`: property -> attribute) of the properties in `names`
    as `props` has them (None for a property the template dropped)."""
    for name in names & set(fields):
        setattr(target, fields[name], props.get(name))


def read_fields(target: Any, fields: dict[str, str]) -> dict[str, Any]:
    """The service object's attributes in the template's property names."""
    return {name: getattr(target, attribute, None) for name, attribute in fields.items()}


def _recased(value: Any, first: Callable[[str], str]) -> Any:
    if isinstance(value, dict):
        return {first(k[:1]) + k[1:]: _recased(v, first) for k, v in value.items()}
    if isinstance(value, list):
        return [_recased(v, first) for v in value]
    return value


def camel(value: Any) -> Any:
    """A CloudFormation structure (`AllowOrigins`) in the service API's spelling (`allowOrigins`)."""
    return _recased(value, str.lower)


def pascal(value: Any) -> Any:
    """A service API's structure (`allowOrigins`) in CloudFormation's spelling (`AllowOrigins`)."""
    return _recased(value, str.upper)


def backend(service: str, account: str, region: str) -> Any:
    """moto's backend of a service (`moto.<service>.models.<service>_backends`) for an account and region."""
    module = importlib.import_module(f"moto.{service}.models")
    return getattr(module, f"{service}_backends")[account][region]


def patch_moto() -> None:
    """Run the `patch_moto()` of each model module that corrects one of moto's own CloudFormation models."""
    for name in MODULES:
        module = importlib.import_module(f"formwright.cloud.emulator.{name}")
        if hasattr(module, "patch_moto"):
            module.patch_moto()


def definition(props: dict[str, Any], account: str, region: str) -> dict[str, Any] | None:
    """The OpenAPI document of an API's `Body` (an object, or JSON/YAML text) or `BodyS3Location` (read from
    the local cloud's S3, as API Gateway reads it), or None; one it cannot parse is the service's refusal."""
    import yaml

    body = props.get("Body")
    location = props.get("BodyS3Location")
    if body is None and location:
        from moto.utilities.utils import get_partition

        s3 = importlib.import_module("moto.s3.models").s3_backends[account][get_partition(region)]
        found = s3.get_object(location["Bucket"], location["Key"], location.get("Version"))
        if found is None:
            raise Missing(f"The API definition s3://{location['Bucket']}/{location['Key']} does not exist")
        data = found.value
        try:
            body = data.decode()
        except UnicodeDecodeError:
            raise Invalid("Errors found during import: Unable to parse API definition: not text") from None
    if isinstance(body, str):
        try:
            body = yaml.safe_load(body)
        except yaml.YAMLError as err:
            raise Invalid(f"Errors found during import: Unable to parse API definition: {err}") from None
    if body is not None and not isinstance(body, dict):
        raise Invalid("Errors found during import: Unable to parse API definition")
    return body

