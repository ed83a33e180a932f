"""IAM inline policies of one role, user or group, and IAM groups, as CloudFormation makes them, through
moto's IAM backend (GetRolePolicy / GetUserPolicy / GetGroupPolicy and GetGroup answer what the stack made).
moto has no CloudFormation model of these types: AWS's samples (the compliant buckets' replication policy,
the StackSets log setup, IAM_Users_Groups_and_Policies) were refused by name.

AWS::IAM::RolePolicy / UserPolicy / GroupPolicy (AWS CloudFormation Template Reference): PolicyName and the
entity's name are create-only and the provider schema's primary identifier; the physical id joins them with
"|" as CloudFormation joins a composite identifier. PolicyDocument is updated in place (Put...Policy).
AWS::IAM::Group: `Ref` the group's name, `Arn` its ARN; GroupName create-only, Path, ManagedPolicyArns and
Policies in place.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar

from formwright.cloud.emulator.own import Model, generated_name, register


def _iam(account: str, region: str) -> Any:
    from moto.iam.models import iam_backends
    from moto.utilities.utils import get_partition

    return iam_backends[account][get_partition(region)]


def _text(document: Any) -> str:
    return document if isinstance(document, str) else json.dumps(document)


class _InlinePolicy(Model):
    """One inline policy of one IAM entity (`entity`: role, user or group)."""

    entity: ClassVar[str]
    in_place = frozenset({"PolicyDocument"})

    def _names(self) -> tuple[str, str]:
        policy, entity = self.physical_resource_id.split("|", 1)
        return policy, entity

    def create(self, props: dict[str, Any], stack_name: str) -> None:
        name_key = f"{self.entity.capitalize()}Name"
        self.physical_resource_id = f"{props['PolicyName']}|{props[name_key]}"
        self.update(props, {"PolicyDocument"})

    def update(self, props: dict[str, Any], names: set[str]) -> None:
        policy, entity = self._names()
        put = getattr(_iam(self.account_id, self.region_name), f"put_{self.entity}_policy")
        put(entity, policy, _text(props["PolicyDocument"]))

    def remove(self) -> None:
        if self.read() is not None:
            policy, entity = self._names()
            getattr(_iam(self.account_id, self.region_name), f"delete_{self.entity}_policy")(entity, policy)

    def read(self) -> dict[str, Any] | None:
        from formwright.cloud.emulator.drift_readers import policy_document

        policy, entity = self._names()
        holders = getattr(_iam(self.account_id, self.region_name), f"{self.entity}s")
        holder = next((h for h in holders.values() if h.name == entity), None)
        if holder is None or policy not in holder.policies:
            return None
        return {"PolicyName": policy, f"{self.entity.capitalize()}Name": entity,
                "PolicyDocument": policy_document(holder.policies[policy])}


@register
class RolePolicy(_InlinePolicy):
    """AWS::IAM::RolePolicy (PutRolePolicy, DeleteRolePolicy)."""

    kind = "AWS::IAM::RolePolicy"
    entity = "role"


@register
class UserPolicy(_InlinePolicy):
    """AWS::IAM::UserPolicy (PutUserPolicy, DeleteUserPolicy)."""

    kind = "AWS::IAM::UserPolicy"
    entity = "user"


@register
class GroupPolicy(_InlinePolicy):
    """AWS::IAM::GroupPolicy (PutGroupPolicy, DeleteGroupPolicy)."""

    kind = "AWS::IAM::GroupPolicy"
    entity = "group"


@register
class Group(Model):
    """AWS::IAM::Group (CreateGroup, AttachGroupPolicy, PutGroupPolicy, DeleteGroup)."""

    kind = "AWS::IAM::Group"
    in_place = frozenset({"Path", "ManagedPolicyArns", "Policies"})

    def _group(self) -> Any:
        return _iam(self.account_id, self.region_name).groups.get(self.physical_resource_id)

    def create(self, props: dict[str, Any], stack_name: str) -> None:
        name = props.get("GroupName") or generated_name(self.kind, stack_name, self.logical_resource_id)
        _iam(self.account_id, self.region_name).create_group(name, props.get("Path") or "/")
        self.physical_resource_id = name
        self.update(props, {"ManagedPolicyArns", "Policies"})

    def update(self, props: dict[str, Any], names: set[str]) -> None:
        iam, group = _iam(self.account_id, self.region_name), self._group()
        if "Path" in names:
            group.path = props.get("Path") or "/"
        if "ManagedPolicyArns" in names:
            arns = set(props.get("ManagedPolicyArns") or [])
            for arn in set(group.managed_policies) - arns:
                iam.detach_group_policy(arn, group.name)
            for arn in arns - set(group.managed_policies):
                from formwright.cloud.emulator.completions import aws_managed

                aws_managed(iam, arn)
                iam.attach_group_policy(arn, group.name)
        if "Policies" in names:
            wanted = {p["PolicyName"]: p["PolicyDocument"] for p in props.get("Policies") or []}
            # only the group's own Policies: an AWS::IAM::GroupPolicy of the group is another resource's
            for name in set(getattr(self, "inline", ())) - set(wanted):
                iam.delete_group_policy(group.name, name)
            self.inline = sorted(wanted)
            for name, document in wanted.items():
                iam.put_group_policy(group.name, name, _text(document))

    def remove(self) -> None:
        group = self._group()
        if group is None:
            return
        self.update({}, {"ManagedPolicyArns", "Policies"})  # DeleteGroup refuses a group with policies
        _iam(self.account_id, self.region_name).delete_group(group.name)

    def read(self) -> dict[str, Any] | None:
        from formwright.cloud.emulator.drift_readers import policy_document

        group = self._group()
        if group is None:
            return None
        return {"GroupName": group.name, "Path": group.path,
                "ManagedPolicyArns": sorted(group.managed_policies),
                "Policies": [{"PolicyName": n, "PolicyDocument": policy_document(d)}
                             for n, d in group.policies.items() if n in getattr(self, "inline", ())]}

    def attribute(self, name: str) -> Any:
        return {"Arn": self._group().arn}[name]


@register
class UserToGroupAddition(Model):
    """AWS::IAM::UserToGroupAddition (AddUserToGroup, RemoveUserFromGroup): `Ref` a generated name."""

    kind = "AWS::IAM::UserToGroupAddition"
    in_place = frozenset({"Users"})

    def create(self, props: dict[str, Any], stack_name: str) -> None:
        self.physical_resource_id = generated_name(self.kind, stack_name, self.logical_resource_id)
        self.group_name = str(props["GroupName"])
        self.users: list[str] = []
        self.update(props, {"Users"})

    def update(self, props: dict[str, Any], names: set[str]) -> None:
        iam, wanted = _iam(self.account_id, self.region_name), list(props.get("Users") or [])
        for user in set(self.users) - set(wanted):
            iam.remove_user_from_group(self.group_name, user)
        for user in [u for u in wanted if u not in self.users]:
            iam.add_user_to_group(self.group_name, user)
        self.users = wanted

    def remove(self) -> None:
        if self.read() is not None:
            self.update({}, {"Users"})

    def read(self) -> dict[str, Any] | None:
        group = _iam(self.account_id, self.region_name).groups.get(self.group_name)
        if group is None:
            return None
        members = [u for u in self.users if u in {m.name for m in group.users}]
        # the addition is its users' membership: none of them left in the group, it is gone
        return {"GroupName": group.name, "Users": members} if members else None
