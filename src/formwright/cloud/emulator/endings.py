"""The endings of a stack operation: deleting a resource (read back after), rolling an execution back,
and deleting a stack in reverse dependency order. Follows "Stack failure options", "DeletionPolicy
attribute" and the stack status codes (ROLLBACK_FAILED, DELETE_FAILED) of the AWS CloudFormation User
Guide."""

from __future__ import annotations

from typing import Any

from formwright.cloud.emulator import resources as res
from formwright.cloud.emulator.read_back import still_there
from formwright.cloud.emulator.stack_record import event, order, record


class Endings:
    """Resource deletion and rollback of an `execute.Execution` (whose state they use)."""

    stack: Any
    rmap: Any
    record: Any
    account: str
    region: str
    failed_deletes: dict[str, tuple[Any, dict[str, Any]]]
    new: Any
    creating: bool
    importing: bool
    change_set: Any
    before: tuple[Any, ...]
    done: list[tuple[str, str, Any]]
    parsed_before: dict[str, Any]
    props_before: dict[str, dict[str, Any]]

    def _delete_one(self, logical: str, obj: Any, entry: dict[str, Any], props: dict[str, Any], *,
                    keep_record: bool = False) -> None:
        kind = str(entry.get("Type"))
        if obj is None:
            return
        physical = res.physical_id(obj)
        if entry.get("DeletionPolicy") in ("Retain", "RetainExceptOnCreate"):
            event(self.stack, logical, physical, kind, "DELETE_SKIPPED")
        else:
            event(self.stack, logical, physical, kind, "DELETE_IN_PROGRESS")
            try:
                res.delete(obj, kind, props, self.account, self.region)
                if still_there(kind, obj, self.account, self.region):
                    raise res.ResourceFailure(logical, f"the local cloud's delete of {kind} {physical} left "
                                                       "it in place (read back after delete)")
                event(self.stack, logical, physical, kind, "DELETE_COMPLETE")
            except res.ResourceFailure as failure:
                event(self.stack, logical, physical, kind, "DELETE_FAILED", failure.reason)
                self.record.left[logical] = kind
                self.failed_deletes[logical] = (obj, props)
                return
        self.record.left.pop(logical, None)
        if not keep_record or self.rmap._parsed_resources.get(logical) is obj:
            self.rmap._parsed_resources.pop(logical, None)
            self.record.props.pop(logical, None)

    def _roll_back(self, failure: Exception) -> None:
        stack = self.stack
        kind_of = {k: str(v["Type"]) for k, v in self.new.resources.items()}
        if isinstance(failure, res.ResourceFailure):
            updating = not self.creating and failure.logical in self.parsed_before
            phase = "UPDATE_FAILED" if updating else "CREATE_FAILED"
            event(stack, failure.logical, "", kind_of.get(failure.logical, ""), phase, failure.reason)
            verb = "create" if phase == "CREATE_FAILED" else "update"
            reason = (f"The following resource(s) failed to {verb}: [{failure.logical}]. "
                      "Rollback requested by user.")
        else:
            reason = str(failure)
        rolling = "IMPORT_ROLLBACK_IN_PROGRESS" if self.importing else \
            "ROLLBACK_IN_PROGRESS" if self.creating else "UPDATE_ROLLBACK_IN_PROGRESS"
        stack.status = rolling
        event(stack, stack.name, stack.stack_id, "AWS::CloudFormation::Stack", rolling, reason)
        for action, logical, old in reversed(self.done):
            current = self.rmap._parsed_resources.get(logical)
            kind = kind_of.get(logical, "")
            applied = self.record.props.get(logical, {})
            if action in ("create", "replace"):
                self._delete_one(logical, current, {"Type": kind}, applied)
            if action in ("replace", "update"):
                self.rmap._parsed_resources[logical] = old
                self.record.props[logical] = self.props_before.get(logical, {})
            if action == "update":
                self._undo_update(logical, kind, old, applied)
        (stack.template, stack.template_dict, stack.parameters, self.rmap._template,
         self.rmap._resource_json_map, self.rmap.input_parameters, self.rmap.resolved_parameters,
         self.record.desired, self.record.outputs, stack.tags) = self.before
        self.rmap._parsed_resources = dict(self.parsed_before)
        self.record.props = self.props_before
        for logical, (obj, props) in self.failed_deletes.items():  # still there: still the stack's
            self.rmap._parsed_resources[logical] = obj
            kept = {"Type": kind_of.get(logical, "")}
            self.rmap._resource_json_map = {**self.rmap._resource_json_map, logical: kept}
            self.record.props[logical] = props
        if self.failed_deletes:  # "ROLLBACK_FAILED" / "UPDATE_ROLLBACK_FAILED" (Stack status codes)
            stack.status = "ROLLBACK_FAILED" if self.creating else "UPDATE_ROLLBACK_FAILED"
        elif self.importing:
            stack.status = "IMPORT_ROLLBACK_COMPLETE"
        elif self.creating:
            stack.status = "ROLLBACK_COMPLETE"
        else:
            stack.status = "UPDATE_ROLLBACK_COMPLETE_CLEANUP_IN_PROGRESS"
            event(stack, stack.name, stack.stack_id, "AWS::CloudFormation::Stack", stack.status)
            stack.status = "UPDATE_ROLLBACK_COMPLETE"
        event(stack, stack.name, stack.stack_id, "AWS::CloudFormation::Stack", stack.status)
        self.change_set.execution_status = "EXECUTE_FAILED"

    def _undo_update(self, logical: str, kind: str, old: Any, applied: dict[str, Any]) -> None:
        props, before = self.props_before.get(logical, {}), applied
        event(self.stack, logical, res.physical_id(old), kind, "UPDATE_IN_PROGRESS")
        try:
            names = set(props) | set(before)
            res.update(logical, kind, old, props, names, self.account, self.region, before)
            event(self.stack, logical, res.physical_id(old), kind, "UPDATE_COMPLETE")
        except res.ResourceFailure as failure:
            event(self.stack, logical, res.physical_id(old), kind, "UPDATE_FAILED", failure.reason)


def delete_stack(backend: Any, stack: Any) -> bool:
    """Delete a stack's resources in reverse dependency order with events; False when one failed."""
    rec = record(stack)
    desired = rec.desired
    entries = desired.resources if desired else {
        k: v for k, v in (stack.template_dict.get("Resources") or {}).items() if isinstance(v, dict)}
    entries = {**{k: {"Type": kind} for k, kind in rec.left.items()}, **entries}
    run = Endings.__new__(Endings)
    run.stack, run.rmap, run.record, run.failed_deletes = stack, stack.resource_map, rec, {}
    run.account, run.region = stack.account_id, stack.region_name
    stack.status = "DELETE_IN_PROGRESS"
    event(stack, stack.name, stack.stack_id, "AWS::CloudFormation::Stack", stack.status, "User Initiated")
    failed = False
    for logical in reversed(order(entries)):
        obj = stack.resource_map._parsed_resources.get(logical)
        if obj is None or isinstance(obj, str | dict | list):
            continue
        before = len(stack.events)
        run._delete_one(logical, obj, entries[logical], rec.props.get(logical, {}))
        failed = failed or any(e.resource_status == "DELETE_FAILED" for e in stack.events[before:])
    stack.status = "DELETE_FAILED" if failed else "DELETE_COMPLETE"
    event(stack, stack.name, stack.stack_id, "AWS::CloudFormation::Stack", stack.status)
    return not failed
