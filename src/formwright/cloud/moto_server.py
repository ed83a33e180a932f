"""moto's server with formwright's CloudFormation emulator in place of moto's own change sets.

The engine talks to the local cloud exactly as to AWS, so where moto departs from CloudFormation
the local cloud is corrected here rather than the engine bent. moto keeps the resources (its service
models); `formwright.cloud.emulator` computes change sets, executes them with rollback, deletes
stacks and refuses what CloudFormation refuses (docs/local-cloud.md is the contract). Besides:

- template bodies are parsed with pure-Python YAML even when they are JSON: JSON goes first here;
- a CREATE change set on a stack in REVIEW_IN_PROGRESS made a second stack of the same name: reused here;
- stacks never report LastUpdatedTime: set on every update here;
- UpdateTerminationProtection is missing: answered here;
- drift detection is missing (HTTP 500): answered here by `emulator/drift.py`;
- ListImports is missing (HTTP 500): answered here from the resolved imports of the live stacks
  (Fn::ImportValue written with Sub / Join / Ref included), with CloudFormation's error for an
  export nobody imports;
- of AWS's public image parameters (`/aws/service/...`) moto knows only Amazon Linux's, and a stack
  whose `AWS::SSM::Parameter::Value<AWS::EC2::Image::Id>` names another (Ubuntu, Debian, Windows)
  failed with a Python error: such a name resolves here to a stable stand-in image id;
- Lambda functions run without Docker (python3.x, nodejs), for Invoke, custom resources, SQS and S3
  (`formwright.cloud.lambda_runtime`).

Run as `python -m formwright.cloud.moto_server -H 127.0.0.1 -p PORT` (moto.server's own arguments).
"""

from __future__ import annotations

import json
import sys
from typing import Any


