"""Stack sets as CloudFormation makes them: CloudFormation StackSet with its stack instances, through moto's
CloudFormation backend (DescribeStackSet and ListStackInstances answer what the stack made; each instance is a
stack of its account and region, run by the local cloud's emulator).

AWS::CloudFormation::StackSet (AWS CloudFormation Template Reference): `Ref` and `StackSetId` the stack set's
id (`{name}:{uuid}`); StackSetName and PermissionModel create-only; the template, parameters and instances
change in place (UpdateStackSet, CreateStackInstances, DeleteStackInstances).
"""

from __future__ import annotations

import json
from typing import Any

from formwright.cloud.emulator.own import Invalid, Model, backend, register


def _targets(groups: list[dict[str, Any]] | None) -> set[tuple[str, str]]:
    """(account, region) of every instance the StackInstancesGroup lists."""
    return {
        (str(account), str(region))
        for group in groups or []
        for account in (group.get("DeploymentTargets") or {}).get("Accounts") or []
        for region in group.get("Regions") or []
    }


def _template(props: dict[str, Any]) -> str:
    body = props.get("TemplateBody")
    if body is None:
        raise Invalid("TemplateBody is required (the local cloud does not fetch TemplateURL for a stack set)")
    return body if isinstance(body, str) else json.dumps(body)


def _parameters(props: dict[str, Any]) -> list[dict[str, str]]:
    return [
        {"ParameterKey": p["ParameterKey"], "ParameterValue": str(p["ParameterValue"])}
        for p in props.get("Parameters") or []
    ]


@register
class StackSet(Model):
    """AWS::CloudFormation::StackSet (SELF_MANAGED: instances by account and region)."""

    kind = "AWS::CloudFormation::StackSet"
    in_place = frozenset(
        {
            "TemplateBody",
            "Parameters",
            "Description",
            "Capabilities",
            "StackInstancesGroup",
            "AdministrationRoleARN",
            "ExecutionRoleName",
            "OperationPreferences",
            "ManagedExecution",
        }
    )

    def _cfn(self) -> Any:
        return backend("cloudformation", self.account_id, self.region_name)

    def create(self, props: dict[str, Any], stack_name: str) -> None:
        if (props.get("PermissionModel") or "SELF_MANAGED") != "SELF_MANAGED":
            raise Invalid(
                "The local cloud has no AWS Organizations accounts to deploy a SERVICE_MANAGED stack set to"
            )
        self.name = str(props["StackSetName"])
        made = self._cfn().create_stack_set(
            name=self.name,
            template=_template(props),
            parameters={p["ParameterKey"]: p["ParameterValue"] for p in _parameters(props)},
            tags={},
            permission_model="SELF_MANAGED",
            admin_role=props.get("AdministrationRoleARN"),
            exec_role=props.get("ExecutionRoleName"),
            description=props.get("Description"),
        )
        self.physical_resource_id = made.id
        self._instances(props, set())

    def _instances(self, props: dict[str, Any], current: set[tuple[str, str]]) -> None:
        """Create the instances the template adds, delete the ones it drops."""
        wanted = _targets(props.get("StackInstancesGroup"))
        for account, region in sorted(wanted - current):
            self._cfn().create_stack_instances(self.name, [account], [region], _parameters(props), None)
        for account, region in sorted(current - wanted):
            self._cfn().delete_stack_instances(self.name, [account], [region])

    def _live(self) -> set[tuple[str, str]]:
        found = self._cfn().stacksets.get(self.physical_resource_id)
        return {(i.account_id, i.region_name) for i in found.stack_instances} if found is not None else set()

    def update(self, props: dict[str, Any], names: set[str]) -> None:
        stackset = self._cfn().stacksets[self.physical_resource_id]
        if names & {"TemplateBody", "Parameters"}:
            stackset.template = _template(props)
            stackset.parameters = {p["ParameterKey"]: p["ParameterValue"] for p in _parameters(props)}
            for instance in stackset.stack_instances:  # each instance's stack updated as UpdateStack does
                instance.template = stackset.template
                instance.stack.update(stackset.template, parameters=dict(stackset.parameters))
        if "Description" in names:
            stackset.description = props.get("Description")
        self._instances(props, self._live())

    def remove(self) -> None:
        stackset = self._cfn().stacksets.get(self.physical_resource_id)
        if stackset is None or stackset.status == "DELETED":
            return
        self._instances({}, self._live())
        self._cfn().delete_stack_set(self.physical_resource_id)

    def read(self) -> dict[str, Any] | None:
        stackset = self._cfn().stacksets.get(self.physical_resource_id)
        if stackset is None or stackset.status == "DELETED":
            return None
        return {
            "StackSetName": stackset.name,
            "Description": stackset.description,
            "PermissionModel": stackset.permission_model,
        }

    def attribute(self, name: str) -> Any:
        if name == "StackSetId":
            return self.physical_resource_id
        raise KeyError(name)


def patch_moto() -> None:
    """A stack instance's stack is named `StackSet-{stack set}-{uuid}`, as CloudFormation names it; moto's
    `StackSet:{name}` is no valid stack name, and breaks every name generated from it (a queue's)."""
    import uuid

    from moto.cloudformation.models import CloudFormationBackend

    create_stack = CloudFormationBackend.create_stack

    def create(self: Any, name: str, *args: Any, **kwargs: Any) -> Any:
        if name.startswith("StackSet:"):
            name = f"StackSet-{name.split(':', 1)[1]}-{uuid.uuid4()}"
        return create_stack(self, name, *args, **kwargs)

    CloudFormationBackend.create_stack = create  # type: ignore[method-assign]
