"""The CloudFormation API calls the emulator answers in place of moto: change sets and DeleteStack.

Installed into moto's backend by `formwright.cloud.moto_server.patch_moto`.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from formwright.cloud.emulator import changes as cs_changes
from formwright.cloud.emulator import checks, import_changes, indexed, nested, revert_drift, rules, signals
from formwright.cloud.emulator import resources as res
from formwright.cloud.emulator.context import request
from formwright.cloud.emulator.endings import delete_stack
from formwright.cloud.emulator.execute import Execution
from formwright.cloud.emulator.parameters import ParameterError, resolve_parameters
from formwright.cloud.emulator.resolve import TemplateError
from formwright.cloud.emulator.stack_record import importers, pseudo_parameters, record

STUB_TAG = "formwright:local-cloud:stub"  # formwright.cloud.local.STUB_TAG; the server does not import it
INSTANCES_TAG = "formwright:local-cloud:instances"  # formwright.cloud.local.INSTANCES_TAG
NO_CHANGES = ("The submitted information didn't contain changes. Submit different information to create a "
              "change set.")


def _errors() -> Any:
    from moto.cloudformation import exceptions

    class InsufficientCapabilities(exceptions.CloudFormationError):
        code = "InsufficientCapabilitiesException"

    class InvalidChangeSetStatus(exceptions.CloudFormationError):
        code = "InvalidChangeSetStatus"

    return exceptions.ValidationError, InsufficientCapabilities, InvalidChangeSetStatus


def change_set_not_found(name: str) -> Exception:
    """CloudFormation's answer for a missing change set (moto said "Stack with id X does not exist")."""
    from moto.cloudformation import exceptions

    class ChangeSetNotFound(exceptions.CloudFormationError):
        code = "ChangeSetNotFound"

    return ChangeSetNotFound(f"ChangeSet [{name}] does not exist")


def parse_template(body: str) -> dict[str, Any]:
    """A template body (JSON first, then YAML with the short intrinsic forms) as a dict."""
    from moto.cloudformation.models import Stack

    validation_error = _errors()[0]
    try:
        parsed = json.loads(body) if body.lstrip().startswith("{") else Stack.parse_template(body)
    except Exception as err:  # noqa: BLE001 - any parser error is CloudFormation's format error
        raise validation_error(message=f"Template format error: {err}") from None
    if not isinstance(parsed, dict) or not isinstance(parsed.get("Resources"), dict) \
            or not parsed["Resources"]:
        raise validation_error(
            message="Template format error: At least one Resources member must be defined.")
    return parsed


def current_desired(backend: Any, stack: Any) -> cs_changes.Desired | None:
    """What the stack's live template resolves to (None for a stack not created yet)."""
    rec = record(stack)
    if rec.desired is not None or not stack.template_dict:
        return rec.desired
    values, echoed = resolve_parameters(stack.template_dict, dict(stack.parameters or {}))
    return cs_changes.desired(stack.template_dict, values, echoed, pseudo_parameters(stack),
                              _exports(backend))


def _exports(backend: Any) -> dict[str, Any]:
    return {name: export.value for name, export in backend.exports.items()}


def _ssm(backend: Any) -> Any:
    def read(name: str) -> str:
        from moto.ssm.models import ssm_backends

        parameter = ssm_backends[backend.account_id][backend.region_name].get_parameter(name)
        if parameter is None:
            raise ParameterError(f"Parameter {name} not found in SSM")
        return str(parameter.value)

    return read


