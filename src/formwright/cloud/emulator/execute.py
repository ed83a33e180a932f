"""Executing a change set as CloudFormation does, and deleting a stack.

Resources are created and updated in dependency order; a replacement creates the new resource first
and deletes the old one in the clean-up phase (unless `UpdateReplacePolicy: Retain`); a removal
honours `DeletionPolicy: Retain`. Outputs and exports are recomputed from the new state. On any
failure everything done is undone (snapshot restored, created resources deleted) and the stack ends
ROLLBACK_COMPLETE / UPDATE_ROLLBACK_COMPLETE, with per-resource events naming the failing logical id.
Follows "Update behaviors of stack resources", "Stack failure options" and "DeletionPolicy attribute"
in the AWS CloudFormation User Guide.
"""

from __future__ import annotations

import copy
import graphlib
from dataclasses import dataclass, field
from typing import Any

from formwright.cloud.emulator import resources as res
from formwright.cloud.emulator import schemas, signals
from formwright.cloud.emulator.changes import Desired
from formwright.cloud.emulator.context import request
from formwright.cloud.emulator.policy import denial
from formwright.cloud.emulator.resolve import (
    Resolver,
    TemplateError,
    as_text,
    dependencies,
    imported_exports,
)
from formwright.cloud.emulator.revert_drift import reverted
from formwright.cloud.instances.hooks import boot_instance, signal_url

REPLACING = "Requested update requires the creation of a new physical resource; hence creating one."


class StackFailure(Exception):
    """The stack-level reason an execution failed (an output or export rule)."""


@dataclass
class Record:
    """What the emulator keeps per stack beside moto's objects."""

    desired: Desired | None = None
    props: dict[str, dict[str, Any]] = field(default_factory=dict)  # live properties per logical id
    outputs: list[dict[str, Any]] = field(default_factory=list)
    stub: set[str] = field(default_factory=set)
    # resources a delete failed to remove (logical id -> Type): still the stack's, so a later DeleteStack
    # tries them again rather than ending DELETE_COMPLETE with them left behind
    left: dict[str, str] = field(default_factory=dict)


def record(stack: Any) -> Record:
    """The emulator's record of a moto stack (made on first use)."""
    found = getattr(stack, "fw_record", None)
    if found is None:
        found = Record()
        stack.fw_record = found
    return found


def event(stack: Any, logical: str, physical: str | None, kind: str, status: str,
          reason: str | None = None) -> None:
    """Add one stack event (DescribeStackEvents lists them newest first)."""
    from moto.cloudformation.models import Event

    made = Event(stack_id=stack.stack_id, stack_name=stack.name, logical_resource_id=logical,
                 physical_resource_id=physical or "", resource_type=kind, resource_status=status,
                 resource_status_reason=reason, resource_properties=None)
    made.client_request_token = getattr(request, "token", None)  # the operation's, as CloudFormation's
    stack.events.append(made)


def order(resources: dict[str, dict[str, Any]]) -> list[str]:
    """Logical ids in dependency order (DependsOn, Ref, Fn::GetAtt, Fn::Sub)."""
    graph = dependencies(resources)
    for logical, needs in graph.items():
        needs.discard(logical)
    return list(graph and graphlib.TopologicalSorter(graph).static_order())


