"""Change sets for nested stacks: CreateChangeSet with IncludeNestedStacks.

As CloudFormation does ("Change sets for nested stacks", User Guide; CreateChangeSet IncludeNestedStacks):
for each nested stack the parent's change set modifies, a change set of the nested stack is made from its
new TemplateURL and parameters, recursively; its id is the parent change's `ChangeSetId`, and it names its
`ParentChangeSetId` and `RootChangeSetId`. A nested change set that fails fails the parent with its reason;
one without changes is dropped. Deleting the parent's change set deletes its nested ones. Executing the
parent updates each nested stack as before (a nested stack is updated as an UpdateStack of the child).
"""

from __future__ import annotations

from typing import Any

NESTED = "AWS::CloudFormation::Stack"


def make_nested(backend: Any, change_set: Any, desired: Any, no_changes: str) -> None:
    """Make the nested change sets of `change_set` (whose computed changes are set); fail it when one
    fails."""
    from moto.cloudformation.utils import get_stack_from_s3_url
    from moto.utilities.utils import get_partition

    change_set.include_nested_stacks = True
    change_set.fw_nested = []
    parsed = change_set.stack.resource_map._parsed_resources
    for change in change_set.changes:
        if change.resource_type != NESTED or change.action != "Modify":
            continue
        child = parsed.get(change.logical_resource_id)
        props = (desired.resources.get(change.logical_resource_id) or {}).get("Properties") or {}
        if child is None or not hasattr(child, "stack_id") or not isinstance(props.get("TemplateURL"), str):
            continue
        body = get_stack_from_s3_url(props["TemplateURL"], account_id=backend.account_id,
                                     partition=get_partition(backend.region_name))
        parameters = {k: str(v) for k, v in (child.parameters or {}).items()}
        parameters.update({k: str(v).lower() if isinstance(v, bool) else str(v)
                           for k, v in (props.get("Parameters") or {}).items()
                           if isinstance(v, str | int | float | bool)})
        name = f"{change_set.change_set_name}-{change.logical_resource_id}"[:128]
        child_id, _ = backend.create_change_set(child.name, name, body, parameters, None, "UPDATE", None,
                                                dict(child.tags or {}), None)
        nested = backend.change_sets[child_id]
        if nested.status == "FAILED":
            reason = nested.status_reason
            drop(backend, child_id)
            if reason == no_changes:
                continue
            change_set.status, change_set.execution_status = "FAILED", "UNAVAILABLE"
            change_set.status_reason = f"Nested change set {child_id} was not successfully created: {reason}"
            return
        nested.parent_change_set_id = change_set.change_set_id
        root = getattr(change_set, "root_change_set_id", None)
        nested.root_change_set_id = root or change_set.change_set_id
        change.change_set_id = child_id
        change_set.fw_nested.append(child_id)


def drop(backend: Any, change_set_id: str) -> None:
    """Delete a change set and its nested ones."""
    change_set = backend.change_sets.pop(change_set_id, None)
    for child in getattr(change_set, "fw_nested", None) or []:
        drop(backend, child)


def install(models: Any) -> None:
    """DeleteChangeSet takes the nested change sets with it."""
    original = models.CloudFormationBackend.delete_change_set

    def delete_change_set(self: Any, change_set_name: str) -> None:
        change_set = self.change_sets.get(change_set_name) or next(
            (c for c in self.change_sets.values() if c.change_set_name == change_set_name), None)
        for child in getattr(change_set, "fw_nested", None) or []:
            drop(self, child)
        original(self, change_set_name)

    models.CloudFormationBackend.delete_change_set = delete_change_set
