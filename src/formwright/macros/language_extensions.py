"""`AWS::LanguageExtensions`: Fn::ForEach, Fn::Length, Fn::ToJsonString, Fn::FindInMap with a
DefaultValue, and intrinsic functions in DeletionPolicy / UpdateReplacePolicy.

All of them work in Resources, Conditions and Outputs only. Fn::ForEach::<LoopName> is
[Identifier, Collection, {OutputKey: OutputValue}]: the collection is a list or a Ref to a
CommaDelimitedList parameter; `${Identifier}` is replaced by each item and `&{Identifier}` by the
item without its non-alphanumeric characters; `{Ref: Identifier}` becomes the item; loops nest.
"""

from __future__ import annotations

import json
import re
import uuid
from typing import Any

from formwright.macros.base import BuiltinMacro, MacroEnv
from formwright.macros.errors import MacroError, MacroFailed
from formwright.macros.intrinsics import Resolver, Unresolvable
from formwright.template import line_of

NAME = "AWS::LanguageExtensions"
FOREACH = "Fn::ForEach::"
SECTIONS = ("Resources", "Conditions", "Outputs")
_ALPHANUMERIC = re.compile(r"^[A-Za-z0-9]+$")
_NOT_ALPHANUMERIC = re.compile(r"[^A-Za-z0-9]")
_DELETION_POLICIES = ("Delete", "Retain", "RetainExceptOnCreate", "Snapshot")
_REPLACE_POLICIES = ("Delete", "Retain", "Snapshot")
_FUNCTIONS = ("Fn::Length", "Fn::ToJsonString", "Fn::FindInMap")


