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
from typing import Any

from formwright.cloud.emulator import resources as res
from formwright.cloud.emulator import schemas, signals
from formwright.cloud.emulator.attributes import attribute as attribute_of
from formwright.cloud.emulator.changes import Desired
from formwright.cloud.emulator.endings import Endings
from formwright.cloud.emulator.policy import denial
from formwright.cloud.emulator.read_back import after_create
from formwright.cloud.emulator.resolve import (
    Resolver,
    TemplateError,
    as_text,
)
from formwright.cloud.emulator.revert_drift import reverted
from formwright.cloud.emulator.stack_record import event, importers, order, pseudo_parameters, record
from formwright.cloud.instances.databases import boot_database
from formwright.cloud.instances.databases import runs as runs_engine
from formwright.cloud.instances.hooks import boot_instance, signal_url
from formwright.cloud.instances.launches import GROUP, boot_stack_group

# what boots with `instances: boot`, and the resources whose Metadata cfn-init reads on a booted instance
BOOTS = {"AWS::EC2::Instance", GROUP}
READ_BY_CFN_INIT = {*BOOTS, "AWS::EC2::LaunchTemplate", "AWS::AutoScaling::LaunchConfiguration"}

REPLACING = "Requested update requires the creation of a new physical resource; hence creating one."


class StackFailure(Exception):
    """The stack-level reason an execution failed (an output or export rule)."""


class Execution(Endings):
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
        return attribute_of(logical, kind, obj, attribute, self.record.props.get(logical, {}))

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
            for logical in order(self.new.resources, self._waiting()):
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

    def _waiting(self) -> dict[str, int]:
        """The resources this execution will wait on for signals (booting instances only), by rank: what
        boots and waits for its own signals (1) before what only waits (2: a WaitCondition), which may wait
        for it."""
        if not getattr(self.change_set, "fw_boot", False):
            return {}
        found = {}
        for logical, entry in self.new.resources.items():
            kind = entry.get("Type")
            if kind in self.change_set.fw_stub:
                continue
            if kind == signals.WAIT_CONDITION:
                found[logical] = 2
            elif "CreationPolicy" in entry:
                found[logical] = 1
        return found

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
        if kind in READ_BY_CFN_INIT and boot:
            self._keep_metadata(logical)
        self.record.props[logical] = props
        self.done.append(("create", logical, None))
        if boot and not stubbed:
            self._boot(logical, kind, obj, entry.get("Metadata"))
        if kind == "AWS::RDS::DBInstance" and boot and runs_engine(props.get("Engine")):
            boot_database(logical, obj, props)
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

    @staticmethod
    def _boot(logical: str, kind: str, obj: Any, metadata: Any = None) -> None:
        """Boot what the resource runs: an instance, or an Auto Scaling group's instances."""
        if kind == "AWS::EC2::Instance":
            boot_instance(logical, obj, metadata)
        elif kind == GROUP:
            boot_stack_group(logical, obj)

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
        """Fail a create the service does not hold as the template set it (`read_back.after_create`)."""
        return after_create(logical, kind, obj, props, self.account, self.region, self.unverified)

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
        booting = getattr(self.change_set, "fw_boot", False) and kind not in self.change_set.fw_stub
        if kind in READ_BY_CFN_INIT and booting:
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
        if kind == GROUP and booting:  # moto's update makes the group again: its new instances boot
            self._boot(logical, kind, new)
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
        """A booting instance's replacement boots, and its CreationPolicy waits, as a new instance's does;
        a served database's replacement is served."""
        entry = self.new.resources[logical]
        if not getattr(self.change_set, "fw_boot", False) or kind in self.change_set.fw_stub:
            return
        if kind == "AWS::RDS::DBInstance" and runs_engine(props.get("Engine")):
            boot_database(logical, new, props)  # a replaced database is served as a new one is
            return
        if kind not in BOOTS:
            return
        self._keep_metadata(logical)
        if "CreationPolicy" in entry:
            signals.expect(self.stack.stack_id, logical)
        self._boot(logical, kind, new)
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
