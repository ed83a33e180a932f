"""`AWS::LanguageExtensions`: Fn::ForEach, Fn::Length, Fn::ToJsonString, Fn::FindInMap with a
DefaultValue, and intrinsic functions in DeletionPolicy / UpdateReplacePolicy.

The behaviour follows AWS's conformance suite for the transform (the templates and expected outputs
AWS checks its own processors against, in aws-sam-cli's cfn_language_extensions tests) where it is
more precise than the documentation: after the loops are expanded, every function whose value can be
known before deployment is resolved in Resources and Outputs (`Fn::Sub` of known values becomes a
string, `Fn::If` on a known condition is decided, `AWS::NoValue` removed, `Fn::Base64` encoded), the
template's structure and conditions are validated, and what needs deployed resources is left as written.
"""

from __future__ import annotations

import re
from typing import Any

from formwright.macros.base import BuiltinMacro, MacroEnv
from formwright.macros.errors import MacroError, MacroFailed, Unresolvable
from formwright.macros.foreach import FOREACH, ForEachExpander, contains_foreach
from formwright.macros.intrinsics import NO_VALUE, Resolver
from formwright.template import line_of

NAME = "AWS::LanguageExtensions"
SECTIONS = ("Resources", "Conditions", "Outputs")
_ALPHANUMERIC = re.compile(r"^[A-Za-z0-9]+$")
_DELETION_POLICIES = ("Delete", "Retain", "RetainExceptOnCreate", "Snapshot")
_REPLACE_POLICIES = ("Delete", "Retain", "Snapshot")
#: The transform's own functions, resolved wherever they appear in Conditions.
_FUNCTIONS = ("Fn::Length", "Fn::ToJsonString", "Fn::FindInMap")
_POLICIES = {"DeletionPolicy", "UpdateReplacePolicy"}