def create_change_set(backend: Any, original: Any, stack_name: str, change_set_name: str, template: str,
                      parameters: dict[str, str], description: str, change_set_type: str,
                      notification_arns: Any = None, tags: dict[str, str] | None = None,
                      role_arn: str | None = None) -> tuple[str, str]:
    """CreateChangeSet: refuse what CloudFormation refuses, then compute the changes as it does."""
    validation_error, insufficient, _ = _errors()
    tags = dict(tags or {})
    stub = set(tags.pop(STUB_TAG, "").split())
    boot = tags.pop(INSTANCES_TAG, "") == "boot"
    body = parse_template(template)
    direct = not getattr(request, "change_set", False)  # CreateStack / UpdateStack, not CreateChangeSet
    missing = checks.capability_error(body, list(getattr(request, "capabilities", None) or []), direct)
    if missing:
        raise insufficient(missing)
    for error in (checks.cannot_transform(body), checks.template_errors(body),
                  checks.unrecognized_types(body), checks.attribute_errors(body)):
        if error:
            raise validation_error(message=error)
    existing = indexed.stack_named(backend, stack_name)
    importing = change_set_type == "IMPORT"
    if importing:  # into the stack as it is, or a new one (moto knows only CREATE and UPDATE)
        change_set_type = "UPDATE" if existing is not None and existing.status != "REVIEW_IN_PROGRESS" \
            else "CREATE"
    if existing is not None and change_set_type == "UPDATE" and getattr(request, "tags_given", None) is False:
        # "If you don't specify this parameter, CloudFormation doesn't modify the stack's tags"
        # (UpdateStack, AWS CloudFormation API Reference; a change set's Tags alike)
        tags = dict(existing.tags or {})
    if existing is not None and change_set_type == "CREATE" and existing.status != "REVIEW_IN_PROGRESS":
        # AWS's answer, e.g. compose-x/ecs_composex#785
        raise validation_error(message=f"Stack [{stack_name}] already exists and cannot be created again "
                                       f"with the changeSet [{change_set_name}].")
    if existing is not None and change_set_type == "UPDATE" and (existing.status in (
            "ROLLBACK_COMPLETE", "ROLLBACK_FAILED", "REVIEW_IN_PROGRESS", "DELETE_FAILED")
            or in_progress(existing)):
        raise cannot_update(existing)
    try:
        values, echoed = resolve_parameters(body, dict(parameters or {}), _ssm(backend))
        pseudo = pseudo_parameters(existing) if existing is not None else {
            "AWS::StackName": stack_name, "AWS::Region": backend.region_name,
            "AWS::AccountId": backend.account_id, "AWS::StackId": _stack_arn(backend, stack_name),
            "AWS::URLSuffix": "amazonaws.com", "AWS::Partition": "aws", "AWS::NotificationARNs": []}
        rules.check_rules(body, values, pseudo)
        new = cs_changes.desired(body, values, echoed, pseudo, _exports(backend))
        old = current_desired(backend, existing) if existing is not None and change_set_type == "UPDATE" \
            else None
    except (ParameterError, TemplateError, rules.RuleError) as err:
        raise validation_error(message=str(err)) from None
    wanted = dict(getattr(request, "resources_to_import", None) or {})
    problem = import_changes.check_import(new, old, wanted) if importing else None
    if problem:
        raise validation_error(message=problem)
    change_set_id, stack_id = original(backend, stack_name, change_set_name, template, parameters,
                                       description, change_set_type, notification_arns, tags, role_arn)
    change_set = backend.change_sets[change_set_id]
    stack = change_set.stack
    if existing is None:  # resolved again with the id the new stack was given (its AWS::StackId)
        new = cs_changes.desired(body, values, echoed, pseudo_parameters(stack), _exports(backend))
    change_set.fw_capabilities = list(getattr(request, "capabilities", None) or [])
    physical = {k: res.physical_id(v) for k, v in stack.resource_map._parsed_resources.items()
                if not isinstance(v, str | int | float | dict | list) and v is not None}
    computed = cs_changes.compute(old, new, physical, dict(stack.tags or {}) if old else {}, tags)
    change_set.fw_revert = getattr(request, "deployment_mode", None) == revert_drift.MODE and old is not None
    if change_set.fw_revert:
        computed = revert_drift.revert(stack, new, computed)
    found: dict[str, Any] = {}
    taken = None
    if importing:
        computed, found, taken = import_changes.import_changes(backend, new, wanted)
        change_set.change_set_type = "IMPORT"
    elif getattr(request, "import_existing", False):
        computed, found, taken = import_changes.existing(backend, new, computed)
    change_set.fw_desired, change_set.fw_stub, change_set.fw_tags = new, stub, tags
    change_set.fw_found = found
    change_set.fw_boot = boot
    # acknowledged for the nested stacks its execution creates or updates, as CloudFormation applies them
    change_set.fw_capabilities = list(getattr(request, "capabilities", None) or [])
    change_set.changes = [_change(c) for c in computed]
    change_set.template_dict = body
    reason = taken or _failure(new, computed, stub, boot) or (
        checks.cannot_boot(new.resources) if boot else None)
    if reason is None and old is not None and not computed and old.template == body \
            and old.echoed == echoed and dict(stack.tags or {}) == tags:
        reason = NO_CHANGES
    change_set.status = "FAILED" if reason else "CREATE_COMPLETE"
    change_set.execution_status = "UNAVAILABLE" if reason else "AVAILABLE"
    change_set.status_reason = reason
    if reason is None and getattr(request, "include_nested", False):
        nested.make_nested(backend, change_set, new, NO_CHANGES)
    return change_set_id, stack_id