class Execution:
    """One change set being executed on one moto stack."""

    def __init__(self, backend: Any, change_set: Any) -> None:
        self.backend = backend
        self.change_set = change_set
        self.stack = change_set.stack
        self.rmap = self.stack.resource_map
        self.record = record(self.stack)
        self.new: Desired = change_set.fw_desired
        self.creating = change_set.change_set_type == "CREATE"
        self.importing = change_set.change_set_type == "IMPORT"
        self.found: dict[str, Any] = getattr(change_set, "fw_found", None) or {}  # imported resources
        self.account, self.region = self.stack.account_id, self.stack.region_name
        self.parsed_before = dict(self.rmap._parsed_resources)
        self.props_before = copy.deepcopy(self.record.props)
        self.done: list[tuple[str, str, Any]] = []  # (action, logical, old object) for rollback
        self.cleanup: list[tuple[str, Any, dict[str, Any], dict[str, Any]]] = []
        self.unverified: set[str] = set()  # types said "not verified" in this operation's events
        self.failed_deletes: dict[str, tuple[Any, dict[str, Any]]] = {}  # logical -> (object, properties)
        self.begun = False  # `begin` done (the stack marked busy) before `run`

    # ---- helpers -----------------------------------------------------------------------------
    def _resolver(self) -> Resolver:
        pseudo = pseudo_parameters(self.stack)
        exports = {name: e.value for name, e in self.backend.exports.items()}
        return Resolver(self.new.template, self.new.parameters, pseudo, exports, lookup=self._lookup)

    def _lookup(self, logical: str, attribute: str | None) -> Any:
        obj = self.rmap._parsed_resources.get(logical)
        if obj is None:
            raise res.ResourceFailure(logical, f"resource {logical} does not exist")
        if attribute is None:
            return res.physical_id(obj)
        kind = str(self.new.resources.get(logical, {}).get("Type"))
        return res.attribute(logical, kind, obj, attribute, self.record.props.get(logical, {}))

    def _live_props(self, logical: str) -> dict[str, Any]:
        body = self.new.template["Resources"][logical]
        props = self._resolver().value(body.get("Properties") or {})
        return self._with_stack_tags(logical, str(body.get("Type")), props)

    def _with_stack_tags(self, logical: str, kind: str, props: dict[str, Any]) -> dict[str, Any]:
        """Stack tags join the resource's own (moto's models all take a Key/Value list)."""
        tag_property = schemas.tag_property(kind)
        own = props.get(tag_property) if tag_property else None
        tags = dict(self.change_set.fw_tags or {})
        if not tag_property or (not tags and not isinstance(own, dict)):
            return props
        pairs = dict(own) if isinstance(own, dict) else {t.get("Key"): t.get("Value") for t in own or []}
        props[tag_property] = [{"Key": k, "Value": v} for k, v in {**tags, **pairs}.items()]
        return props

    # ---- the run -----------------------------------------------------------------------------
    def begin(self) -> None:
        """Mark the stack busy with this operation (its first event)."""
        stack = self.stack
        status = "IMPORT" if self.importing else "CREATE" if self.creating else "UPDATE"
        stack.status = f"{status}_IN_PROGRESS"
        event(stack, stack.name, stack.stack_id, "AWS::CloudFormation::Stack", stack.status, "User Initiated")
        self.begun = True

    def run(self) -> None:
        """Execute; on failure roll back. The stack ends in a settled status either way."""
        stack = self.stack
        if not self.begun:
            self.begin()
        changes = {c.logical_resource_id: c for c in self.change_set.changes}
        logical = stack.name
        try:
            self._switch_template()
            for logical in order(self.new.resources):
                change = changes.get(logical)
                if change is None:
                    continue
                if change.action == "Add":
                    self._create(logical)
                elif change.action == "Modify":
                    self._modify(logical, change)
                elif change.action == "Import":
                    self._import(logical)
            for change in self.change_set.changes:
                if change.action == "Remove":
                    name = change.logical_resource_id
                    self._check_policy(name, change.resource_type, "Update:Delete")
                    old = self.record.desired.resources[name] if self.record.desired else {}
                    self.cleanup.append((name, self.parsed_before.get(name), old,
                                         self.props_before.get(name, {})))
            outputs = self._outputs()
            self._check_exports(outputs)
        except (res.ResourceFailure, StackFailure, TemplateError) as failure:
            self._roll_back(failure)
            return
        except Exception as err:  # noqa: BLE001 - an emulator bug must roll back, never leave the stack
            # *_IN_PROGRESS forever behind an HTTP 500
            reason = (f"The local cloud failed internally ({type(err).__name__}: {err}); this is a bug of "
                      "formwright's local cloud, not of the template")
            self._roll_back(res.ResourceFailure(logical, reason) if logical != stack.name
                            else StackFailure(reason))
            return
        self._commit(outputs)

    def _switch_template(self) -> None:
        stack, rmap = self.stack, self.rmap
        self.before = (stack.template, stack.template_dict, stack.parameters, rmap._template,
                       rmap._resource_json_map, rmap.input_parameters, rmap.resolved_parameters,
                       self.record.desired, copy.deepcopy(self.record.outputs), dict(stack.tags))
        rmap._template = self.new.template
        rmap._resource_json_map = {k: {"Type": v["Type"], **{a: v[a] for a in ("DeletionPolicy",) if a in v}}
                                   for k, v in self.new.resources.items()}
        rmap.input_parameters = dict(self.change_set.parameters or {})
        rmap.resolved_parameters = dict(self.new.echoed)

    def _create(self, logical: str) -> None:
        entry = self.new.resources[logical]
        kind = str(entry["Type"])
        stubbed = kind in self.change_set.fw_stub
        event(self.stack, logical, "", kind, "CREATE_IN_PROGRESS")
        props: dict[str, Any] = {}
        boot = getattr(self.change_set, "fw_boot", False)
        waits = boot and not stubbed and ("CreationPolicy" in entry or kind == signals.WAIT_CONDITION)
        if waits and "CreationPolicy" in entry:
            signals.expect(self.stack.stack_id, logical)  # its instance may signal as soon as it boots
        if kind == "AWS::CloudFormation::WaitConditionHandle":
            obj: Any = res.Stub(logical, kind, signal_url(self.stack, logical) if boot
                                else res.wait_handle_url(self.stack, logical))
        elif waits and kind == signals.WAIT_CONDITION:
            props = self._live_props(logical)
            obj = signals.WaitCondition(logical, signals.condition_id(self.stack.stack_id, props))
        elif stubbed and not res.model_class(kind):
            obj = res.Stub(logical, kind, f"{self.stack.name}-{logical}-stub")
        else:
            props = self._live_props(logical)
            try:
                obj = res.create(logical, kind, props, self.rmap, self.account, self.region)
            except res.ResourceFailure as failure:
                if failure.leftover is not None:  # a custom resource's FAILED Create: the rollback deletes it
                    self.rmap._parsed_resources[logical] = failure.leftover
                    self.done.append(("create", logical, None))
                raise
            res.system_tags(obj, kind, props, self.stack, logical)
        self.rmap._parsed_resources[logical] = obj
        if kind == "AWS::EC2::Instance" and boot:
            self._keep_metadata(logical)
        self.record.props[logical] = props
        self.done.append(("create", logical, None))
        if kind == "AWS::EC2::Instance" and getattr(self.change_set, "fw_boot", False):
            boot_instance(logical, obj)
        reason = None
        if waits:
            policy = self._resolver().value(entry.get("CreationPolicy") or {})
            signals.await_signals(self.stack, logical, kind, obj, policy, props, event)
        if stubbed and isinstance(obj, res.Stub):
            reason = "Stubbed by the local cloud (local_cloud.stub): nothing was run"
        elif stubbed and "CreationPolicy" in entry:
            reason = "Signal stubbed by the local cloud (local_cloud.stub): no cfn-signal was received"
        elif not isinstance(obj, res.Stub):
            reason = self._read_back(logical, kind, obj, props)
        event(self.stack, logical, res.physical_id(obj), kind, "CREATE_COMPLETE", reason)

    def _keep_metadata(self, logical: str) -> None:
        """A booting instance's Metadata, resolved, for DescribeStackResource (cfn-init reads it)."""
        entry = self.new.resources[logical]
        signals.keep_metadata(self.stack, logical, self._resolver().value(entry.get("Metadata") or {}))

    def _import(self, logical: str) -> None:
        """Take the existing resource found when the change set was made (never created)."""
        kind = str(self.new.resources[logical]["Type"])
        obj = self.found[logical]
        event(self.stack, logical, res.physical_id(obj), kind, "IMPORT_IN_PROGRESS")
        obj.logical_resource_id = logical  # as moto's parsing sets it on what it creates
        self.rmap._parsed_resources[logical] = obj
        self.record.props[logical] = self._live_props(logical)
        self.done.append(("import", logical, None))  # a rollback forgets it, and never deletes it
        event(self.stack, logical, res.physical_id(obj), kind, "IMPORT_COMPLETE")

    def _read_back(self, logical: str, kind: str, obj: Any, props: dict[str, Any]) -> str | None:
        """Fail a create whose properties the service does not hold as the template set them; say once
        per type and operation that a type without a reader was not verified."""
        from formwright.cloud.emulator.drift import unapplied  # drift reads the record: imported late
        from formwright.cloud.emulator.drift_readers import READERS

        if kind not in READERS:
            if kind in self.unverified:
                return None
            self.unverified.add(kind)
            return (f"Not verified: the local cloud cannot read {kind} back, so what it applied is moto's "
                    "word (docs/local-cloud.md)")
        missed = unapplied(kind, obj, props, set(props), self.account, self.region)
        if missed:
            raise res.ResourceFailure(logical, f"the local cloud cannot create {kind} as the template sets "
                                               f"it: read back after create, {', '.join(missed)} not applied")
        return None

    def _modify(self, logical: str, change: Any) -> None:
        entry = self.new.resources[logical]
        kind = str(entry["Type"])
        old = self.rmap._parsed_resources.get(logical)
        props = self._live_props(logical)
        before = self.record.props.get(logical, {})
        names = {n for n in set(props) | set(before) if props.get(n) != before.get(n)}
        names |= reverted(change)  # a drift-aware change set sets drifted properties back
        static_replace = change.replacement == "True"
        dynamic_replace = change.replacement == "Conditional" and any(
            d["Target"].get("RequiresRecreation") in ("Always", "Conditionally")
            and props.get(d["Target"].get("Name"))
            != before.get(d["Target"].get("Name")) for d in change.details)
        self._check_policy(logical, kind, "Update:Replace" if static_replace or dynamic_replace
                           else "Update:Modify")
        if kind == "AWS::EC2::Instance" and getattr(self.change_set, "fw_boot", False):
            self._keep_metadata(logical)  # what cfn-init and cfn-hup read from now on
        if isinstance(old, res.Stub):
            self.record.props[logical] = props
            event(self.stack, logical, res.physical_id(old), kind, "UPDATE_COMPLETE",
                  "Stubbed by the local cloud (local_cloud.stub): nothing was run")
            return
        if static_replace or dynamic_replace:
            self._replace(logical, kind, old, props)
            return
        if not names:
            return
        event(self.stack, logical, res.physical_id(old), kind, "UPDATE_IN_PROGRESS")
        if not res.can_update(kind, names):
            raise res.ResourceFailure(logical, f"the local cloud cannot update {kind} in place "
                                               f"(moto has no update for {', '.join(sorted(names))})")
        try:
            new = res.update(logical, kind, old, props, names, self.account, self.region, before)
        except res.ResourceFailure as failure:
            if failure.leftover is not None:  # a custom resource's FAILED Update: the rollback reverts it
                self.record.props[logical] = props
                self.done.append(("update", logical, old))
            raise
        if new is not old:
            res.system_tags(new, kind, props, self.stack, logical)
        self.rmap._parsed_resources[logical] = new
        self.record.props[logical] = props
        self.done.append(("update", logical, old))
        from formwright.cloud.emulator.drift import unapplied  # drift reads the record: imported late

        if res.physical_id(new) != res.physical_id(old) and res.custom.is_custom(kind):
            # a provider answering another PhysicalResourceId replaced it: the old one goes in the clean-up,
            # the new one in a rollback
            self.cleanup.append((logical, old, {"Type": kind}, before))
            self.done[-1] = ("replace", logical, old)
        elif res.physical_id(new) != res.physical_id(old):  # moto made another resource: no in-place update
            raise res.ResourceFailure(logical, f"the local cloud cannot update {kind} in place: moto's "
                                               "update made a new resource under a new id")
        missed = unapplied(kind, new, props, names, self.account, self.region)
        if missed:  # moto answered the update and left these as they were: never UPDATE_COMPLETE
            raise res.ResourceFailure(logical, f"the local cloud cannot update {kind} in place: moto's "
                                               f"update did not apply {', '.join(missed)}")
        event(self.stack, logical, res.physical_id(new), kind, "UPDATE_COMPLETE")

    def _check_policy(self, logical: str, kind: str, action: str) -> None:
        reason = denial(getattr(self.stack, "policy", "") or "", logical, kind, action)
        if reason:
            raise res.ResourceFailure(logical, reason)

    def _replace(self, logical: str, kind: str, old: Any, props: dict[str, Any]) -> None:
        from moto.cloudformation.parsing import resource_name_property_from_type

        name_property = resource_name_property_from_type(kind)
        if name_property and props.get(name_property) and props.get(name_property) == self.record.props.get(
                logical, {}).get(name_property):
            raise res.ResourceFailure(
                logical, "CloudFormation cannot update a stack when a custom-named resource requires "
                         f"replacing. Rename {props[name_property]} and update the stack again.")
        event(self.stack, logical, res.physical_id(old), kind, "UPDATE_IN_PROGRESS", REPLACING)
        new = res.create(logical, kind, props, self.rmap, self.account, self.region)
        res.system_tags(new, kind, props, self.stack, logical)
        self.rmap._parsed_resources[logical] = new
        old_props = self.record.props.get(logical, {})
        self.record.props[logical] = props
        self.done.append(("replace", logical, old))
        self._boot_replacement(logical, kind, new, props)
        event(self.stack, logical, res.physical_id(new), kind, "UPDATE_COMPLETE")
        old_entry = self.record.desired.resources.get(logical, {}) if self.record.desired else {}
        policy_entry = {"Type": kind, "DeletionPolicy": old_entry.get("UpdateReplacePolicy")}
        self.cleanup.append((logical, old, policy_entry, old_props))

    def _boot_replacement(self, logical: str, kind: str, new: Any, props: dict[str, Any]) -> None:
        """A booting instance's replacement boots, and its CreationPolicy waits, as a new instance's does."""
        entry = self.new.resources[logical]
        if kind != "AWS::EC2::Instance" or not getattr(self.change_set, "fw_boot", False) \
                or kind in self.change_set.fw_stub:
            return
        self._keep_metadata(logical)
        if "CreationPolicy" in entry:
            signals.expect(self.stack.stack_id, logical)
        boot_instance(logical, new)
        if "CreationPolicy" in entry:
            policy = self._resolver().value(entry["CreationPolicy"])
            signals.await_signals(self.stack, logical, kind, new, policy, props, event, "UPDATE_IN_PROGRESS")

    def _outputs(self) -> list[dict[str, Any]]:
        resolver = self._resolver()
        out = []
        for key, body in (self.new.template.get("Outputs") or {}).items():
            if not resolver.included(body):
                continue
            try:
                value = resolver.value(body.get("Value"))
                export = resolver.value((body.get("Export") or {}).get("Name")) if "Export" in body else None
            except res.ResourceFailure as failure:
                raise StackFailure(f"Output {key}: {failure.reason}") from None
            item = {"OutputKey": key, "OutputValue": as_text(value), "Description": body.get("Description")}
            if export is not None:
                item["ExportName"] = str(export)
            out.append(item)
        return out

    def _check_exports(self, outputs: list[dict[str, Any]]) -> None:
        mine = {e.name: e.value for e in self.backend.exports.values()
                if e.exporting_stack_id == self.stack.stack_id}
        new = {o["ExportName"]: o["OutputValue"] for o in outputs if "ExportName" in o}
        for name in new:
            owner = self.backend.exports.get(name)
            if owner is not None and owner.exporting_stack_id != self.stack.stack_id:
                other = self.backend.stacks.get(owner.exporting_stack_id)
                raise StackFailure(f"Export with name {name} is already exported by stack "
                                   f"{other.name if other else owner.exporting_stack_id}")
        for name, value in mine.items():
            users = importers(self.backend, name, skip=self.stack.stack_id)
            if users and name not in new:
                raise StackFailure(f"Cannot delete export {name} as it is in use by {users[0]}.")
            if users and new[name] != value:
                raise StackFailure(f"Export {name} cannot be updated as it is in use by {users[0]}")

    # ---- endings -----------------------------------------------------------------------------
    def _commit(self, outputs: list[dict[str, Any]]) -> None:
        stack, backend = self.stack, self.backend
        status = "IMPORT" if self.importing else "CREATE" if self.creating else "UPDATE"
        stack.template, stack.template_dict = self.change_set.template, self.new.template
        stack.parameters = dict(self.change_set.parameters or {})
        stack.tags = dict(self.change_set.fw_tags or {})
        stack.description = self.new.template.get("Description")
        self.record.desired, self.record.outputs = self.new, outputs
        for name in [n for n, e in backend.exports.items() if e.exporting_stack_id == stack.stack_id]:
            del backend.exports[name]
        from moto.cloudformation.parsing import Export

        for output in outputs:
            if "ExportName" in output:
                backend.exports[output["ExportName"]] = Export(stack.stack_id, output["ExportName"],
                                                               output["OutputValue"])
        if self.cleanup and not self.creating:
            stack.status = "UPDATE_COMPLETE_CLEANUP_IN_PROGRESS"
            event(stack, stack.name, stack.stack_id, "AWS::CloudFormation::Stack", stack.status)
        # the clean-up deletes the old resources dependents first (reverse dependency order of the
        # deployed template), as a stack deletion does: old subnets before the old VPC they are in
        old = self.before[7].resources if self.before[7] is not None else {}
        rank = {name: i for i, name in enumerate(reversed(order(old)))}
        for logical, obj, entry, props in sorted(self.cleanup, key=lambda c: rank.get(c[0], -1)):
            self._delete_one(logical, obj, entry, props, keep_record=True)
        stack.status = f"{status}_COMPLETE"
        event(stack, stack.name, stack.stack_id, "AWS::CloudFormation::Stack", stack.status)
        self.change_set.execution_status = "EXECUTE_COMPLETE"

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
                if _still_there(kind, obj, self.account, self.region):
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


