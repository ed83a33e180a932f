"""moto's server with the few CloudFormation behaviours formwright relies on and moto lacks.

The engine talks to the local cloud exactly as to AWS, so where moto departs from CloudFormation
in a way the engine depends on, the local cloud is corrected here rather than the engine bent:

- executing a change set leaves moto's stack with stale outputs and parameters: refreshed here, as
  CloudFormation does when the execution completes;
- a stack made by a change set neither sees other stacks' exports nor registers its own: fixed here;
- template bodies are parsed with pure-Python YAML even when they are JSON: JSON goes first here;
- a CREATE change set on a stack in REVIEW_IN_PROGRESS made a second stack of the same name: reused here;
- a resource that fails during execution failed the ExecuteChangeSet call: the stack rolls back here instead;
- stacks never report LastUpdatedTime: set on every update here;
- UpdateTerminationProtection is missing: answered here;
- ListImports is missing (HTTP 500): answered here from the templates of the live stacks, with
  CloudFormation's error for an export nobody imports;
- of AWS's public image parameters (`/aws/service/...`) moto knows only Amazon Linux's, and a stack
  whose `AWS::SSM::Parameter::Value<AWS::EC2::Image::Id>` names another (Ubuntu, Debian, Windows)
  failed with a Python error: such a name resolves here to a stable stand-in image id.

Run as `python -m formwright.cloud.moto_server -H 127.0.0.1 -p PORT` (moto.server's own arguments).
"""

from __future__ import annotations

import json
import sys
from typing import Any


def _imported_exports(template: Any) -> set[str]:
    """Literal names used by Fn::ImportValue anywhere in a parsed template."""
    names: set[str] = set()
    todo = [template]
    while todo:
        node = todo.pop()
        if isinstance(node, dict):
            value = node.get("Fn::ImportValue")
            if isinstance(value, str):
                names.add(value)
            todo.extend(node.values())
        elif isinstance(node, list):
            todo.extend(node)
    return names


