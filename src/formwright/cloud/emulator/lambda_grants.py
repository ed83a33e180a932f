"""AWS::Lambda::Permission and AWS::Lambda::Version, made by the local cloud itself (issue 30, item 0).

moto's models of both keep nothing to find them again: a permission's Ref was the Python object's text and
its delete left the statement in the function's policy; a version's Ref was its logical id and it was never
deleted. Here each is made through the Lambda backend as AddPermission / PublishVersion make it, under the
identifiers CloudFormation gives, read back with GetPolicy / GetFunction (Qualifier) after create, in drift
detection and after delete, and deleted with RemovePermission / DeleteFunction (Qualifier).
"""

from __future__ import annotations

import json
import random
import string
from typing import Any

PERMISSION = "AWS::Lambda::Permission"
VERSION = "AWS::Lambda::Version"
STATEMENT_ID_LIMIT = 100  # AddPermission's StatementId: at most 100 characters


def _backend(account: str, region: str) -> Any:
    from moto.awslambda.utils import get_backend

    return get_backend(account, region)


def statement_id(stack: str, logical: str) -> str:
    """The statement id CloudFormation gives a permission: `<stack>-<logical>-<12 random characters>`, the
    prefix cut so that the whole fits AddPermission's 100 characters."""
    suffix = "".join(random.choices(string.ascii_uppercase + string.digits, k=12))  # noqa: S311 - a name
    return f"{stack}-{logical}"[:STATEMENT_ID_LIMIT - len(suffix) - 1] + "-" + suffix


class Permission:
    """One statement of a function's resource policy. Its GetAtt Id is the statement id; its physical id
    (Ref) joins the provider schema's primary identifier, FunctionName and Id, with "|" as CloudFormation
    joins a composite identifier: `<function ARN>|<statement id>`."""

    cf_resource_type = PERMISSION

    def __init__(self, logical: str, function_arn: str, sid: str) -> None:
        self.logical_resource_id = logical
        self.function_arn, self.sid = function_arn, sid
        self.physical_resource_id = f"{function_arn}|{sid}"

    @classmethod
    def has_cfn_attr(cls, name: str) -> bool:
        """Its one attribute, Id."""
        return name == "Id"

    def get_cfn_attribute(self, name: str) -> str:
        """Fn::GetAtt Id: the statement id."""
        return self.sid

    def delete(self, account_id: str, region_name: str) -> None:
        """RemovePermission; a statement already gone with its function is deleted."""
        if read_permission(self, account_id, region_name) is not None:
            _backend(account_id, region_name).remove_permission(self.function_arn, self.sid)


def create_permission(logical: str, props: dict[str, Any], account: str, region: str) -> Permission:
    """AddPermission with the template's properties under the statement id `props["Id"]`."""
    backend = _backend(account, region)
    function = backend.get_function(str(props["FunctionName"]))
    given = {k: props[k] for k in ("Action", "Principal", "SourceArn", "SourceAccount", "PrincipalOrgID",
                                   "EventSourceToken", "FunctionUrlAuthType") if props.get(k) is not None}
    qualifier = function.version if function.version != "$LATEST" else None
    statement = json.dumps({**given, "StatementId": props["Id"]})
    backend.add_permission(function.function_name, qualifier, statement)
    return Permission(logical, function.function_arn, str(props["Id"]))


def read_permission(obj: Any, account: str, region: str) -> dict[str, Any] | None:
    """GetPolicy: the statement whose Sid is the permission's id, in the template's property names (None:
    the function or the statement is gone). FunctionName is not compared (a name or an ARN in the
    template); EventSourceToken is not in the policy GetPolicy answers."""
    try:
        statements = _backend(account, region).get_function(obj.function_arn).policy.statements
    except Exception:  # noqa: BLE001 - moto raises its not-found error: the function is gone
        return None
    found = next((s for s in statements if s.get("Sid") == obj.sid), None)
    if found is None:
        return None
    condition = found.get("Condition") or {}
    principal = found.get("Principal")
    if isinstance(principal, dict) and len(principal) == 1:
        principal = next(iter(principal.values()))
    url_auth = found.get("FunctionUrlAuthType") or (condition.get("StringEquals") or {}).get(
        "lambda:FunctionUrlAuthType")
    return {"Id": obj.sid, "Action": found.get("Action"), "Principal": principal,
            "SourceArn": (condition.get("ArnLike") or {}).get("AWS:SourceArn"),
            "SourceAccount": (condition.get("StringEquals") or {}).get("AWS:SourceAccount"),
            "PrincipalOrgID": (condition.get("StringEquals") or {}).get("aws:PrincipalOrgID"),
            "FunctionUrlAuthType": url_auth}


class Version:
    """A published version of a function. Its physical id (Ref) is the version's ARN; GetAtt Version is
    its number and FunctionArn its ARN ("Return values")."""

    cf_resource_type = VERSION

    def __init__(self, logical: str, function_name: str, version: str, arn: str) -> None:
        self.logical_resource_id = logical
        self.function_name, self.version = function_name, version
        self.physical_resource_id = self.function_arn = arn

    @classmethod
    def has_cfn_attr(cls, name: str) -> bool:
        """Version and FunctionArn."""
        return name in ("Version", "FunctionArn")

    def get_cfn_attribute(self, name: str) -> str:
        """Fn::GetAtt Version (the number) or FunctionArn (the version's ARN)."""
        return self.version if name == "Version" else self.function_arn

    def delete(self, account_id: str, region_name: str) -> None:
        """DeleteFunction with the version as Qualifier; a version already gone with its function is
        deleted."""
        if read_version(self, account_id, region_name) is not None:
            _backend(account_id, region_name).delete_function(self.function_name, self.version)


def create_version(logical: str, props: dict[str, Any], account: str, region: str) -> Version:
    """PublishVersion of the function with the template's Description."""
    published = _backend(account, region).publish_version(str(props["FunctionName"]),
                                                          str(props.get("Description") or ""))
    if published is None:
        raise ValueError(f"Function not found: {props['FunctionName']}")
    return Version(logical, published.function_name, str(published.version), published.function_arn)


def read_version(obj: Any, account: str, region: str) -> dict[str, Any] | None:
    """GetFunction with the version as Qualifier, in the template's property names (None: it is gone).
    moto keeps no provisioned concurrency, runtime policy or scaling setting: a template that sets one
    reads back without it, and the create fails naming it."""
    try:
        found = _backend(account, region).get_function(obj.function_name, obj.version)
    except Exception:  # noqa: BLE001 - moto raises its not-found error: the version is gone
        return None
    if found is None:
        return None
    return {"Description": found.description, "CodeSha256": found.code_sha_256,
            "ProvisionedConcurrencyConfig": None, "RuntimePolicy": None, "FunctionScalingConfig": None}


OWN_CREATE = {PERMISSION: create_permission, VERSION: create_version}
READERS = {PERMISSION: read_permission, VERSION: read_version}
