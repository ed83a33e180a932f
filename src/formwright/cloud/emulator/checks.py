"""What CloudFormation refuses before a change set exists, and what the local cloud cannot run.

`template_errors` and `capability_error` give CloudFormation's own texts (CreateChangeSet answers
ValidationError / InsufficientCapabilitiesException). `cannot_run` names what the local cloud would
otherwise only pretend to do: the change set then FAILS, unless the project stubs the type.
"""

from __future__ import annotations

import re
from typing import Any

from formwright.cloud.emulator import schemas
from formwright.cloud.emulator.resolve import dependencies

# "Acknowledging IAM resources in CloudFormation templates" (AWS CloudFormation User Guide)
IAM_TYPES = {
    "AWS::IAM::AccessKey": None,
    "AWS::IAM::Group": "GroupName",
    "AWS::IAM::InstanceProfile": "InstanceProfileName",
    "AWS::IAM::ManagedPolicy": "ManagedPolicyName",
    "AWS::IAM::Policy": None,
    "AWS::IAM::Role": "RoleName",
    "AWS::IAM::User": "UserName",
    "AWS::IAM::UserToGroupAddition": None,
}
CUSTOM = "AWS::CloudFormation::CustomResource"
WAIT_TYPES = {"AWS::CloudFormation::WaitCondition"}
# booting types (instances; groups of them) whose CreationPolicy a booted instance can satisfy
SIGNALLED = {"AWS::EC2::Instance", "AWS::AutoScaling::AutoScalingGroup"}
NOTHING_TO_DO = {"AWS::CloudFormation::WaitConditionHandle"}  # a URL only; moto keeps nothing for it


def unrecognized_types(template: dict[str, Any]) -> str | None:
    """CloudFormation's error for resource types it does not know, or None."""
    bad = sorted({str(body.get("Type")) for body in (template.get("Resources") or {}).values()
                  if isinstance(body, dict) and not schemas.known_type(str(body.get("Type")))})
    if bad:
        return f"Template format error: Unrecognized resource types: [{', '.join(bad)}]"
    return None


def template_errors(template: dict[str, Any]) -> str | None:
    """CloudFormation's template validation errors at CreateChangeSet (their texts as AWS gives them,
    quoted in public issues: aws-samples/aws-iot-chat-example#1, cfn-lint#92, serverless#4745,
    aws/serverless-application-model#1044), or None."""
    import graphlib

    for body in (template.get("Outputs") or {}).values():
        if not isinstance(body, dict) or "Value" not in body:
            return "Template format error: Every Outputs member must contain a Value object"
    resources = {k: v for k, v in (template.get("Resources") or {}).items() if isinstance(v, dict)}
    conditions = template.get("Conditions") or {}
    for body in resources.values():
        condition = body.get("Condition")
        if isinstance(condition, str) and condition not in conditions:
            return f"Template format error: Condition {condition} is not defined."
    for body in resources.values():
        depends = body.get("DependsOn") or []
        missing = [str(d) for d in ([depends] if isinstance(depends, str) else depends) if d not in resources]
        if missing:
            return (f"Template format error: Unresolved resource dependencies [{', '.join(missing)}] in the "
                    "Resources block of the template")
    try:
        graphlib.TopologicalSorter(dependencies(resources)).prepare()
    except graphlib.CycleError as cycle:
        return f"Circular dependency between resources: [{', '.join(sorted(set(cycle.args[1])))}]"
    return None


def capability_error(template: dict[str, Any], granted: list[str], direct: bool = False) -> str | None:
    """'Requires capabilities : [...]' when the template needs a capability not granted, else None.

    CAPABILITY_AUTO_EXPAND only for CreateStack / UpdateStack (`direct`): "This capacity doesn't apply to
    creating change sets" (CreateChangeSet, Capabilities, API Reference).
    """
    needed: set[str] = set()
    for body in (template.get("Resources") or {}).values():
        kind = str((body or {}).get("Type"))
        if kind in IAM_TYPES:
            name = IAM_TYPES[kind]
            named = name is not None and name in ((body or {}).get("Properties") or {})
            needed.add("CAPABILITY_NAMED_IAM" if named else "CAPABILITY_IAM")
    if "CAPABILITY_NAMED_IAM" in needed and "CAPABILITY_NAMED_IAM" not in granted:
        return "Requires capabilities : [CAPABILITY_NAMED_IAM]"
    if "CAPABILITY_IAM" in needed and not {"CAPABILITY_IAM", "CAPABILITY_NAMED_IAM"} & set(granted):
        return "Requires capabilities : [CAPABILITY_IAM]"
    if direct and template.get("Transform") and "CAPABILITY_AUTO_EXPAND" not in granted:
        return "Requires capabilities : [CAPABILITY_AUTO_EXPAND]"
    return None


