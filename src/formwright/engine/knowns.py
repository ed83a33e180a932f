"""Which values a plan can know before anything is applied.

A stack's output keeps its deployed value unless something it is made of changes: its expression, a
parameter it uses, the resource it is `Ref` of when that resource is added or replaced (a new physical
id), or an attribute it is `Fn::GetAtt` of when the resource is added, replaced, or modified in place and
the attribute is not one of its identifiers (the provider schema's primaryIdentifier and
additionalIdentifiers, and `Arn`: an update keeps the physical resource, so its identity stays). Where a
value cannot be known, the reason is said, never guessed ("when in doubt, unknown").

Inside a stack whose parameters are unknown, the same walk over the template finds the resources whose
properties use them: those "may change", replaced at worst when such a property is create-only in the
type's schema (cfn-lint ships the schemas; a type without one may be replaced, Conditional).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from formwright.cloud.emulator import schemas
from formwright.engine.results import ResourceChange

_SUB_NAME = re.compile(r"\$\{([^!}][^}]*)\}")
PSEUDO = "AWS::"  # AWS::Region, AWS::StackName …: the same before and after an update of the stack
REPLACED = ("True", "Conditional")
_DONE = {"Add": "added", "Remove": "removed", "Dynamic": "changed dynamically", "Import": "imported"}


@dataclass(frozen=True)
class Use:
    """One name an expression uses: a Ref (parameter or resource), a GetAtt, a condition or an import."""

    kind: str  # ref | getatt | condition | import
    name: str
    attribute: str = ""


def uses(expression: Any) -> Iterator[Use]:
    """Every Ref, Fn::GetAtt, Fn::Sub name, condition and Fn::ImportValue inside `expression`."""
    if isinstance(expression, list):
        for item in expression:
            yield from uses(item)
        return
    if not isinstance(expression, dict):
        return
    for key, value in expression.items():
        if key == "Ref" and isinstance(value, str):
            yield Use("ref", value)
        elif key == "Fn::GetAtt":
            parts = value.split(".", 1) if isinstance(value, str) else value
            if isinstance(parts, list) and parts and isinstance(parts[0], str):
                yield Use("getatt", parts[0], str(parts[1]) if len(parts) > 1 else "")
                yield from uses(parts[1:])  # an attribute name may itself be a Ref
        elif key == "Fn::Sub":
            yield from _sub_uses(value)
        elif key in ("Fn::If", "Condition") and _first_name(key, value):
            yield Use("condition", _first_name(key, value))
            yield from uses(value[1:] if key == "Fn::If" else [])
        elif key == "Fn::ImportValue":
            yield Use("import", str(value) if isinstance(value, str) else "")
            yield from uses(value)
        else:
            yield from uses(value)


def _first_name(key: str, value: Any) -> str:
    if key == "Condition":
        return value if isinstance(value, str) else ""
    return value[0] if isinstance(value, list) and value and isinstance(value[0], str) else ""


def _sub_uses(value: Any) -> Iterator[Use]:
    text, local = (value, {}) if isinstance(value, str) else (
        (value[0], value[1] if len(value) > 1 and isinstance(value[1], dict) else {})
        if isinstance(value, list) and value and isinstance(value[0], str) else ("", {}))
    for name in _SUB_NAME.findall(text):
        name = name.strip()
        if name in local:
            continue
        if "." in name:
            resource, attribute = name.split(".", 1)
            yield Use("getatt", resource, attribute)
        else:
            yield Use("ref", name)
    yield from uses(list(local.values()))


def identifiers(resource_type: str) -> set[str]:
    """Attributes that name the resource itself and so stay through an update in place."""
    schema = schemas.schema(resource_type) or {}
    paths = list(schema.get("primaryIdentifier") or [])
    for group in schema.get("additionalIdentifiers") or []:
        paths.extend(group)
    return {p.split("/", 2)[2].replace("/", ".") for p in paths if p.startswith("/properties/")} | {"Arn"}


class Knowns:
    """What can change in one stack's template, from its change set and the names already unknown.

    `changes`: the change set's resource changes by logical id; `unknown`: parameters whose value may
    differ after apply, each with the reason (a changed value, or an upstream output known after apply).
    """

    def __init__(self, template: dict[str, Any], changes: dict[str, ResourceChange],
                 unknown: dict[str, str]) -> None:
        self.template = template
        self.resources = {k: v for k, v in (template.get("Resources") or {}).items() if isinstance(v, dict)}
        self.conditions = template.get("Conditions") or {}
        self.changes = changes
        self.unknown = dict(unknown)
        self.may_change: dict[str, ResourceChange] = {}  # found by `spread`
        self._condition_memo: dict[str, str | None] = {}

    # ---- one use ----------------------------------------------------------------------------------
    def why_changes(self, use: Use) -> str | None:
        """Why the value `use` names may differ after apply, or None when it cannot."""
        if use.kind == "import":
            return f"Fn::ImportValue {use.name or '(computed)'}: not followed into the exporting stack"
        if use.kind == "condition":
            return self._condition(use.name)
        if use.kind == "ref" and use.name.startswith(PSEUDO):
            return None
        if use.kind == "ref" and use.name in self.unknown:
            return self.unknown[use.name]
        change = self.may_change.get(use.name) or self.changes.get(use.name)
        if change is None:
            return None
        what = f"GetAtt {use.name}.{use.attribute}: " if use.kind == "getatt" else "Ref "
        verb = "may be " if change.may_change else "is "
        if change.action in ("Add", "Remove", "Dynamic", "Import"):
            return f"{what}{use.name} is {_DONE[change.action]}"
        if change.replacement in REPLACED:
            kind = "replaced" if change.replacement == "True" else "conditionally replaced"
            return f"{what}{use.name} {verb}{kind}"
        if use.kind == "getatt" and use.attribute not in identifiers(change.resource_type):
            return (f"{what}{use.name} {verb}modified in place, and {use.attribute} is not an identifier "
                    f"of {change.resource_type}")
        return None

    def why_expression_changes(self, expression: Any) -> str | None:
        """The first reason any use inside `expression` may change, or None."""
        for use in uses(expression):
            why = self.why_changes(use)
            if why:
                return why
        return None

    def _condition(self, name: str) -> str | None:
        if name not in self._condition_memo:
            self._condition_memo[name] = None  # a cycle is CloudFormation's error, not a loop here
            why = self.why_expression_changes(self.conditions.get(name))
            self._condition_memo[name] = f"condition {name}: {why}" if why else None
        return self._condition_memo[name]

    # ---- the template -----------------------------------------------------------------------------
    def spread(self) -> list[ResourceChange]:
        """Mark every resource whose properties use a value that may change, until nothing more does;
        return them, each a `may change` Modify (one the change set lists keeps its details and takes the
        worse of both replacements)."""
        if not self.unknown:
            return []
        moved = True
        while moved:
            moved = False
            for logical, body in self.resources.items():
                if logical in self.may_change or self._settled(logical):
                    continue
                found = self._resource_may_change(logical, body)
                if found is not None:
                    self.may_change[logical] = found
                    moved = True
        return list(self.may_change.values())

    def _settled(self, logical: str) -> bool:
        change = self.changes.get(logical)
        return change is not None and (change.action != "Modify" or change.replacement == "True")

    def _resource_may_change(self, logical: str, body: dict[str, Any]) -> ResourceChange | None:
        """A may-change entry when any property (or the resource's condition) uses an unknown value."""
        resource_type = str(body.get("Type", ""))
        reasons: list[str] = []
        replacement = "False"
        create_only = {path[0] for path in schemas.create_only(resource_type) if path}
        # a custom resource's provider may answer an update with a new physical id: a replacement
        described = schemas.schema(resource_type) is not None and not _custom(resource_type)
        condition = body.get("Condition")
        if isinstance(condition, str) and (why := self._condition(condition)):
            reasons.append(why)
            replacement = "Conditional"
        properties = body.get("Properties")
        for name, value in (properties if isinstance(properties, dict) else {}).items():
            why = self.why_expression_changes(value)
            if why is None:
                continue
            reasons.append(f"{why}, in {name}")
            if name in create_only:
                replacement = "True"
            elif not described and replacement == "False":
                replacement = "Conditional"  # no schema, or a custom resource: it may return a new id
        if not reasons:
            return None
        listed = self.changes.get(logical)
        return ResourceChange("Modify", logical, resource_type,
                                _worse(replacement, listed.replacement if listed else "False"),
                                list(listed.details) if listed else [], may_change=True,
                                because="; ".join(reasons))

    def output_changes(self, outputs: dict[str, Any]) -> dict[str, str]:
        """Output name -> why its value may differ after apply, for the outputs of `outputs` (the
        template's Outputs section) that may; the others keep their deployed value."""
        found = {}
        for name, body in outputs.items():
            why = self.why_expression_changes(body)
            if why:
                found[name] = why
        return found


def _custom(resource_type: str) -> bool:
    return resource_type.startswith("Custom::") or resource_type == "AWS::CloudFormation::CustomResource"


def _worse(a: str, b: str) -> str:
    rank = {"False": 0, "Conditional": 1, "True": 2}
    return a if rank.get(a, 0) >= rank.get(b, 0) else b


def unknown_outputs(new: dict[str, Any], old: dict[str, Any] | None, knowns: Knowns,
                    deployed: dict[str, str]) -> dict[str, str]:
    """Output name -> why it is known only after apply, for a stack updated from template `old` (None:
    not read) to `new`; every output not named keeps its deployed value."""
    new_outputs = new.get("Outputs") or {}
    old_outputs = (old or {}).get("Outputs") or {}
    found = knowns.output_changes(new_outputs)
    for name, body in new_outputs.items():
        if name in found:
            continue
        if name not in deployed:
            found[name] = "a new output"
        elif old is None:
            found[name] = "the deployed template could not be read"
        elif old_outputs.get(name) != body:
            found[name] = "its expression changed"
    return found