def _still_there(kind: str, obj: Any, account: str, region: str) -> bool:
    """True when the service still holds a deleted resource (False when the type has no reader)."""
    from formwright.cloud.emulator.drift_readers import READERS

    reader = READERS.get(kind)
    try:
        return reader is not None and reader(obj, account, region) is not None
    except Exception:  # noqa: BLE001 - a reader that cannot find the resource's parts: it is gone
        return False


def pseudo_parameters(stack: Any) -> dict[str, Any]:
    """AWS::* pseudo parameters of a stack."""
    return {"AWS::AccountId": stack.account_id, "AWS::Region": stack.region_name,
            "AWS::StackId": stack.stack_id, "AWS::StackName": stack.name, "AWS::URLSuffix": "amazonaws.com",
            "AWS::Partition": "aws", "AWS::NotificationARNs": list(stack.notification_arns or [])}


def importers(backend: Any, export: str, skip: str | None = None) -> list[str]:
    """Names of live stacks that import `export` (by its resolved name: Sub, Join and Ref count)."""
    users = []
    for stack in backend.stacks.values():
        if stack.stack_id == skip or stack.status in ("DELETE_COMPLETE", "REVIEW_IN_PROGRESS"):
            continue
        desired = getattr(getattr(stack, "fw_record", None), "desired", None)
        names = desired.imports if desired is not None else imported_exports(stack.template_dict or {})
        if export in names:
            users.append(stack.name)
    return sorted(users)


def delete_stack(backend: Any, stack: Any) -> bool:
    """Delete a stack's resources in reverse dependency order with events; False when one failed."""
    rec = record(stack)
    desired = rec.desired
    entries = desired.resources if desired else {
        k: v for k, v in (stack.template_dict.get("Resources") or {}).items() if isinstance(v, dict)}
    entries = {**{k: {"Type": kind} for k, kind in rec.left.items()}, **entries}
    run = Execution.__new__(Execution)
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