def patch_moto() -> None:
    """Apply the corrections to moto's CloudFormation backend and responses (idempotent)."""
    from moto.cloudformation import models, responses
    from moto.cloudformation.exceptions import ValidationError
    from moto.core.responses import ActionResult
    from moto.core.utils import utcnow

    if getattr(models.ChangeSet, "_formwright_patched", False):
        return
    original_apply = models.ChangeSet.apply

    def apply(self: Any) -> None:
        original_apply(self)
        stack = self.stack
        stack.template, stack.template_dict = self.template, self.template_dict
        if self.parameters is not None:
            stack.parameters = dict(self.parameters)
        if self.tags is not None:
            stack.tags = dict(self.tags)
        stack.output_map = stack._create_output_map()
        if self.change_set_type == "UPDATE":
            stack.last_updated_time = utcnow()

    models.ChangeSet.apply = apply  # type: ignore[method-assign]  # moto has no hook for this: patched in place

    original_update = models.Stack.update

    def update(self: Any, *args: Any, **kwargs: Any) -> None:
        original_update(self, *args, **kwargs)
        self.last_updated_time = utcnow()

    models.Stack.update = update  # type: ignore[method-assign]  # moto has no hook for this: patched in place
    models.ChangeSet._formwright_patched = True  # type: ignore[attr-defined]  # our marker on moto's class

    yaml_parse = models.Stack.parse_template

    def parse_template(template: str) -> dict[str, Any]:
        # JSON through the C parser first: moto reads every body with pure-Python YAML, which made
        # template parsing most of the local cloud's work per stack.
        if template.lstrip().startswith("{"):
            try:
                return json.loads(template)
            except ValueError:
                pass
        return yaml_parse(template)

    models.Stack.parse_template = staticmethod(parse_template)  # type: ignore[method-assign]  # moto has no hook for this: patched in place

    def parse_change_set_template(self: Any) -> None:
        self.template_dict = parse_template(self.template)

    models.ChangeSet._parse_template = parse_change_set_template  # type: ignore[method-assign]  # moto has no hook for this: patched in place

    original_execute = models.CloudFormationBackend.execute_change_set

    def execute_change_set(self: Any, change_set_name: str, stack_name: str | None = None) -> None:
        change_set = self.change_sets.get(change_set_name) or next(
            (cs for cs in self.change_sets.values() if cs.change_set_name == change_set_name), None)
        if change_set is None:
            original_execute(self, change_set_name, stack_name)
            return
        stack = self.stacks[change_set.stack_id]
        # a stack made by a CREATE change set cannot see other stacks' exports (Fn::ImportValue)
        stack.cross_stack_resources = self.exports
        stack.resource_map.cross_stack_resources = self.exports
        try:
            original_execute(self, change_set_name, stack_name)
        except Exception as err:  # noqa: BLE001 - any resource failure
            # moto fails the ExecuteChangeSet call itself; CloudFormation accepts it and rolls the stack back
            failed, rolled_back = (
                ("CREATE_FAILED", "ROLLBACK_COMPLETE")
                if change_set.change_set_type == "CREATE"
                else ("UPDATE_FAILED", "UPDATE_ROLLBACK_COMPLETE")
            )
            stack._add_stack_event(failed, resource_status_reason=str(err) or type(err).__name__)
            stack._add_stack_event(rolled_back)
            stack.status = rolled_back
            change_set.execution_status = "EXECUTE_FAILED"
            return
        for name in [n for n, e in self.exports.items() if e.exporting_stack_id == stack.stack_id]:
            del self.exports[name]  # exports follow the executed template, as create_stack registers them
        for export in stack.exports:
            self.exports[export.name] = export

    models.CloudFormationBackend.execute_change_set = execute_change_set  # type: ignore[method-assign]  # moto has no hook for this: patched in place

    original_create = models.CloudFormationBackend.create_change_set

    def create_change_set(self: Any, stack_name: str, change_set_name: str, template: str,
                          parameters: dict[str, str], description: str, change_set_type: str,
                          *args: Any, **kwargs: Any) -> tuple[str, str]:
        waiting = None
        if change_set_type == "CREATE":
            waiting = next((st for st in self.stacks.values()
                            if st.name == stack_name and st.status == "REVIEW_IN_PROGRESS"), None)
        change_set_id, stack_id = original_create(self, stack_name, change_set_name, template, parameters,
                                                  description, change_set_type, *args, **kwargs)
        if waiting is not None:  # CREATE on a stack in review reuses it, as CloudFormation does
            change_set = self.change_sets[change_set_id]
            del self.stacks[stack_id]
            change_set.stack, change_set.stack_id = waiting, waiting.stack_id
            stack_id = waiting.stack_id
        return change_set_id, stack_id

    models.CloudFormationBackend.create_change_set = create_change_set  # type: ignore[method-assign]  # moto has no hook for this: patched in place

    def list_imports(self: Any) -> ActionResult:
        export_name = self._get_param("ExportName")
        importers = []
        for stack in self.cloudformation_backend.stacks.values():
            if stack.status == "DELETE_COMPLETE":
                continue
            template = getattr(stack, "template_dict", None) or {}
            if export_name in _imported_exports(template):
                importers.append(stack.name)
        if not importers:
            raise ValidationError(message=f"Export '{export_name}' is not imported by any stack.")
        return ActionResult({"Imports": sorted(importers)})

    # an action moto lacks, added to its response class
    responses.CloudFormationResponse.list_imports = list_imports  # type: ignore[attr-defined]

    def update_termination_protection(self: Any) -> ActionResult:
        name = self._get_param("StackName")
        enabled = str(self._get_param("EnableTerminationProtection")).lower() == "true"
        stack = self.cloudformation_backend.get_stack(name)
        stack.enable_termination_protection = enabled
        return ActionResult({"StackId": stack.stack_id})

    if not hasattr(responses.CloudFormationResponse, "update_termination_protection"):
        # an action older moto lacks, added to its response class
        responses.CloudFormationResponse.update_termination_protection = (  # type: ignore[attr-defined]
            update_termination_protection
        )

    validate_different_update = responses.CloudFormationResponse._validate_different_update

    def tags_only_update(self: Any, incoming_params: Any, stack_body: str, old_stack: Any) -> None:
        # CloudFormation accepts an UpdateStack that changes only the stack's tags; moto says "No updates"
        tags = {t["Key"]: t["Value"] for t in self._get_param("Tags", [])}
        if tags and tags != old_stack.tags:
            return
        validate_different_update(self, incoming_params, stack_body, old_stack)

    responses.CloudFormationResponse._validate_different_update = tags_only_update  # type: ignore[method-assign]  # moto has no hook for this: patched in place


def patch_public_images() -> None:
    """Resolve AWS's public image parameters moto lacks to a stand-in image id (idempotent)."""
    import datetime
    import hashlib

    from moto.ssm.models import Parameter, SimpleSystemManagerBackend

    if getattr(SimpleSystemManagerBackend, "_formwright_patched", False):
        return
    original = SimpleSystemManagerBackend.get_parameter

    def get_parameter(self: Any, name: str) -> Any:
        found = original(self, name)
        if found is None and name.startswith("/aws/service/") and ":" not in name:
            image = "ami-" + hashlib.sha256(name.encode()).hexdigest()[:17]
            return Parameter(  # type: ignore[abstract]  # moto's own class, instantiated as moto does
                account_id=self.account_id, name=name, value=image, parameter_type="String",
                description=None, allowed_pattern=None, keyid=None,
                last_modified_date=datetime.datetime.now(datetime.UTC), version=1, data_type="aws:ec2:image")
        return found

    SimpleSystemManagerBackend.get_parameter = get_parameter  # type: ignore[method-assign]  # moto has no hook
    SimpleSystemManagerBackend._formwright_patched = True  # type: ignore[attr-defined]


def main(argv: list[str] | None = None) -> None:
    """Start moto's server with the corrections applied."""
    patch_moto()
    patch_public_images()
    from moto import server

    server.main(argv if argv is not None else sys.argv[1:])


if __name__ == "__main__":
    main()
