"""A change set as CloudFormation computes it: what a template and its parameters resolve to, diffed.

Follows "Update behaviors of stack resources" and "Example change sets" in the AWS CloudFormation
User Guide: a Modify carries Replacement True / False / Conditional from the type's
createOnlyProperties, its Scope and Details; a resource that refers to a replaced one is Modify with
a Dynamic detail (ResourceReference / ResourceAttribute).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any

from formwright.cloud.emulator import schemas
from formwright.cloud.emulator.resolve import NO_VALUE, Resolver, parameter_references, reference_sites

STACK_TAG_PREFIX = "aws:"
# resource attributes a change set reports as a Modify of their own (ResourceTargetDefinition Attribute)
POLICIES = ("DeletionPolicy", "UpdateReplacePolicy", "CreationPolicy", "UpdatePolicy")
ATTRIBUTES = ("DependsOn", "Metadata", *POLICIES)


@dataclass
class Desired:
    """A template resolved under its parameters: resources and outputs, references to resources symbolic."""

    template: dict[str, Any]
    parameters: dict[str, Any]
    echoed: dict[str, str]
    resources: dict[str, dict[str, Any]] = field(default_factory=dict)
    outputs: dict[str, dict[str, Any]] = field(default_factory=dict)
    imports: set[str] = field(default_factory=set)


def desired(template: dict[str, Any], parameters: dict[str, Any], echoed: dict[str, str],
            pseudo: dict[str, Any], exports: dict[str, Any]) -> Desired:
    """Resolve every resource and output of `template` (conditions applied); raises TemplateError."""
    resolver = Resolver(template, parameters, pseudo, exports)
    out = Desired(template, parameters, echoed)
    for logical, body in (template.get("Resources") or {}).items():
        if not resolver.included(body):
            continue
        props = resolver.value(body.get("Properties") or {})
        entry = {"Type": body.get("Type"), "Properties": props if props is not NO_VALUE else {}}
        for key in ATTRIBUTES:
            if key in body:
                entry[key] = copy.deepcopy(body[key])
        out.resources[logical] = entry
    for name, body in (template.get("Outputs") or {}).items():
        if not resolver.included(body):
            continue
        entry = {"Value": resolver.value(body.get("Value"))}
        if "Export" in body:
            entry["ExportName"] = resolver.value((body.get("Export") or {}).get("Name"))
        if "Description" in body:
            entry["Description"] = body["Description"]
        out.outputs[name] = entry
    out.imports = set(resolver.imports)
    return out


def changed_paths(old: Any, new: Any, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """Paths (property names down) at which two resolved values differ."""
    if isinstance(old, dict) and isinstance(new, dict) and not _symbolic(old) and not _symbolic(new):
        found: list[tuple[str, ...]] = []
        for key in sorted(set(old) | set(new)):
            if old.get(key) != new.get(key):
                found.extend(changed_paths(old.get(key), new.get(key), (*prefix, key)))
        return found
    return [] if old == new else [prefix]


def _symbolic(value: dict[str, Any]) -> bool:
    return len(value) == 1 and next(iter(value)) in ("Ref", "Fn::GetAtt", "Fn::Sub", "Fn::Join", "Fn::Select",
                                                     "Fn::Split", "Fn::ImportValue", "Fn::Base64")


def recreation(resource_type: str, path: tuple[str, ...]) -> str:
    for create in schemas.create_only(resource_type):
        depth = min(len(create), len(path))
        if create[:depth] == path[:depth]:
            return "Always"
    return "Never"


def compute(old: Desired | None, new: Desired, physical: dict[str, str],
            old_tags: dict[str, str], new_tags: dict[str, str]) -> list[dict[str, Any]]:
    """The ResourceChange entries of a change set from `old` (None on create) to `new`."""
    before = old.resources if old else {}
    changes: dict[str, dict[str, Any]] = {}
    for logical, entry in new.resources.items():
        if logical not in before:
            changes[logical] = {"Action": "Add", "LogicalResourceId": logical, "ResourceType": entry["Type"],
                                "Scope": [], "Details": []}
    for logical, entry in before.items():
        if logical not in new.resources:
            changes[logical] = {"Action": "Remove", "LogicalResourceId": logical,
                                "PhysicalResourceId": physical.get(logical), "ResourceType": entry["Type"],
                                "PolicyAction": _policy_action(entry.get("DeletionPolicy")),
                                "Scope": [], "Details": []}
    details: dict[str, list[dict[str, Any]]] = {}
    for logical in new.resources:
        if old is not None and logical in before:
            found = _static_details(logical, old, new, old_tags, new_tags)
            if found:
                details[logical] = found
    # a resource referring to a replaced (or changed, for GetAtt) one changes too: to a fixed point
    while True:
        replaced = {n for n, d in details.items() if _replacement(d) != "False"}
        modified = set(details)
        grew = False
        for logical, entry in new.resources.items():
            if logical not in before:
                continue
            dynamic = _dynamic_details(entry, replaced, modified, set(new.resources))
            known = {(d["Target"].get("Name"), d.get("CausingEntity")) for d in details.get(logical, [])}
            fresh = [d for d in dynamic if (d["Target"].get("Name"), d.get("CausingEntity")) not in known]
            if fresh:
                details.setdefault(logical, []).extend(fresh)
                grew = True
        if not grew:
            break
    for logical, found in details.items():
        entry = new.resources[logical]
        scope = sorted({d["Target"]["Attribute"] for d in found})
        replacement = _replacement(found)
        changes[logical] = {"Action": "Modify", "LogicalResourceId": logical,
                            "PhysicalResourceId": physical.get(logical), "ResourceType": entry["Type"],
                            "Replacement": replacement, "Scope": scope, "Details": found}
        if replacement == "True":  # the old resource goes under the policy it was deployed with
            changes[logical]["PolicyAction"] = "ReplaceAnd" + _policy_action(
                before[logical].get("UpdateReplacePolicy"))
    return [changes[name] for name in sorted(changes)]


def _policy_action(policy: Any) -> str:
    """ResourceChange PolicyAction (API Reference) of a removal under a DeletionPolicy (or of the old
    resource of a replacement under an UpdateReplacePolicy): Delete, Retain or Snapshot."""
    if policy in ("Retain", "RetainExceptOnCreate"):
        return "Retain"
    return "Snapshot" if policy == "Snapshot" else "Delete"


def _replacement(details: list[dict[str, Any]]) -> str:
    # ResourceChange Replacement (API Reference): Always with a Static evaluation is True, Always with a
    # Dynamic one is Conditional, the most intrusive detail wins
    if any(d["Target"].get("RequiresRecreation") == "Always" and d["Evaluation"] == "Static"
           for d in details):
        return "True"
    needs = {d["Target"].get("RequiresRecreation") for d in details}
    return "Conditional" if needs & {"Always", "Conditionally"} else "False"


def _static_details(logical: str, old: Desired, new: Desired, old_tags: dict[str, str],
                    new_tags: dict[str, str]) -> list[dict[str, Any]]:
    """The details of what changed in the resource itself: its template, the parameters it reads, tags.

    A property whose expression in the template is unchanged but whose value is not changed through
    parameters: "Example change sets" shows two details for it, a Dynamic DirectModification and a
    Static ParameterReference naming the parameter (CausingEntity), dynamic ones first.
    """
    before, after = old.resources[logical], new.resources[logical]
    kind = str(after["Type"])
    if before["Type"] != kind:
        return [_detail("Properties", "Type", "Always")]
    tag_property = schemas.tag_property(kind)
    dynamic: list[dict[str, Any]] = []
    found: list[dict[str, Any]] = []
    old_props, new_props = before.get("Properties") or {}, after.get("Properties") or {}
    old_raw, new_raw = _raw_properties(old, logical), _raw_properties(new, logical)
    for name in [*new_props, *(n for n in old_props if n not in new_props)]:
        if old_props.get(name) == new_props.get(name):
            continue
        if name == tag_property == "Tags":
            attribute, prop, needs = "Tags", None, "Never"
        else:
            paths = changed_paths(old_props.get(name), new_props.get(name), (name,))
            needs = "Always" if any(recreation(kind, p) == "Always" for p in paths) else "Never"
            attribute, prop = "Properties", name
        causes = []
        if name in old_raw and old_raw.get(name) == new_raw.get(name):
            causes = sorted(p for p in parameter_references(new_raw[name], new.template)
                            if old.parameters.get(p) != new.parameters.get(p))
        if not causes:
            found.append(_detail(attribute, prop, needs))
            continue
        dynamic.append(_detail(attribute, prop, needs, "Dynamic"))
        found.extend(_detail(attribute, prop, needs, "Static", "ParameterReference", p) for p in causes)
    if tag_property and _stack_tags(old_tags) != _stack_tags(new_tags) and not any(
            d["Target"]["Attribute"] == "Tags" for d in found):
        found.append(_detail("Tags", None, "Never"))
    for attribute in ("Metadata", *POLICIES):
        if before.get(attribute) != after.get(attribute):
            found.append(_detail(attribute, None, "Never"))
    return dynamic + found


def _detail(attribute: str, name: str | None, needs: str, evaluation: str = "Static",
            source: str = "DirectModification", cause: str | None = None) -> dict[str, Any]:
    """One ResourceChangeDetail (CausingEntity only for a change with a cause other than the template)."""
    target = {"Attribute": attribute, "RequiresRecreation": needs}
    if name is not None:
        target = {"Attribute": attribute, "Name": name, "RequiresRecreation": needs}
    detail = {"Target": target, "Evaluation": evaluation, "ChangeSource": source}
    if cause is not None:
        detail["CausingEntity"] = cause
    return detail


def _raw_properties(state: Desired, logical: str) -> dict[str, Any]:
    """A resource's properties as written in the template (intrinsic functions unevaluated)."""
    body = (state.template.get("Resources") or {}).get(logical) or {}
    props = body.get("Properties") if isinstance(body, dict) else None
    return props if isinstance(props, dict) else {}


def _stack_tags(tags: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in tags.items() if not k.startswith(STACK_TAG_PREFIX)}


def _dynamic_details(entry: dict[str, Any], replaced: set[str], modified: set[str],
                     resources: set[str]) -> list[dict[str, Any]]:
    kind = str(entry["Type"])
    found = []
    for name, value in sorted((entry.get("Properties") or {}).items()):
        for target, attribute in _reference_sites(value, resources):
            if attribute is None and target not in replaced:
                continue
            if attribute is not None and target not in modified:
                continue
            # RequiresRecreation is the property's update behaviour; being Dynamic makes it Conditional
            found.append(_detail("Properties", name, recreation(kind, (name,)), "Dynamic",
                                 "ResourceReference" if attribute is None else "ResourceAttribute",
                                 target if attribute is None else f"{target}.{attribute}"))
    return found


def _reference_sites(value: Any, resources: set[str]) -> list[tuple[str, str | None]]:
    """(logical id, attribute or None for Ref) for every reference to a resource inside `value`."""
    return [(target, attribute) for target, attribute in reference_sites(value) if target in resources]