def patch_moto() -> None:
    """Apply the corrections to moto's CloudFormation backend and responses (idempotent)."""
    from moto.cloudformation import models, responses
    from moto.cloudformation.exceptions import AlreadyExistsException, ValidationError
    from moto.core.responses import ActionResult

    if getattr(models.ChangeSet, "_formwright_patched", False):
        return
    models.ChangeSet._formwright_patched = True  # type: ignore[attr-defined]  # our marker on moto's class

    yaml_parse = models.Stack.parse_template

    def parse_template(template: str | dict[str, Any]) -> dict[str, Any]:
        if isinstance(template, dict):  # a stack still in review has the empty template {}
            return template
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

    from formwright.cloud.emulator import api, completions, completions_services, context, indexed
    from formwright.cloud.emulator.stack_record import importers

    completions.patch_block_device_iops()
    completions_services.patch_models()
    indexed.install(models)
    original_create = models.CloudFormationBackend.create_change_set

    def reuse_review(self: Any, stack_name: str, change_set_name: str, template: str,
                     parameters: dict[str, str], description: str, change_set_type: str,
                     *args: Any, **kwargs: Any) -> tuple[str, str]:
        waiting = None
        if change_set_type == "CREATE":
            waiting = next((st for st in indexed.stacks_named(self, stack_name)
                            if st.status == "REVIEW_IN_PROGRESS"), None)
        change_set_id, stack_id = original_create(self, stack_name, change_set_name, template, parameters,
                                                  description, change_set_type, *args, **kwargs)
        if waiting is not None:  # CREATE on a stack in review reuses it, as CloudFormation does
            change_set = self.change_sets[change_set_id]
            del self.stacks[stack_id]
            change_set.stack, change_set.stack_id = waiting, waiting.stack_id
            indexed.change_sets(self).reindex(change_set_id)
            stack_id = waiting.stack_id
        return change_set_id, stack_id

    def create_change_set(self: Any, *args: Any, **kwargs: Any) -> tuple[str, str]:
        return api.create_change_set(self, reuse_review, *args, **kwargs)

    models.CloudFormationBackend.create_change_set = create_change_set  # type: ignore[method-assign]  # moto has no hook for this: patched in place
    models.ChangeSet.diff = lambda self: []  # type: ignore[method-assign]  # the emulator computes the changes

    original_execute = models.CloudFormationBackend.execute_change_set

    def execute_change_set(self: Any, change_set_name: str, stack_name: str | None = None) -> None:
        api.execute_change_set(self, original_execute, change_set_name, stack_name)

    models.CloudFormationBackend.execute_change_set = execute_change_set  # type: ignore[method-assign]  # moto has no hook for this: patched in place

    original_describe = models.CloudFormationBackend.describe_change_set

    def describe_change_set(self: Any, change_set_name: str) -> Any:
        known = change_set_name in self.change_sets or any(
            c.change_set_name == change_set_name for c in self.change_sets.values())
        if not known:
            raise api.change_set_not_found(change_set_name)
        return original_describe(self, change_set_name)

    models.CloudFormationBackend.describe_change_set = describe_change_set  # type: ignore[method-assign]  # moto has no hook for this: patched in place
    from formwright.cloud.emulator import nested

    nested.install(models)  # IncludeNestedStacks: DeleteChangeSet takes the nested change sets along

    def delete_stack(self: Any, name_or_stack_id: str) -> None:
        api.delete(self, name_or_stack_id)

    models.CloudFormationBackend.delete_stack = delete_stack  # type: ignore[method-assign]  # moto has no hook for this: patched in place

    def create_stack(self: Any, name: str, template: str, parameters: dict[str, Any],
                     notification_arns: Any = None,
                     tags: dict[str, str] | None = None, role_arn: str | None = None,
                     enable_termination_protection: bool | None = False, timeout_in_mins: int | None = None,
                     stack_policy_body: str | None = None) -> Any:
        if any(s.status != "REVIEW_IN_PROGRESS" for s in indexed.stacks_named(self, name)):
            raise AlreadyExistsException(f"Stack [{name}] already exists")
        stack = api.direct(self, name, template, parameters, tags, "CREATE")
        stack.enable_termination_protection = bool(enable_termination_protection)
        stack.policy = stack_policy_body or ""
        stack.timeout_in_minutes = timeout_in_mins
        return stack

    models.CloudFormationBackend.create_stack = create_stack  # type: ignore[method-assign]  # moto has no hook for this: patched in place

    def update(self: Any, template: str, role_arn: str | None = None,
               parameters: dict[str, Any] | None = None,
               tags: dict[str, str] | None = None) -> None:
        backend = models.cloudformation_backends[self.account_id][self.region_name]
        if tags is None:  # moto reads `Tags=` (an empty list: clear them) as no Tags (keep them)
            tags = {} if getattr(context.request, "tags_given", False) else self.tags
        api.direct(backend, self.name, template, parameters or {}, tags, "UPDATE")
        self.role_arn = role_arn

    models.Stack.update = update  # type: ignore[method-assign]  # moto has no hook for this: patched in place

    for action in ("create_change_set", "create_stack", "update_stack", "execute_change_set", "delete_stack"):
        setattr(responses.CloudFormationResponse, action, _with_request(
            getattr(responses.CloudFormationResponse, action), action == "create_change_set"))
    _patch_stack_views(models)
    _patch_resource_status(responses)
    _patch_generated_names()
    # a nested stack's PhysicalResourceId (and Ref) is its stack id, not its name
    # (AWS::CloudFormation::Stack, "Return values"); top-level stacks are never a resource
    models.Stack.physical_resource_id = property(lambda self: self.stack_id)  # type: ignore[method-assign,assignment]
    _patch_physical_ids()
    from formwright.cloud.emulator import own

    own.patch_moto()
    _patch_drift(responses)

    def list_imports(self: Any) -> ActionResult:
        export_name = self._get_param("ExportName")
        users = importers(self.cloudformation_backend, export_name)
        if not users:
            raise ValidationError(message=f"Export '{export_name}' is not imported by any stack.")
        return ActionResult({"Imports": users})

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


# moto models without a physical id, whose Ref is their name ("Return values" of AWS::Events::EventBus and
# AWS::IoT::Policy, AWS CloudFormation Template Reference): (module, class)
NAMED_BY_REF = (("moto.events.models", "EventBus"), ("moto.iot.models", "FakePolicy"),
                # "Ref returns the name of the DB parameter group" (its Return values); moto gave the object's
                # text, which AWS's sample RDS_with_DBParameterGroup.yaml then handed to its DB instance
                ("moto.rds.models", "DBParameterGroup"))


def _patch_physical_ids() -> None:
    import importlib

    for module, name in NAMED_BY_REF:
        cls = getattr(importlib.import_module(module), name)
        cls.physical_resource_id = property(lambda self: self.name)