def in_progress(stack: Any) -> bool:
    """True while an operation runs on the stack (its lock released to wait: `locking.released`)."""
    return stack.status.endswith("_IN_PROGRESS") and stack.status != "REVIEW_IN_PROGRESS"


def cannot_update(stack: Any) -> Exception:
    """CloudFormation's answer to an update of a stack in a status that allows none (e.g. an
    operation in progress): "Stack:ARN is in UPDATE_IN_PROGRESS state and can not be updated."."""
    return _errors()[0](message=f"Stack:{stack.stack_id} is in {stack.status} state and can not be updated.")


@contextmanager
def no_half_made(backend: Any) -> Iterator[None]:
    """A request that fails inside the emulator (a bug: an HTTP 500) leaves no half-made stack: a stack or
    change set it added is removed, and a stack it left *_IN_PROGRESS ends in CloudFormation's failed status
    with an event saying why. An error CloudFormation gives (a service error) changes nothing here."""
    from moto.core.exceptions import ServiceException

    stacks, change_sets = indexed.stacks(backend), indexed.change_sets(backend)
    # what the request adds is followed as it adds it: exact, without copying both dicts on every request
    with stacks.watching() as new_stacks, change_sets.watching() as new_change_sets:
        try:
            yield
        except ServiceException:
            raise
        except Exception as err:
            for key in list(new_change_sets.added):
                change_sets.pop(key, None)
            for key in list(new_stacks.added):
                stacks.pop(key, None)
            settle(stacks.values(), f"The local cloud failed internally ({type(err).__name__}: {err}); "
                                    "this is a bug of formwright's local cloud")
            raise


def settle(stacks: Any, reason: str) -> list[str]:
    """End each stack an operation left *_IN_PROGRESS (and cannot finish) in CloudFormation's failed status,
    with an event giving `reason`; the names of those stacks."""
    from formwright.cloud.emulator.stack_record import event

    failed = {"CREATE_IN_PROGRESS": "CREATE_FAILED", "ROLLBACK_IN_PROGRESS": "ROLLBACK_FAILED",
              "DELETE_IN_PROGRESS": "DELETE_FAILED"}
    settled = []
    for stack in stacks:
        if in_progress(stack):
            stack.status = failed.get(stack.status, "UPDATE_ROLLBACK_FAILED")
            event(stack, stack.name, stack.stack_id, "AWS::CloudFormation::Stack", stack.status, reason)
            settled.append(stack.name)
    return settled


def settle_restored() -> list[str]:
    """After a restart from the snapshot: stacks whose operation was running when the local cloud stopped
    (an execution waiting for signals, a custom resource) end failed, so they can be deleted or updated."""
    from moto.cloudformation.models import cloudformation_backends

    stacks = [stack for account in dict.values(cloudformation_backends) for region in dict.values(account)
              for stack in region.stacks.values()]
    return settle(stacks, "The local cloud stopped while this operation ran (local-cloud stop); it did not "
                          "finish and its booted instances were stopped")


def _stack_arn(backend: Any, stack_name: str) -> str:
    """A stack id in CloudFormation's form (arn:aws:cloudformation:REGION:ACCOUNT:stack/NAME/UUID), so a
    template splitting AWS::StackId checks before the stack exists."""
    import uuid

    region, account = backend.region_name, backend.account_id
    return f"arn:aws:cloudformation:{region}:{account}:stack/{stack_name}/{uuid.uuid4()}"