class _Run:
    """One application of the transform to one template."""

    def __init__(self, template: dict, env: MacroEnv) -> None:
        self.template = template
        self.env = env
        self.resolver = Resolver(template, env.parameter_values, env.region, env.account_id)
        parameters = template.get("Parameters")
        self.parameter_names = set(parameters) if isinstance(parameters, dict) else set()
        resources = template.get("Resources")
        self.resource_names = (
            {k for k in resources if not k.startswith(FOREACH)} if isinstance(resources, dict) else set()
        )
        self.loop_names: dict[str, int | None] = {}
        #: ids of generated values whose functions are already resolved (skipped by `functions`).
        self.done: set[int] = set()

    def fail(self, message: str, line: int | None, hint: str | None = None) -> MacroError:
        """An error of the template at `line`."""
        return MacroError(
            f"Transform {NAME} failed with: {message}", file=self.env.file, line=line, hint=hint
        )

    # -- Fn::ForEach ------------------------------------------------------------------------------
    def expand(self, node: Any, ids: tuple[str, ...], line: int | None) -> Any:
        """`node` with every Fn::ForEach expanded (copying only what changes)."""
        if isinstance(node, dict):
            if any(isinstance(key, str) and key.startswith(FOREACH) for key in node):
                return self.expand_mapping(node, ids, line)
            changed: dict | None = None
            for key, value in node.items():
                if isinstance(value, (dict, list)):
                    new = self.expand(value, ids, line_of(node, key) or line)
                    if new is not value:
                        if changed is None:
                            changed = dict(node)
                        changed[key] = new
            return node if changed is None else changed
        if isinstance(node, list):
            items = [self.expand(value, ids, line) for value in node]
            return node if all(a is b for a, b in zip(items, node, strict=True)) else items
        return node

    def expand_mapping(self, node: dict, ids: tuple[str, ...], line: int | None) -> dict:
        """A mapping with Fn::ForEach keys replaced by what their loops generate."""
        out: dict = {}
        plain = {key for key in node if not key.startswith(FOREACH)}
        for key, value in node.items():
            key_line = line_of(node, key) or line
            if not key.startswith(FOREACH):
                out[key] = self.expand(value, ids, key_line)
                continue
            for new_key, new_value in self.loop(key, value, ids, key_line):
                if new_key in out or new_key in plain:
                    raise self.fail(f"{key}: the key {new_key} it generates is already defined", key_line,
                                    "make each OutputKey unique, e.g. include ${Identifier} or &{Identifier}")
                out[new_key] = new_value
        return out

    def loop(self, key: str, value: Any, ids: tuple[str, ...], line: int | None) -> list[tuple[str, Any]]:
        """The (key, value) pairs one Fn::ForEach generates."""
        name = key[len(FOREACH):]
        layout_hint = "write [Identifier, [Item1, Item2], {OutputKey${Identifier}: OutputValue}]"
        if not _ALPHANUMERIC.match(name):
            raise self.fail(f"{key}: the loop name must be alphanumeric", line)
        if name in self.resource_names:
            raise self.fail(f"{key}: the loop name {name} conflicts with a logical ID in Resources", line,
                            "rename the loop")
        if name in self.loop_names and self.loop_names[name] != line:
            raise self.fail(
                f"{key}: the loop name {name} is already used (line {self.loop_names[name]})",
                line,
                "every loop needs a name unique in the template",
            )
        self.loop_names.setdefault(name, line)
        if not isinstance(value, list) or len(value) != 3:
            raise self.fail(f"{key} layout is incorrect", line, layout_hint)
        identifier, collection, output = value
        if not isinstance(identifier, str) or not _ALPHANUMERIC.match(identifier):
            raise self.fail(f"{key}: the identifier must be an alphanumeric string", line, layout_hint)
        if identifier in self.parameter_names:
            raise self.fail(f"{key}: the identifier {identifier} conflicts with a parameter name", line,
                            "rename the identifier")
        if identifier in ids:
            raise self.fail(f"{key}: the identifier {identifier} is already used by an enclosing loop", line,
                            "give nested loops different identifiers")
        if not isinstance(output, dict) or not output:
            raise self.fail(f"{key} layout is incorrect", line, layout_hint)
        for output_key in output:
            if not output_key.startswith(FOREACH) and "${" + identifier + "}" not in output_key \
                    and "&{" + identifier + "}" not in output_key:
                raise self.fail(
                    f"{key}: the OutputKey {output_key} must contain ${{{identifier}}} or &{{{identifier}}}",
                    line,
                    "otherwise every item of the collection makes the same key",
                )
        items = self.collection(key, collection, line)
        # Substitution works on the loop body's JSON text: one C-speed replace and parse per item
        # instead of a Python walk. `{"Ref":"Id"}` is matched only as a whole one-key object.
        text = json.dumps(output, separators=(",", ":"), ensure_ascii=False)
        nested = FOREACH in text
        ref = json.dumps({"Ref": identifier}, separators=(",", ":"), ensure_ascii=False)
        pairs: list[tuple[str, Any]] = []
        for item in items:
            quoted = json.dumps(item, ensure_ascii=False)
            body_text = (text.replace("${" + identifier + "}", quoted[1:-1])
                         .replace("&{" + identifier + "}", _NOT_ALPHANUMERIC.sub("", item))
                         .replace(ref, quoted))
            if nested:
                pairs.extend(self.expand_mapping(json.loads(body_text), (*ids, identifier), line).items())
            else:
                # Innermost: every identifier is known, so the transform's functions resolve as it loads.
                body = json.loads(body_text, object_hook=lambda node: self.resolve_node(node, line))
                self.done.update(id(value) for value in body.values())
                pairs.extend(body.items())
        return pairs

    def collection(self, key: str, collection: Any, line: int | None) -> list[str]:
        """The loop's items as strings; CloudFormation's errors for anything else."""
        hint = "use a list of strings or a Ref to a CommaDelimitedList parameter"
        try:
            items = self.resolver.resolve(collection)
        except Unresolvable as err:
            raise self.fail(f"{key}: the collection could not be resolved: {err}", line,
                            "give the parameter a value (--param Name=a,b,c) or a Default") from None
        except MacroFailed as err:
            raise self.fail(f"{key}: {err.message}", line, err.hint) from None
        if isinstance(items, str) and isinstance(collection, dict):
            items = [part.strip() for part in items.split(",")]  # a String parameter holding a list
        if not isinstance(items, list):
            raise self.fail(f"{key}: the collection must be a list", line, hint)
        result = []
        for item in items:
            if isinstance(item, bool) or not isinstance(item, (str, int, float)):
                raise self.fail(
                    f"{key}: the collection holds {json.dumps(item, default=str)[:60]}, not a string",
                    line,
                    hint,
                )
            result.append(str(item))
        return result

    # -- the other functions ----------------------------------------------------------------------
    def functions(self, node: Any, line: int | None) -> Any:
        """`node` with Fn::Length, Fn::ToJsonString and Fn::FindInMap resolved where they must be."""
        if isinstance(node, list):
            items = [self.functions(value, line) for value in node]
            return node if all(a is b for a, b in zip(items, node, strict=True)) else items
        if not isinstance(node, dict) or id(node) in self.done:
            return node
        if len(node) == 1:
            (name, args), = node.items()
            if name == "Fn::Length":
                return self.must(lambda: self.resolver.length(self.functions(args, line)), name, line)
            if name == "Fn::ToJsonString":
                return self.to_json_string(self.functions(args, line), line)
            if name == "Fn::FindInMap":
                return self.find_in_map(node, line)
        changed: dict | None = None
        for key, value in node.items():
            if isinstance(value, (dict, list)):
                new = self.functions(value, line_of(node, key) or line)
                if new is not value:
                    if changed is None:
                        changed = dict(node)
                    changed[key] = new
        return node if changed is None else changed

    def resolve_node(self, node: dict, line: int | None) -> Any:
        """One freshly parsed mapping (its children already done) with the transform's function resolved."""
        if len(node) == 1 and next(iter(node)) in _FUNCTIONS:
            return self.functions(node, line)
        return node

    def must(self, compute: Any, name: str, line: int | None) -> Any:
        """Run `compute`; an unknown value or a bad layout is an error of `name`."""
        try:
            return compute()
        except Unresolvable as err:
            raise self.fail(
                f"{name} could not be resolved: {err}",
                line,
                "its arguments must be known before deployment (parameters, mappings, lists)",
            ) from None
        except MacroFailed as err:
            raise self.fail(err.message, line, err.hint) from None

    def find_in_map(self, node: dict, line: int | None) -> Any:
        """Resolve a FindInMap that uses a DefaultValue or functions in its keys; keep a plain one."""
        args = node["Fn::FindInMap"]
        if isinstance(args, list) and len(args) == 3 and all(isinstance(a, str) for a in args):
            return node  # plain: CloudFormation resolves it as ever
        if isinstance(args, list) and len(args) == 4:
            return self.must(lambda: self.resolver.find_in_map(args), "Fn::FindInMap", line)
        try:
            return self.resolver.find_in_map(args)
        except Unresolvable:
            return node  # keys only known at deployment: CloudFormation's own FindInMap will do
        except MacroFailed as err:
            raise self.fail(err.message, line, err.hint) from None

    def to_json_string(self, args: Any, line: int | None) -> Any:
        """The JSON text; values known only at deployment are spliced in with Fn::Join."""
        if not isinstance(args, (dict, list)):
            raise self.fail("Fn::ToJsonString layout is incorrect", line, "it takes an object or an array")
        holes: dict[str, Any] = {}
        marker = uuid.uuid4().hex

        def known(value: Any) -> Any:
            try:
                return self.resolver.resolve(value)
            except Unresolvable:
                pass
            except MacroFailed as err:
                raise self.fail(err.message, line, err.hint) from None
            if isinstance(value, dict) and len(value) == 1 and next(iter(value)).startswith(("Fn::", "Ref")):
                placeholder = f"{marker}{len(holes)}"
                holes[placeholder] = value
                return placeholder
            if isinstance(value, dict):
                return {k: known(v) for k, v in value.items()}
            return [known(v) for v in value]

        text = json.dumps(known(args), separators=(",", ":"), ensure_ascii=False)
        if not holes:
            return text
        parts: list[Any] = []
        for piece in re.split(f"({marker}\\d+)", text):
            if piece in holes:
                parts.append(holes[piece])
            elif piece:
                parts.append(piece)
        return {"Fn::Join": ["", parts]}

    def policies(self, resources: dict) -> dict:
        """DeletionPolicy / UpdateReplacePolicy given by functions, resolved to their option."""
        changed: dict | None = None
        for logical_id, resource in resources.items():
            if not isinstance(resource, dict):
                continue
            for attribute, allowed in (("DeletionPolicy", _DELETION_POLICIES),
                                       ("UpdateReplacePolicy", _REPLACE_POLICIES)):
                value = resource.get(attribute)
                if not isinstance(value, dict):
                    continue
                line = line_of(resource, attribute)
                option = self.must(
                    lambda v=value: self.resolver.resolve(v), f"{attribute} of {logical_id}", line
                )
                if option not in allowed:
                    raise self.fail(f"{attribute} of {logical_id} resolves to {option!r}", line,
                                    f"it must resolve to one of {', '.join(allowed)}")
                if changed is None:
                    changed = dict(resources)
                if changed[logical_id] is resource:
                    changed[logical_id] = resource = dict(resource)
                resource[attribute] = option
        return resources if changed is None else changed

    # -- the whole template -----------------------------------------------------------------------
    def apply(self) -> dict:
        """The processed template."""
        template = self.template
        for section, value in template.items():
            if section not in SECTIONS and _contains_foreach(value):
                raise self.fail(
                    f"Fn::ForEach can't be used in the {section} section",
                    line_of(template, section),
                    "use it in Resources, Conditions or Outputs",
                )
        out = dict(template)
        for section in SECTIONS:
            value = template.get(section)
            if not isinstance(value, dict):
                continue
            line = line_of(template, section)
            expanded = self.expand(value, (), line)
            if expanded is not value:
                for key in expanded:
                    if not _ALPHANUMERIC.match(key):
                        raise self.fail(
                            f"Template format error: {section[:-1]} name {key} is non alphanumeric.",
                            line,
                            "use &{Identifier} in the OutputKey to drop non-alphanumeric characters",
                        )
            out[section] = expanded
        conditions = out.get("Conditions")
        self.resolver.conditions = conditions if isinstance(conditions, dict) else {}
        for section in SECTIONS:
            if isinstance(out.get(section), dict):
                out[section] = self.functions(out[section], line_of(template, section))
        if isinstance(out.get("Resources"), dict):
            out["Resources"] = self.policies(out["Resources"])
        return out


def _contains_foreach(node: Any) -> bool:
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if any(isinstance(k, str) and k.startswith(FOREACH) for k in item):
                return True
            stack.extend(v for v in item.values() if isinstance(v, (dict, list)))
        elif isinstance(item, list):
            stack.extend(v for v in item if isinstance(v, (dict, list)))
    return False


class LanguageExtensionsMacro(BuiltinMacro):
    """The AWS::LanguageExtensions transform."""

    def __init__(self) -> None:
        super().__init__(NAME)

    def apply(self, fragment: Any, params: dict[str, Any], env: MacroEnv) -> Any:
        """Expand loops and resolve the transform's functions over the whole template."""
        if not isinstance(fragment, dict):
            raise MacroFailed("the template must be an object")
        return _Run(fragment, env).apply()