def patch_public_images() -> None:
    """Resolve AWS's public image parameters moto lacks to a stand-in image id (idempotent)."""
    import datetime
    import hashlib

    from moto.ssm.models import Parameter, SimpleSystemManagerBackend

    from formwright.cloud.instances.refusals import PUBLIC_IMAGES

    if getattr(SimpleSystemManagerBackend, "_formwright_patched", False):
        return
    original = SimpleSystemManagerBackend.get_parameter

    def get_parameter(self: Any, name: str) -> Any:
        found = original(self, name)
        if found is None and name.startswith("/aws/service/") and ":" not in name:
            image = "ami-" + hashlib.sha256(name.encode()).hexdigest()[:17]
            PUBLIC_IMAGES[image] = name
            return Parameter(  # type: ignore[abstract]  # moto's own class, instantiated as moto does
                account_id=self.account_id, name=name, value=image, parameter_type="String",
                description=None, allowed_pattern=None, keyid=None,
                last_modified_date=datetime.datetime.now(datetime.UTC), version=1, data_type="aws:ec2:image")
        return found

    SimpleSystemManagerBackend.get_parameter = get_parameter  # type: ignore[method-assign]  # moto has no hook
    SimpleSystemManagerBackend._formwright_patched = True  # type: ignore[attr-defined]


def _patch_drift(responses: Any) -> None:
    """DetectStackDrift, DescribeStackDriftDetectionStatus, DescribeStackResourceDrifts and
    DetectStackResourceDrift, answered by the emulator (moto lacks them)."""
    from moto.cloudformation.exceptions import ValidationError
    from moto.core.responses import ActionResult
    from moto.core.utils import utcnow

    from formwright.cloud.emulator import drift

    def detect_stack_drift(self: Any) -> ActionResult:
        stack = self.cloudformation_backend.get_stack(self._get_param("StackName"))
        detection = drift.detect(self.cloudformation_backend, stack)
        return ActionResult({"StackDriftDetectionId": detection["StackDriftDetectionId"]})

    def describe_stack_drift_detection_status(self: Any) -> ActionResult:
        found = getattr(self.cloudformation_backend, "fw_drift_detections", {}).get(
            self._get_param("StackDriftDetectionId"))
        if found is None:
            raise ValidationError(message="Drift detection not found")
        return ActionResult({**found, "Timestamp": utcnow()})

    def describe_stack_resource_drifts(self: Any) -> ActionResult:
        # "Resources that don't currently support drift detection aren't checked, and so not included"
        # (API reference): their NOT_CHECKED is in ListStackResources' DriftInformation
        stack = self.cloudformation_backend.get_stack(self._get_param("StackName"))
        wanted = set(self._get_param("StackResourceDriftStatusFilters") or [])
        drifts = [{**d, "Timestamp": utcnow()} for d in getattr(stack, "fw_drifts", [])
                  if d["StackResourceDriftStatus"] != "NOT_CHECKED"
                  and (not wanted or d["StackResourceDriftStatus"] in wanted)]
        return ActionResult({"StackResourceDrifts": drifts})

    def detect_stack_resource_drift(self: Any) -> ActionResult:
        stack = self.cloudformation_backend.get_stack(self._get_param("StackName"))
        found = drift.resource_drift(stack, self._get_param("LogicalResourceId"))
        return ActionResult({"StackResourceDrift": {**found, "Timestamp": utcnow()}})

    for handler in (detect_stack_drift, describe_stack_drift_detection_status, describe_stack_resource_drifts,
                    detect_stack_resource_drift):
        setattr(responses.CloudFormationResponse, handler.__name__, handler)


# types whose names CloudFormation generates in lower case (their services refuse capitals); moto
# lowercases S3 bucket names only, and an ECR repository without RepositoryName failed to create
LOWERCASE_NAMES = {"AWS::ECR::Repository"}


def _patch_generated_names() -> None:
    """Generated names of LOWERCASE_NAMES types in lower case."""
    from moto.cloudformation import parsing

    generate = parsing.generate_resource_name

    def generate_resource_name(resource_type: str, stack_name: str, logical_id: str) -> str:
        name = generate(resource_type, stack_name, logical_id)
        return name.lower() if resource_type in LOWERCASE_NAMES else name

    parsing.generate_resource_name = generate_resource_name


