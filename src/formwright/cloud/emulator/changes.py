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
from formwright.cloud.emulator.resolve import NO_VALUE, Resolver, reference_sites

STACK_TAG_PREFIX = "aws:"
ATTRIBUTES = ("DeletionPolicy", "UpdateReplacePolicy", "DependsOn", "Metadata", "CreationPolicy",
              "UpdatePolicy")


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


def _recreation(resource_type: str, path: tuple[str, ...]) -> str:
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
                                "Scope": [], "Details": []}
    details: dict[str, list[dict[str, Any]]] = {}
    for logical, entry in new.resources.items():
        if logical in before:
            found = _static_details(before[logical], entry, old_tags, new_tags)
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
        changes[logical] = {"Action": "Modify", "LogicalResourceId": logical,
                            "PhysicalResourceId": physical.get(logical), "ResourceType": entry["Type"],
                            "Replacement": _replacement(found), "Scope": scope, "Details": found}
    return [changes[name] for name in sorted(changes)]


def _replacement(details: list[dict[str, Any]]) -> str:
    needs = {d["Target"].get("RequiresRecreation") for d in details}
    if "Always" in needs:
        return "True"
    return "Conditional" if "Conditionally" in needs else "False"


def _static_details(old: dict[str, Any], new: dict[str, Any], old_tags: dict[str, str],
                    new_tags: dict[str, str]) -> list[dict[str, Any]]:
    kind = str(new["Type"])
    if old["Type"] != kind:
        return [{"Target": {"Attribute": "Properties", "Name": "Type", "RequiresRecreation": "Always"},
                 "Evaluation": "Static", "ChangeSource": "DirectModification"}]
    tag_property = schemas.tag_property(kind)
    found: list[dict[str, Any]] = []
    old_props, new_props = old.get("Properties") or {}, new.get("Properties") or {}
    for name in sorted(set(old_props) | set(new_props)):
        if old_props.get(name) == new_props.get(name):
            continue
        if name == tag_property and name == "Tags":
            found.append({"Target": {"Attribute": "Tags", "RequiresRecreation": "Never"},
                          "Evaluation": "Static", "ChangeSource": "DirectModification"})
            continue
        paths = changed_paths(old_props.get(name), new_props.get(name), (name,))
        needs = "Always" if any(_recreation(kind, p) == "Always" for p in paths) else "Never"
        found.append({"Target": {"Attribute": "Properties", "Name": name, "RequiresRecreation": needs},
                      "Evaluation": "Static", "ChangeSource": "DirectModification"})
    if tag_property and _stack_tags(old_tags) != _stack_tags(new_tags) and not any(
            d["Target"]["Attribute"] == "Tags" for d in found):
        found.append({"Target": {"Attribute": "Tags", "RequiresRecreation": "Never"},
                      "Evaluation": "Static", "ChangeSource": "DirectModification"})
    if old.get("Metadata") != new.get("Metadata"):
        found.append({"Target": {"Attribute": "Metadata", "RequiresRecreation": "Never"},
                      "Evaluation": "Static", "ChangeSource": "DirectModification"})
    return found


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
            needs = "Conditionally" if _recreation(kind, (name,)) == "Always" else "Never"
            found.append({
                "Target": {"Attribute": "Properties", "Name": name, "RequiresRecreation": needs},
                "Evaluation": "Dynamic",
                "ChangeSource": "ResourceReference" if attribute is None else "ResourceAttribute",
                "CausingEntity": target if attribute is None else f"{target}.{attribute}",
            })
    return found


def _reference_sites(value: Any, resources: set[str]) -> list[tuple[str, str | None]]:
    """(logical id, attribute or None for Ref) for every reference to a resource inside `value`."""
    return [(target, attribute) for target, attribute in reference_sites(value) if target in resources]