class _Run:
    """One application of the transform to one template."""

    def __init__(self, template: dict, env: MacroEnv) -> None:
        self.template = template
        self.env = env
        self.resolver = Resolver(template, env.parameter_values, env.region, env.account_id)
        self.resolved: set[int] = set()

    def fail(self, message: str, line: int | None, hint: str | None = None) -> MacroError:
        """An error of the template at `line`."""
        return MacroError(
            f"Transform {NAME} failed with: {message}", file=self.env.file, line=line, hint=hint
        )

    def must(self, compute: Any, line: int | None, where: str = "") -> Any:
        """Run `compute`; a layout error or an unknown value it must have is an error at `line`."""
        prefix = f"{where}: " if where else ""
        try:
            return compute()
        except Unresolvable as err:
            raise self.fail(
                f"{prefix}could not be resolved: {err}",
                line,
                "its arguments must be known before deployment (parameters, mappings, lists)",
            ) from None
        except MacroFailed as err:
            raise self.fail(prefix + err.message, line, err.hint) from None

    # -- structure --------------------------------------------------------------------------------
    def check_structure(self) -> None:
        """What AWS's processor refuses before anything else: null resources and outputs, loops
        outside Resources / Conditions / Outputs."""
        template = self.template
        for section, value in template.items():
            if section not in SECTIONS and contains_foreach(value):
                raise self.fail(
                    f"Fn::ForEach can't be used in the {section} section",
                    line_of(template, section),
                    "use it in Resources, Conditions or Outputs",
                )
        resources = template.get("Resources")
        if not isinstance(resources, dict):
            raise self.fail(
                "The Resources section must not be null",
                line_of(template, "Resources") or 1,
                "declare at least one resource",
            )
        for logical_id, resource in resources.items():
            if not isinstance(resource, (dict, list)):
                raise self.fail(
                    f"[/Resources/{logical_id}] resource definition is malformed",
                    line_of(resources, logical_id),
                    "a resource is a mapping with a Type",
                )
        outputs = template.get("Outputs")
        if isinstance(outputs, dict):
            for name, output in outputs.items():
                if output is None:
                    raise self.fail(
                        f"[/Outputs/{name}] 'null' values are not allowed",
                        line_of(outputs, name),
                        "give the output a Value, or remove it",
                    )

    # -- conditions -------------------------------------------------------------------------------
    def evaluate_conditions(self, conditions: Any) -> None:
        """Every condition evaluated once: cycles, undefined names and bad references are errors."""
        self.resolver.conditions = conditions if isinstance(conditions, dict) else {}
        cycle = _condition_cycle(self.resolver.conditions)
        if cycle:
            raise self.fail(
                f"Circular dependency between conditions: {' -> '.join(cycle)}",
                line_of(conditions, cycle[0]),
                "a condition can't depend on itself through others",
            )
        for name in self.resolver.conditions:
            self.must(
                lambda n=name: self.resolver.known_condition(n),
                line_of(conditions, name),
                f"condition {name}",
            )

    def check_entry_conditions(self, out: dict) -> None:
        """Every resource or output Condition must name a condition."""
        for section in ("Resources", "Outputs"):
            entries = out.get(section)
            for logical_id, entry in entries.items() if isinstance(entries, dict) else ():
                name = entry.get("Condition") if isinstance(entry, dict) else None
                if name is not None and (not isinstance(name, str) or name not in self.resolver.conditions):
                    raise self.fail(
                        f"{section[:-1]} '{logical_id}' references non-existent condition '{name}'",
                        line_of(entry, "Condition"),
                        "define it in the Conditions section",
                    )

    def resolve_conditions(self, conditions: dict, line: int | None) -> dict:
        """The transform's own functions in Conditions, where they can be known; others as written."""

        def walk(node: Any) -> Any:
            if isinstance(node, list):
                items = [walk(v) for v in node]
                return node if all(a is b for a, b in zip(items, node, strict=True)) else items
            if not isinstance(node, dict):
                return node
            if len(node) == 1 and next(iter(node)) in _FUNCTIONS:
                try:
                    return self.resolver.resolve(node)
                except Unresolvable:
                    return node  # e.g. Fn::Length of a parameter without a value: kept for deployment
                except MacroFailed as err:
                    raise self.fail(err.message, line, err.hint) from None
            changed = {k: walk(v) for k, v in node.items()}
            return node if all(changed[k] is node[k] for k in node) else changed

        return walk(conditions)

    # -- Resources and Outputs --------------------------------------------------------------------
    def resolve_entries(self, section: str, entries: dict) -> dict:
        """Every entry with what can be known resolved. An entry whose condition is false is never
        created: there what cannot be resolved is kept as written instead of refused (AWS's expected
        output of templateFnInMapInWhenFalseConditionInResourceWithInvalidStringPath keeps it)."""
        changed: dict | None = None
        for logical_id, entry in entries.items():
            if id(entry) in self.resolved and section == "Resources" and not _POLICIES & set(entry):
                continue  # resolved as its loop generated it, nothing more to check
            line = line_of(entries, logical_id)
            if section == "Resources" and isinstance(entry, dict):
                entry = self.policies(logical_id, entry)
            condition = entry.get("Condition") if isinstance(entry, dict) else None
            if id(entries[logical_id]) in self.resolved:
                new = entry  # resolved as its loop generated it
            elif isinstance(condition, str) and self.resolver.known_condition(condition) is False:
                try:
                    new = self.resolver.partial(entry)
                except (MacroFailed, Unresolvable):
                    new = entry
            else:
                new = self.must(
                    lambda e=entry: self.resolver.partial(e), line, f"{section[:-1]} {logical_id}"
                )
            if (
                section == "Outputs"
                and isinstance(entry, dict)
                and "Value" in entry
                and (not isinstance(new, dict) or new.get("Value") is None)
            ):
                raise self.fail(
                    f"[/Outputs/{logical_id}/Value] an output's Value must not be null or AWS::NoValue",
                    line,
                    "give the output a value",
                )
            if new is not entries[logical_id]:
                if changed is None:
                    changed = dict(entries)
                if new is NO_VALUE:
                    raise self.fail(f"{section[:-1]} {logical_id} resolves to AWS::NoValue", line)
                changed[logical_id] = new
        return entries if changed is None else changed

    def resolve_generated(self, node: dict) -> Any:
        """The object hook of generated loop bodies: a function node resolved as the pass would
        (bottom-up, so its arguments are done). AWS::NoValue needs its container: left to the pass."""
        if len(node) == 1:
            name = next(iter(node))
            if name.startswith("Fn::") or name == "Ref":
                new = self.resolver.partial(node)
                if new is NO_VALUE:
                    raise Unresolvable("AWS::NoValue")
                return new
        return node

    def policies(self, logical_id: str, resource: dict) -> dict:
        """DeletionPolicy / UpdateReplacePolicy resolved to one of their options."""
        for attribute, allowed in (
            ("DeletionPolicy", _DELETION_POLICIES),
            ("UpdateReplacePolicy", _REPLACE_POLICIES),
        ):
            if resource.get(attribute) is None:
                continue  # absent, or null as AWS's conditionWithNull case has it: no policy
            value = resource[attribute]
            line = line_of(resource, attribute)
            option = self.must(lambda v=value: self.resolver.resolve(v), line, f"{attribute} of {logical_id}")
            if option not in allowed:
                raise self.fail(
                    f"{attribute} of {logical_id} resolves to {option!r}",
                    line,
                    f"it must resolve to one of {', '.join(allowed)}",
                )
            if option is not value:
                resource = {**resource, attribute: option}
        return resource

    # -- the whole template -----------------------------------------------------------------------
    def expand_section(self, out: dict, section: str, loops: ForEachExpander) -> None:
        """One section of `out` with its loops expanded; a section they leave empty is dropped."""
        value = self.template.get(section)
        if not isinstance(value, dict):
            return
        line = line_of(self.template, section)
        expanded = loops.section(section, value, line)
        if expanded is not value:
            for key in expanded:
                if not _ALPHANUMERIC.match(key):
                    raise self.fail(
                        f"Template format error: {section[:-1]} name {key} is non alphanumeric.",
                        line,
                        "use &{Identifier} in the OutputKey to drop non-alphanumeric characters",
                    )
            if not expanded and section != "Resources":
                # AWS's expected outputs drop a section its loops left empty
                # (fnForEachWithCollectionAsEmptyList).
                del out[section]
                return
        out[section] = expanded

    def apply(self) -> dict:
        """The processed template."""
        self.check_structure()
        template = self.template
        loops = ForEachExpander(template, self.resolver, self.fail, self.resolve_generated)
        self.resolved = loops.resolved
        out = dict(template)
        # Conditions first: Fn::If in what the other loops generate is decided as they generate it.
        self.expand_section(out, "Conditions", loops)
        self.evaluate_conditions(out.get("Conditions"))
        self.expand_section(out, "Resources", loops)
        self.expand_section(out, "Outputs", loops)
        self.check_entry_conditions(out)
        if isinstance(out.get("Conditions"), dict):
            out["Conditions"] = self.resolve_conditions(out["Conditions"], line_of(template, "Conditions"))
        for section in ("Resources", "Outputs"):
            if isinstance(out.get(section), dict):
                out[section] = self.resolve_entries(section, out[section])
        return out