def _patch_resource_status(responses: Any) -> None:
    """DescribeStackResource(s) and ListStackResources give each resource's own status (moto gives the
    stack's, or CREATE_COMPLETE always)."""
    from formwright.cloud.emulator import api

    dto_init = responses.StackResourceDTO.__init__

    def init(self: Any, stack: Any, resource: Any) -> None:
        dto_init(self, stack, resource)
        self.resource_status = api.resource_status(stack, self.logical_resource_id)

    responses.StackResourceDTO.__init__ = init
    list_resources = responses.CloudFormationResponse.list_stack_resources

    def list_stack_resources(self: Any) -> Any:
        answer = list_resources(self)
        stack = self.cloudformation_backend.get_stack(self._get_param("StackName"))
        # each resource's status in the latest drift detection (NOT_CHECKED before any, and for the
        # types it cannot check), as StackResourceDriftInformationSummary
        checked = {d["LogicalResourceId"]: d["StackResourceDriftStatus"]
                   for d in getattr(stack, "fw_drifts", [])}
        when = (getattr(stack, "drift_information", None) or {}).get("LastCheckTimestamp")
        for summary in answer.result["StackResourceSummaries"]:
            summary["ResourceStatus"] = api.resource_status(stack, summary["LogicalResourceId"])
            drift = {"StackResourceDriftStatus": checked.get(summary["LogicalResourceId"], "NOT_CHECKED")}
            if when is not None and summary["LogicalResourceId"] in checked:
                drift["LastCheckTimestamp"] = when
            summary["DriftInformation"] = drift
        return answer

    responses.CloudFormationResponse.list_stack_resources = list_stack_resources


def _with_request(handler: Any, change_set: bool) -> Any:
    """A response handler that hands the request's Capabilities, whether it gave Tags, and its
    ClientRequestToken (which the operation's stack events carry, as CloudFormation's do) to the emulator:
    moto's backend signatures carry none of them. A request failing inside the emulator leaves no
    half-made stack (`api.no_half_made`)."""
    from formwright.cloud.emulator import api, context

    def handle(self: Any) -> Any:
        context.request.capabilities = self._get_param("Capabilities") or []
        context.request.tags_given = any(k == "Tags" or k.startswith("Tags.") for k in self.querystring)
        context.request.token = self._get_param("ClientRequestToken")
        context.request.change_set = change_set
        context.request.deployment_mode = self._get_param("DeploymentMode") if change_set else None
        existing = self._get_bool_param("ImportExistingResources", False)
        context.request.import_existing = change_set and existing
        context.request.resources_to_import = _resources_to_import(self) if change_set else None
        nested = str(self._get_param("IncludeNestedStacks")).lower() == "true"
        context.request.include_nested = change_set and nested
        if change_set:  # CloudFormation answers a change set without changes with a FAILED one, not an error
            self._validate_different_update = lambda *args: None
            if self._get_param("ChangeSetType") is None:
                # "By default, CloudFormation specifies UPDATE" (CreateChangeSet, ChangeSetType); moto's
                # default is CREATE, which the emulator would refuse for a stack that exists
                if getattr(self, "automated_parameter_parsing", False):
                    self.params["ChangeSetType"] = "UPDATE"
                else:
                    self.querystring["ChangeSetType"] = ["UPDATE"]
        try:
            with api.no_half_made(self.cloudformation_backend):
                return handler(self)
        finally:
            context.request.capabilities = context.request.tags_given = context.request.token = None
            context.request.change_set = context.request.include_nested = False
            context.request.deployment_mode = context.request.import_existing = None
            context.request.resources_to_import = None

    return handle


def _resources_to_import(response: Any) -> dict[str, dict[str, str]]:
    """CreateChangeSet's ResourcesToImport as {logical id: {identifier property: value}}."""
    found: dict[str, dict[str, str]] = {}
    for item in response._get_param("ResourcesToImport") or []:
        identifier = item.get("ResourceIdentifier") or {}
        if isinstance(identifier, list):  # the query protocol's map entries
            identifier = {e.get("key"): e.get("value") for e in identifier}
        found[str(item.get("LogicalResourceId"))] = {str(k): str(v) for k, v in identifier.items()}
    return found