def _failure(new: cs_changes.Desired, computed: list[dict[str, Any]], stub: set[str],
             signals: bool = False) -> str | None:
    reason = checks.property_errors(new.resources) or checks.cannot_run(new.resources, res.implemented(),
                                                                         stub, signals)
    if reason:
        return reason
    for change in computed:
        if change["Action"] != "Modify" or change["Replacement"] != "False":
            continue
        names = {d["Target"].get("Name") or d["Target"]["Attribute"] for d in change["Details"]
                 if d["Evaluation"] == "Static"}
        names -= {"Metadata", *cs_changes.POLICIES}
        kind = change["ResourceType"]
        if kind not in stub and not res.can_update(kind, names):
            logical = change["LogicalResourceId"]
            return (f"The local cloud cannot update {logical} ({kind}) in place: moto has "
                    f"no update for {', '.join(sorted(names))}. Deploy with --target aws, or change a "
                    "property that replaces it")
    return None


def _change(entry: dict[str, Any]) -> Any:
    from moto.cloudformation.models import Change

    change: Any = Change(entry["Action"], entry["LogicalResourceId"], entry["ResourceType"])
    change.physical_resource_id = entry.get("PhysicalResourceId")
    change.replacement = entry.get("Replacement")
    change.policy_action = entry.get("PolicyAction")
    change.scope = entry.get("Scope") or []
    change.details = entry.get("Details") or []
    if entry.get("ResourceDriftStatus"):
        change.resource_drift_status = entry["ResourceDriftStatus"]
    return change


def execute_change_set(backend: Any, original: Any, change_set_name: str,
                       stack_name: str | None = None) -> None:
    """ExecuteChangeSet: run the change set (with rollback) as CloudFormation does."""
    change_set = backend.change_sets.get(change_set_name) or next(
        (c for c in backend.change_sets.values() if c.change_set_name == change_set_name
         and (stack_name is None or c.stack_name == stack_name or c.stack_id == stack_name)), None)
    if change_set is None or not hasattr(change_set, "fw_desired"):
        original(backend, change_set_name, stack_name)
        return
    if in_progress(change_set.stack):
        raise cannot_update(change_set.stack)
    if change_set.execution_status != "AVAILABLE":
        raise _errors()[2](f"ChangeSet [{change_set.change_set_id}] cannot be executed in its current "
                           f"status of [{change_set.status}]")
    stack = backend.stacks[change_set.stack_id]
    stack.cross_stack_resources = backend.exports
    stack.resource_map.cross_stack_resources = backend.exports
    if getattr(change_set, "fw_boot", False):
        # booting instances and waiting for their signals takes minutes: the execution goes on after
        # ExecuteChangeSet answers, as CloudFormation's does (the stack shows *_IN_PROGRESS meanwhile)
        run = Execution(backend, change_set)
        run.begin()
        asked = dict(vars(request))

        def in_background() -> None:
            from formwright.cloud.emulator import locking

            vars(request).update(asked)  # this request's token and capabilities, in the execution's thread
            with locking.hold():
                _run(backend, change_set, stack, run)

        threading.Thread(target=in_background, name=f"execute-{stack.name}", daemon=True).start()
        return
    _run(backend, change_set, stack, Execution(backend, change_set))


def _run(backend: Any, change_set: Any, stack: Any, run: Execution) -> None:
    from moto.core.utils import utcnow

    granted = getattr(request, "capabilities", None)
    # nested stacks are made with the capabilities their parent's change set was given, as on AWS
    request.capabilities = getattr(change_set, "fw_capabilities", granted)
    try:
        run.run()
    finally:
        request.capabilities = granted
    if getattr(change_set, "fw_revert", False) and stack.status == "UPDATE_COMPLETE":
        from formwright.cloud.emulator.drift import detect

        detect(backend, stack)  # "drift-aware change sets reset the drift status" of what they set back
    if change_set.change_set_type == "UPDATE":
        stack.last_updated_time = utcnow()
    for other in [k for k in indexed.change_set_keys_of(backend, stack.stack_id)
                  if backend.change_sets[k] is not change_set]:
        del backend.change_sets[other]  # CloudFormation removes a stack's other change sets on execution