def cannot_transform(template: dict[str, Any]) -> str | None:
    """Why the local cloud refuses a template with a Transform (moto runs no macros), or None."""
    transform = template.get("Transform")
    if not transform:
        return None
    names = transform if isinstance(transform, list) else [transform]
    shown = ", ".join(str(n.get("Name") if isinstance(n, dict) else n) for n in names)
    return (f"The local cloud cannot process Transform [{shown}]: moto runs no macros. Let formwright "
            "expand them (without --macros remote), or deploy with --target aws")


def attribute_errors(template: dict[str, Any]) -> str | None:
    """CloudFormation's error for a Fn::GetAtt naming an attribute the type does not have, or None."""
    resources = template.get("Resources") or {}
    todo: list[Any] = [resources, template.get("Outputs") or {}]
    while todo:
        item = todo.pop()
        if isinstance(item, list):
            todo.extend(item)
        elif isinstance(item, dict):
            if len(item) == 1 and "Fn::GetAtt" in item:
                args = item["Fn::GetAtt"]
                args = args.split(".", 1) if isinstance(args, str) else args
                logical, attribute = args[0], args[1] if len(args) > 1 else ""
                kind = str((resources.get(logical) or {}).get("Type"))
                if isinstance(attribute, str) and not _has_attribute(kind, attribute):
                    return (f"Template error: resource {logical} does not support attribute type "
                            f"{attribute} in Fn::GetAtt")
            else:
                todo.extend(item.values())
    return None


def _has_attribute(kind: str, attribute: str) -> bool:
    if kind.startswith("Custom::") or kind == CUSTOM or schemas.schema(kind) is None:
        return True
    if kind == "AWS::CloudFormation::Stack":
        return attribute.startswith("Outputs.")
    known = schemas.attributes(kind)
    return attribute in known or any("*" in k and _pattern(k, attribute) for k in known)


def _pattern(pattern: str, name: str) -> bool:
    import re

    return re.fullmatch(pattern, name) is not None


def property_errors(resources: dict[str, dict[str, Any]]) -> str | None:
    """'Properties validation failed' for a property the type's schema does not have, or one it requires
    that is missing (the schema's `required`, as the registry validates a resource model), or None."""
    for logical, entry in resources.items():
        allowed = schemas.properties(str(entry.get("Type")))
        if allowed is None:
            continue
        kind = str(entry.get("Type"))
        # a custom resource takes any properties besides ServiceToken (AWS::CloudFormation::CustomResource);
        # patternProperties admit names a schema does not list
        patterns = (schemas.schema(kind) or {}).get("patternProperties") or {}
        extra = [] if kind.startswith("Custom::") or kind == CUSTOM else sorted(
            n for n in set(entry.get("Properties") or {}) - allowed
            if not any(re.search(p, n) for p in patterns))
        if extra:
            return (f"Properties validation failed for resource {logical} with message: "
                    f"#: extraneous key [{extra[0]}] is not permitted")
        given = entry.get("Properties") or {}
        missing = [n for n in schemas.required(str(entry.get("Type"))) if n not in given]
        if missing:
            return (f"Properties validation failed for resource {logical} with message: "
                    f"#: required key [{missing[0]}] not found")
        found = schemas.schema(kind) or {}
        wrong = _type_error(given, {"properties": found.get("properties") or {}}, found, "#")
        if wrong and not kind.startswith("Custom::") and kind != CUSTOM:
            return f"Properties validation failed for resource {logical} with message: {wrong}"
    return None