def _patch_stack_views(models: Any) -> None:
    """Outputs, exports and parameters of an emulated stack come from the emulator's record."""
    from moto.cloudformation.parsing import Export

    from formwright.cloud.emulator.stack_record import record

    outputs, exports = models.Stack.outputs, models.Stack.exports
    parameter_list, stack_parameters = models.Stack.parameter_list, models.Stack.stack_parameters

    def emulated(stack: Any) -> bool:
        return getattr(stack, "fw_record", None) is not None and stack.fw_record.desired is not None

    def view(original: Any, ours: Any) -> property:
        return property(lambda self: ours(self) if emulated(self) else original.fget(self))

    models.Stack.outputs = view(outputs, lambda self: [
        {k: v for k, v in o.items() if v is not None} for o in record(self).outputs] or None)
    models.Stack.exports = view(exports, lambda self: [
        Export(self.stack_id, o["ExportName"], o["OutputValue"]) for o in record(self).outputs
        if "ExportName" in o])
    def desired(stack: Any) -> Any:
        return record(stack).desired

    models.Stack.parameter_list = view(parameter_list, lambda self: [
        {"ParameterKey": k, "ParameterValue": v} for k, v in desired(self).echoed.items()])
    models.Stack.stack_parameters = view(stack_parameters, lambda self: {
        k: ",".join(v) if isinstance(v, list) else v for k, v in desired(self).parameters.items()})


def main(argv: list[str] | None = None) -> None:
    """Start moto's server with the corrections applied, functions run without Docker, its state loaded
    from the snapshot (`--state PATH`, written at stop and every `--snapshot-interval` seconds)."""
    import argparse
    from pathlib import Path

    from formwright.cloud import persistence, serving
    from formwright.cloud.lambda_runtime.install import install

    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--state", type=Path, default=None)
    parser.add_argument("--snapshot-interval", type=float, default=0)
    parser.add_argument("--instances", choices=("boot", "stub"), default="stub")
    ours, rest = parser.parse_known_args(argv if argv is not None else sys.argv[1:])
    where = argparse.ArgumentParser(add_help=False)  # moto's own flags, read (not taken) for the runtime
    where.add_argument("-H", "--host", default="127.0.0.1")
    where.add_argument("-p", "--port", type=int, default=5000)
    address = where.parse_known_args(rest)[0]
    patch_moto()
    patch_public_images()
    _patch_reset()
    install(f"http://{address.host}:{address.port}")  # functions run here, without Docker
    from formwright.cloud.emulator import signals
    from formwright.cloud.instances import hooks, launches

    hooks.install()
    launches.install()  # RunInstances and Auto Scaling launches boot (`--instances boot`; a booting stack's)
    launches.set_boot_all(ours.instances == "boot")
    signals.install()  # WaitConditionHandle URLs, SignalResource, DescribeStackResource's Metadata
    from formwright.cloud.emulator import schemas

    # importing cfn-lint (sympy, networkx) takes about a second: paid here, before the server answers
    # its health check, rather than by the first change set of a deploy
    schemas.schema("AWS::SQS::Queue")
    schemas.attributes("AWS::SQS::Queue")
    if ours.state is not None:
        try:
            kept = serving.restore(ours.state)
        except persistence.SnapshotRefused as refused:
            print(f"formwright: the local cloud's snapshot is refused: {refused}", file=sys.stderr,
                  flush=True)
            raise SystemExit(3) from None
        print(f"formwright: {kept} stack(s) restored from {ours.state}", file=sys.stderr, flush=True)
        from formwright.cloud.emulator import api, locking

        with locking.hold():
            interrupted = api.settle_restored()
        if interrupted:
            print(f"formwright: operations interrupted by the stop ended failed: {', '.join(interrupted)}",
                  file=sys.stderr, flush=True)
    serving.install(serving.Snapshots(ours.state, ours.snapshot_interval))
    from moto import server

    from formwright.cloud import connections

    connections.install()

    server.main(rest)


def _patch_reset() -> None:
    """moto's reset (`/moto-api/reset`) empties the emulator's own registries too."""
    from moto.moto_api._internal.models import MotoAPIBackend

    from formwright.cloud import persistence

    original = MotoAPIBackend.reset

    def reset(self: Any) -> None:
        original(self)
        persistence.reset_registries()

    MotoAPIBackend.reset = reset  # type: ignore[method-assign]  # moto has no hook for this: patched in place


if __name__ == "__main__":
    main()