def delete(backend: Any, name_or_stack_id: str) -> None:
    """DeleteStack: termination protection and exports in use refuse; resources go with events."""
    validation_error = _errors()[0]
    stack = backend.stacks.get(name_or_stack_id) or indexed.stack_named(backend, name_or_stack_id)
    if stack is None:
        return  # deleting a stack that does not exist succeeds, as on CloudFormation
    if in_progress(stack):  # e.g. aws/copilot-cli#1180: "Stack [ARN] cannot be deleted while in status ..."
        raise validation_error(message=f"Stack [{stack.stack_id}] cannot be deleted while in status "
                                       f"{stack.status}")
    if stack.enable_termination_protection:
        raise validation_error(message=f"Stack [{stack.name}] cannot be deleted while TerminationProtection "
                                       "is enabled")
    from formwright.cloud.emulator.stack_record import event

    for export in [e for e in backend.exports.values() if e.exporting_stack_id == stack.stack_id]:
        users = importers(backend, export.name, skip=stack.stack_id)
        if users:
            stack.status = "DELETE_FAILED"
            event(stack, stack.name, stack.stack_id, "AWS::CloudFormation::Stack", "DELETE_FAILED",
                  f"Export {export.name} cannot be deleted as it is in use by {users[0]}")
            return
    if not delete_stack(backend, stack):
        return
    for name in [n for n, e in backend.exports.items() if e.exporting_stack_id == stack.stack_id]:
        del backend.exports[name]
    for change_set in indexed.change_set_keys_of(backend, stack.stack_id):
        del backend.change_sets[change_set]  # they go with their stack: DescribeChangeSet says not found
    backend.stacks.pop(stack.stack_id, None)
    backend.deleted_stacks[stack.stack_id] = stack
    signals.forget(stack.stack_id)  # its handles' signals go with it


def direct(backend: Any, stack_name: str, template: str, parameters: dict[str, str],
           tags: dict[str, str] | None, kind: str) -> Any:
    """CreateStack / UpdateStack: a change set made and executed at once, as CloudFormation runs them."""
    import uuid

    from formwright.cloud.emulator.stack_record import event

    name = f"formwright-direct-{uuid.uuid4().hex[:12]}"
    change_set_id, stack_id = backend.create_change_set(stack_name, name, template, parameters, None, kind,
                                                        None, tags, None)
    change_set = backend.change_sets[change_set_id]
    stack = change_set.stack
    if change_set.status == "FAILED":
        del backend.change_sets[change_set_id]
        if change_set.status_reason == NO_CHANGES:
            raise _errors()[0](message="No updates are to be performed.")
        verb = "CREATE" if kind == "CREATE" else "UPDATE"
        event(stack, stack.name, stack.stack_id, "AWS::CloudFormation::Stack", f"{verb}_IN_PROGRESS",
              "User Initiated")
        stack.status = "ROLLBACK_COMPLETE" if kind == "CREATE" else "UPDATE_ROLLBACK_COMPLETE"
        rolling = "ROLLBACK_IN_PROGRESS" if kind == "CREATE" else "UPDATE_ROLLBACK_IN_PROGRESS"
        event(stack, stack.name, stack.stack_id, "AWS::CloudFormation::Stack", rolling,
              change_set.status_reason)
        event(stack, stack.name, stack.stack_id, "AWS::CloudFormation::Stack", stack.status)
        return stack
    execute_change_set(backend, None, change_set_id)
    backend.change_sets.pop(change_set_id, None)
    return backend.stacks[stack_id]


def resource_status(stack: Any, logical: str) -> str:
    """A resource's own status: that of its latest event (DescribeStackResources shows each resource's,
    not the stack's); CREATE_COMPLETE for a resource without events (made by moto itself)."""
    return next((e.resource_status for e in reversed(stack.events) if e.logical_resource_id == logical
                 and e.physical_resource_id != stack.stack_id), "CREATE_COMPLETE")