PRIMITIVES = {"string": "String", "integer": "Integer", "number": "Number", "boolean": "Boolean"}


def _intrinsic(value: Any) -> bool:
    """A function CloudFormation resolves (Ref, Fn::*), whose type is known only once resolved."""
    return isinstance(value, dict) and len(value) == 1 and any(
        k == "Ref" or k.startswith("Fn::") for k in value)


def _type_error(value: Any, where: dict[str, Any], schema: dict[str, Any], path: str) -> str | None:
    """`#/Path: expected type: String, found: JSONObject` for an object or a list written where the schema
    takes a single primitive type (a value the template cannot mean, e.g. an unprocessed `!Rain::Embed`);
    other mismatches are left to the service (CloudFormation converts numbers and strings)."""
    while "$ref" in where:  # "#/definitions/Code"
        where = schema.get("definitions", {}).get(str(where["$ref"]).rsplit("/", 1)[-1], {})
    if _intrinsic(value):
        return None
    kind = where.get("type")
    if isinstance(kind, str) and kind in PRIMITIVES and isinstance(value, dict | list):
        found = "JSONObject" if isinstance(value, dict) else "JSONArray"
        return f"{path}: expected type: {PRIMITIVES[kind]}, found: {found}"
    if isinstance(value, dict) and isinstance(where.get("properties"), dict):
        for name, item in value.items():
            inner = where["properties"].get(name)
            wrong = _type_error(item, inner, schema, f"{path}/{name}") if isinstance(inner, dict) else None
            if wrong:
                return wrong
    if isinstance(value, list) and isinstance(where.get("items"), dict):
        for n, item in enumerate(value):
            wrong = _type_error(item, where["items"], schema, f"{path}/{n}")
            if wrong:
                return wrong
    return None


def cannot_run(resources: dict[str, dict[str, Any]], implemented: set[str], stub: set[str],
               signals: bool = False) -> str | None:
    """Why the local cloud cannot run these resources (none stubbed by the project), or None. `signals`:
    instances boot (`local_cloud: {instances: boot}`), so a WaitCondition and an instance's CreationPolicy
    wait for real signals (emulator/signals.py)."""
    for logical, entry in sorted(resources.items()):
        kind = str(entry.get("Type"))
        if kind in stub:
            continue
        token = (entry.get("Properties") or {}).get("ServiceToken")
        custom = kind.startswith("Custom::") or kind == CUSTOM
        if custom and isinstance(token, str) and ":lambda:" not in token:
            why = f"it invokes Lambda-backed custom resources only, not ServiceToken {token}"
        elif custom:
            continue  # its Lambda function runs in the local cloud (cloud/lambda_runtime/custom_resources.py)
        elif signals and (kind in WAIT_TYPES or kind in SIGNALLED):
            continue
        elif kind in WAIT_TYPES:
            why = "it cannot receive the signals a WaitCondition waits for"
        elif "CreationPolicy" in entry:
            why = "it cannot receive the cfn-signal its CreationPolicy waits for"
        elif kind in NOTHING_TO_DO:
            continue
        elif kind not in implemented:
            why = f"moto does not implement {kind}"
        else:
            continue
        return (f"The local cloud cannot run resource {logical} ({kind}): {why}. Stub it with "
                f"`local_cloud: {{stub: [{kind}]}}` in formwright.yaml, or deploy with --target aws")
    return None


def cannot_boot(resources: dict[str, dict[str, Any]]) -> str | None:
    """Why `local_cloud: {instances: boot}` cannot boot these instances on this machine, or None."""
    from formwright.cloud.instances.boot import unavailable

    instances = sorted(k for k, v in resources.items() if v.get("Type") in SIGNALLED)
    reason = unavailable() if instances else None
    if reason:
        kind = resources[instances[0]].get("Type")
        what = "instance" if kind == "AWS::EC2::Instance" else "the instances of"
        return (f"The local cloud cannot boot {what} {instances[0]} ({kind}), as "
                f"`local_cloud: {{instances: boot}}` asks: {reason}. Remove `instances: boot` to keep the "
                "stub mode")
    return None