def _condition_cycle(conditions: dict) -> list[str]:
    """A cycle of `{Condition: Name}` references, found on the whole graph as AWS's processor does
    (evaluation alone misses a cycle behind a short-circuited Fn::And:
    templateWithNestedCircularConditions)."""
    graph = {name: _condition_refs(body) for name, body in conditions.items()}
    done: set[str] = set()
    for start in graph:
        path: list[str] = []
        stack: list[tuple[str, int]] = [(start, 0)]
        on_path: set[str] = set()
        while stack:
            node, index = stack.pop()
            if index == 0:
                if node in on_path:
                    return [*path[path.index(node) :], node]
                if node in done or node not in graph:
                    continue
                path.append(node)
                on_path.add(node)
            children = graph[node]
            if index < len(children):
                stack.append((node, index + 1))
                stack.append((children[index], 0))
            else:
                path.pop()
                on_path.discard(node)
                done.add(node)
    return []


def _condition_refs(node: Any) -> list[str]:
    """The condition names a condition body refers to with `{Condition: Name}`."""
    found: list[str] = []
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if len(item) == 1 and isinstance(item.get("Condition"), str):
                found.append(item["Condition"])
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return found


class LanguageExtensionsMacro(BuiltinMacro):
    """The AWS::LanguageExtensions transform."""

    def __init__(self) -> None:
        super().__init__(NAME)

    def apply(self, fragment: Any, params: dict[str, Any], env: MacroEnv) -> Any:
        """Expand loops and resolve the transform's functions over the whole template."""
        if not isinstance(fragment, dict):
            raise MacroFailed("the template must be an object")
        return _Run(fragment, env).apply()


__all__ = ["FOREACH", "NAME", "LanguageExtensionsMacro"]
