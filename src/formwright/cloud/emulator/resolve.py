"""Evaluate a template's intrinsic functions under its parameters, as CloudFormation does.

Without a resource lookup, references to resources stay symbolic (`{"Ref": "Queue"}`,
`{"Fn::GetAtt": ["Queue", "Arn"]}`, a `Fn::Sub` keeping `${Queue}`): that is what a change set
compares. With one, they become the live values: that is what a resource is created or updated with.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar

NO_VALUE = object()  # AWS::NoValue: the property is removed
SUB_VARIABLE = re.compile(r"\$\{([^!}][^}]*)\}")
AZ_LETTERS = "abcdef"
# a resource lookup: (logical id, attribute or None for Ref) -> value
Lookup = Callable[[str, str | None], Any]


class TemplateError(Exception):
    """The template cannot be evaluated; the message is CloudFormation's."""


@dataclass
class Resolver:
    """A template's parameters, conditions and mappings, ready to evaluate any of its values."""

    template: dict[str, Any]
    parameters: dict[str, Any]
    pseudo: dict[str, Any]
    exports: dict[str, Any] = field(default_factory=dict)
    lookup: Lookup | None = None
    conditions: dict[str, bool] = field(default_factory=dict)
    imports: set[str] = field(default_factory=set)

    def __post_init__(self) -> None:
        declared = self.template.get("Conditions") or {}
        for name in declared:
            self.condition(name)

    # ---- conditions --------------------------------------------------------------------------
    # a condition function -> the method giving its truth, called with (arguments, conditions being evaluated)
    TRUTH: ClassVar[dict[str, str]] = {"Condition": "condition", "Fn::Equals": "_equals", "Fn::Not": "_not",
                                       "Fn::And": "_and", "Fn::Or": "_or"}

    def condition(self, name: str, seen: tuple[str, ...] = ()) -> bool:
        """The value of a named condition."""
        if name in self.conditions:
            return self.conditions[name]
        declared = self.template.get("Conditions") or {}
        if name not in declared:
            raise TemplateError(f"Template format error: Unresolved condition dependencies [{name}]")
        if name in seen:
            raise TemplateError(f"Template format error: Circular condition dependencies [{name}]")
        value = bool(self.truth(declared[name], (*seen, name)))
        self.conditions[name] = value
        return value

    def truth(self, node: Any, seen: tuple[str, ...] = ()) -> bool:
        """The truth of a condition function (Fn::Equals, Fn::And, Fn::Or, Fn::Not, Condition) or a value."""
        return self._boolean(self._operand(node, seen))

    def _operand(self, node: Any, seen: tuple[str, ...]) -> Any:
        """A condition function's truth, or any other node's value (whose truth `_boolean` gives)."""
        if isinstance(node, dict) and len(node) == 1:
            (key, args), = node.items()
            method = self.TRUTH.get(key)
            if method is not None:
                return bool(getattr(self, method)(args, seen))
        return self.value(node)

    def _boolean(self, value: Any) -> bool:
        return value if isinstance(value, bool) else str(value).lower() == "true"

    def _equals(self, args: Any, seen: tuple[str, ...]) -> bool:
        left, right = (self.value(a) for a in args)
        return self._same(left, right)

    def _same(self, left: Any, right: Any) -> bool:
        return as_text(left) == as_text(right)

    def _not(self, args: Any, seen: tuple[str, ...]) -> bool:
        return not self.truth(args[0], seen)

    # Fn::And and Fn::Or evaluate every argument, not only up to the one that decides (CloudFormation
    # refuses an undefined reference anywhere in the expression), and then test them in order
    def _and(self, args: Any, seen: tuple[str, ...]) -> bool:
        return all(self._boolean(v) for v in [self._operand(a, seen) for a in args])

    def _or(self, args: Any, seen: tuple[str, ...]) -> bool:
        return any(self._boolean(v) for v in [self._operand(a, seen) for a in args])

    def included(self, body: dict[str, Any]) -> bool:
        """True when a resource's or output's `Condition` holds (or it has none)."""
        name = body.get("Condition")
        return True if name is None else self.condition(name)

    # ---- values ------------------------------------------------------------------------------
    # an intrinsic function -> the method evaluating it, called with its arguments
    FUNCTIONS: ClassVar[dict[str, str]] = {
        "Ref": "_ref", "Fn::GetAtt": "_get_att", "Fn::Sub": "_sub", "Fn::Join": "_join",
        "Fn::Select": "_select", "Fn::Split": "_split", "Fn::FindInMap": "_find_in_map", "Fn::If": "_if",
        "Fn::ImportValue": "_import", "Fn::Base64": "_base64", "Fn::GetAZs": "_get_azs", "Fn::Cidr": "_cidr"}

    def value(self, node: Any) -> Any:
        """`node` with every intrinsic function it can evaluate evaluated; NO_VALUE for AWS::NoValue."""
        if isinstance(node, list):
            items = [self.value(v) for v in node]
            return [v for v in items if v is not NO_VALUE]
        if not isinstance(node, dict):
            return node
        if len(node) == 1:
            (key, args), = node.items()
            method = self.FUNCTIONS.get(key)
            if method is not None:
                return getattr(self, method)(args)
        out = {}
        for key, item in node.items():
            resolved = self.value(item)
            if resolved is not NO_VALUE:
                out[key] = resolved
        return out

    def _ref(self, name: Any) -> Any:
        if name == "AWS::NoValue":
            return NO_VALUE
        if name in self.pseudo:
            return self.pseudo[name]
        if name in self.parameters:
            return self.parameters[name]
        if name in (self.template.get("Resources") or {}):
            return self.lookup(name, None) if self.lookup else {"Ref": name}
        raise TemplateError(
            f"Template format error: Unresolved resource dependencies [{name}] in the Resources block of "
            "the template"
        )

    def _get_att(self, args: Any) -> Any:
        if isinstance(args, str):
            args = args.split(".", 1)
        logical, attribute = args[0], self.value(args[1])
        if logical not in (self.template.get("Resources") or {}):
            raise TemplateError(
                f"Template error: instance of Fn::GetAtt references undefined resource {logical}"
            )
        if self.lookup is None or not isinstance(attribute, str):
            return {"Fn::GetAtt": [logical, attribute]}
        return self.lookup(logical, attribute)

    def _sub(self, args: Any) -> Any:
        text, variables = (args, {}) if isinstance(args, str) else (args[0], args[1])
        local = {k: self.value(v) for k, v in (variables or {}).items()}
        symbolic = False

        def replace(match: re.Match[str]) -> str:
            nonlocal symbolic
            name = match.group(1).strip()
            if name in local:
                value = local[name]
            elif "." in name and name.split(".", 1)[0] in (self.template.get("Resources") or {}):
                value = self._get_att(name.split(".", 1))
            else:
                value = self._ref(name)
            if isinstance(value, dict | list) or value is NO_VALUE:
                symbolic = True
                return match.group(0)
            return as_text(value)

        out = SUB_VARIABLE.sub(replace, text)
        if symbolic:
            # the variables still symbolic stay with it: they are references the resource depends on
            kept = {k: v for k, v in local.items() if isinstance(v, dict | list) and f"${{{k}}}" in out}
            return {"Fn::Sub": [out, kept]} if kept else {"Fn::Sub": out}
        return out.replace("${!", "${")

    def _join(self, args: Any) -> Any:
        delimiter, items = args[0], self.value(args[1])
        if not isinstance(items, list) or any(isinstance(i, dict | list) for i in items):
            return {"Fn::Join": [delimiter, items]}
        return delimiter.join(as_text(i) for i in items)

    def _select(self, args: Any) -> Any:
        index, items = self.value(args[0]), self.value(args[1])
        if isinstance(items, list) and not isinstance(index, dict):
            try:
                return items[int(index)]
            except (IndexError, ValueError):
                raise TemplateError("Template error: Fn::Select cannot select nonexistent value at index "
                                    f"{index}") from None
        return {"Fn::Select": [index, items]}

    def _split(self, args: Any) -> Any:
        delimiter, source = args[0], self.value(args[1])
        if isinstance(source, str):
            return source.split(delimiter)
        return {"Fn::Split": [delimiter, source]}

    def _find_in_map(self, args: Any) -> Any:
        keys = [self.value(a) for a in args[:3]]
        default = args[3].get("DefaultValue") if len(args) > 3 and isinstance(args[3], dict) else None
        mapping = (self.template.get("Mappings") or {}).get(keys[0])
        if mapping is None:
            raise TemplateError(f"Template error: Unable to get mapping for {keys[0]}::{keys[1]}::{keys[2]}")
        try:
            return mapping[as_text(keys[1])][as_text(keys[2])]
        except (KeyError, TypeError):
            if default is not None:
                return self.value(default)
            raise TemplateError(
                f"Template error: Unable to get mapping for {keys[0]}::{keys[1]}::{keys[2]}"
            ) from None

    def _if(self, args: Any) -> Any:
        name, yes, no = args
        return self.value(yes if self.condition(name) else no)

    def _import(self, args: Any) -> Any:
        name = self.value(args)
        if isinstance(name, dict):
            return {"Fn::ImportValue": name}
        self.imports.add(str(name))
        if name not in self.exports:
            raise TemplateError(f"No export named {name} found.")
        return self.exports[name]

    def _base64(self, args: Any) -> Any:
        value = self.value(args)
        if isinstance(value, str):
            return base64.b64encode(value.encode()).decode()
        return {"Fn::Base64": value}

    def _get_azs(self, args: Any) -> Any:
        region = self.value(args) or self.pseudo.get("AWS::Region", "us-east-1")
        return [f"{region}{letter}" for letter in AZ_LETTERS[:3]]

    def _cidr(self, args: Any) -> Any:
        """Fn::Cidr [ipBlock, count, cidrBits]: the first `count` blocks of `cidrBits` host bits."""
        import ipaddress
        import itertools

        values = self.value(args)
        if not isinstance(values, list) or len(values) != 3 or any(isinstance(v, dict | list)
                                                                    for v in values):
            return {"Fn::Cidr": values}  # a value known only once resources exist (GetAtt Vpc.CidrBlock)
        block, count, bits = values
        try:
            network = ipaddress.ip_network(str(block), strict=False)
            wanted = int(count)
            prefix = network.max_prefixlen - int(bits)
            found = [str(n) for n in itertools.islice(network.subnets(new_prefix=prefix), wanted)]
        except ValueError:
            wanted, found = -1, []
        if len(found) != wanted:
            raise TemplateError(f"Template error: Fn::Cidr cannot make {count} blocks of {bits} host bits "
                                f"from {block}")
        return found


class NotBoolean(TemplateError):
    """A rule's condition or assertion, or an argument of its Fn::And, Fn::Or, Fn::Not or Fn::If, is not a
    boolean."""


class RuleResolver(Resolver):
    """A Resolver for a template's Rules section, whose functions differ from the Conditions section's (AWS
    CloudFormation User Guide, "Rule functions"): `Ref` names a parameter (a List parameter's value is a list)
    or a pseudo parameter, never a resource; there is no `Condition`; Fn::Equals compares values of any type;
    Fn::If tests a rule function; Fn::Contains, Fn::EachMemberEquals, Fn::EachMemberIn and Fn::RefAll are
    rule-only; and a condition or assertion that is not a boolean is an error."""

    TRUTH: ClassVar[dict[str, str]] = {
        **{k: v for k, v in Resolver.TRUTH.items() if k != "Condition"},
        "Fn::Contains": "_contains", "Fn::EachMemberEquals": "_each_member_equals",
        "Fn::EachMemberIn": "_each_member_in"}
    FUNCTIONS: ClassVar[dict[str, str]] = {
        "Ref": "_ref", "Fn::If": "_if", "Fn::RefAll": "_ref_all", "Fn::ValueOf": "_live_value",
        "Fn::ValueOfAll": "_live_value_all"}

    def __post_init__(self) -> None:
        """Nothing to evaluate ahead: rules cannot read the Conditions section."""

    def value(self, node: Any) -> Any:
        """As Resolver.value; a rule function's value is its truth (`Fn::Equals [{Fn::Contains..}, true]`)."""
        if isinstance(node, dict) and len(node) == 1 and next(iter(node)) in self.TRUTH:
            return self._operand(node, ())
        return super().value(node)

    def _boolean(self, value: Any) -> bool:
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.lower() in ("true", "false"):
            return value.lower() == "true"
        raise NotBoolean(f"Template error: a rule function does not evaluate to a boolean: {value!r}")

    def _same(self, left: Any, right: Any) -> bool:
        return _rule_value(left) == _rule_value(right)

    def _ref(self, name: Any) -> Any:
        if name in self.parameters:
            return self.parameters[name]
        if name in self.pseudo:
            return self.pseudo[name]
        raise TemplateError(f"Template error: rule references undefined parameter [{name}]")

    def _if(self, args: Any) -> Any:
        test, yes, no = self.value(args)
        return yes if self._boolean(test) else no

    def _contains(self, args: Any, seen: tuple[str, ...]) -> bool:
        """Fn::Contains [list_of_strings, string]: the list holds the string."""
        items, one = self.value(args)[:2]
        return str(one) in _strings(items)

    def _each_member_equals(self, args: Any, seen: tuple[str, ...]) -> bool:
        """Fn::EachMemberEquals [list_of_strings, string]: every string of the list is that string."""
        items, one = self.value(args)[:2]
        return all(v == str(one) for v in _strings(items))

    def _each_member_in(self, args: Any, seen: tuple[str, ...]) -> bool:
        """Fn::EachMemberIn [strings_to_check, strings_to_match]: each of the first is in the second."""
        checked, allowed = self.value(args)[:2]
        return set(_strings(checked)) <= set(_strings(allowed))

    def _ref_all(self, args: Any) -> list[str]:
        """Fn::RefAll parameter_type: the values of every parameter of that type."""
        declared = self.template.get("Parameters") or {}
        return [v for name, spec in declared.items() if str((spec or {}).get("Type")) == args
                for v in _strings(self.parameters[name])]

    def _live_value(self, args: Any) -> Any:
        raise _cannot_read_live("Fn::ValueOf")

    def _live_value_all(self, args: Any) -> Any:
        raise _cannot_read_live("Fn::ValueOfAll")


def _cannot_read_live(function: str) -> TemplateError:
    return TemplateError(f"The local cloud cannot evaluate {function} in a template's Rules: it reads "
                         "attributes of live AWS resources. Check the rule on AWS, or remove it for the "
                         "local cloud.")


def _strings(value: Any) -> list[str]:
    return [str(v) for v in value] if isinstance(value, list) else [str(value)]


def _rule_value(value: Any) -> Any:
    """A value as a rule's Fn::Equals compares it: booleans as their strings, a list as a list."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return value if isinstance(value, list) else str(value)


def as_text(value: Any) -> str:
    """A scalar as CloudFormation renders it in strings (booleans lower case)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return ",".join(as_text(v) for v in value)
    return str(value)


def reference_sites(node: Any) -> list[tuple[str, str | None]]:
    """(logical id, attribute or None for a Ref) of every reference inside `node`: Ref, Fn::GetAtt and
    Fn::Sub variables (`${X}` is a Ref, `${X.Attr}` a GetAtt), left symbolic."""
    sites: list[tuple[str, str | None]] = []
    todo = [node]
    while todo:
        item = todo.pop()
        if isinstance(item, list):
            todo.extend(item)
        elif isinstance(item, dict):
            if len(item) == 1 and "Ref" in item and isinstance(item["Ref"], str):
                sites.append((item["Ref"], None))
            elif len(item) == 1 and "Fn::GetAtt" in item:
                args = item["Fn::GetAtt"]
                if isinstance(args, str):
                    target, _, attribute = args.partition(".")
                else:
                    target, attribute = args[0], args[1]
                sites.append((str(target), str(attribute)))
            elif len(item) == 1 and "Fn::Sub" in item:
                args = item["Fn::Sub"]
                text = args if isinstance(args, str) else args[0]
                for variable in SUB_VARIABLE.findall(text):
                    target, _, attribute = variable.strip().partition(".")
                    sites.append((target, attribute or None))
                if isinstance(args, list) and len(args) > 1:
                    todo.append(args[1])
            else:
                todo.extend(item.values())
    return sites


def references(node: Any) -> set[str]:
    """Logical ids of resources `node` refers to (Ref, Fn::GetAtt and Fn::Sub variables), symbolically."""
    return {target for target, _ in reference_sites(node)}


def dependencies(resources: dict[str, dict[str, Any]]) -> dict[str, set[str]]:
    """The resources each resource depends on (DependsOn, Ref, Fn::GetAtt, Fn::Sub), among `resources`."""
    graph: dict[str, set[str]] = {}
    for logical, entry in resources.items():
        depends = entry.get("DependsOn") or []
        depends = [depends] if isinstance(depends, str) else depends
        graph[logical] = (set(depends) | references(entry.get("Properties"))) & set(resources)
    return graph


def parameter_references(node: Any, template: dict[str, Any]) -> set[str]:
    """Names of the template's parameters `node` reads: `Ref`, `Fn::Sub` variables, and the parameters
    of the conditions its `Fn::If`s test (a change set's ParameterReference causing entities)."""
    declared = template.get("Parameters") or {}
    conditions = template.get("Conditions") or {}
    found: set[str] = set()
    seen: set[str] = set()
    todo = [node]
    while todo:
        item = todo.pop()
        if isinstance(item, list):
            todo.extend(item)
        elif not isinstance(item, dict):
            continue
        elif len(item) == 1 and isinstance(item.get("Ref"), str):
            found.update({item["Ref"]} & set(declared))
        elif len(item) == 1 and "Fn::Sub" in item:
            args = item["Fn::Sub"]
            text = args if isinstance(args, str) else args[0]
            local = set(args[1]) if isinstance(args, list) and len(args) > 1 else set()
            found.update({v.strip() for v in SUB_VARIABLE.findall(str(text))} & set(declared) - local)
            if isinstance(args, list) and len(args) > 1:
                todo.append(args[1])
        else:
            names = []
            if len(item) == 1 and isinstance(item.get("Fn::If"), list) and item["Fn::If"]:
                names.append(item["Fn::If"][0])
            if len(item) == 1 and isinstance(item.get("Condition"), str):
                names.append(item["Condition"])
            for name in names:
                if name not in seen and name in conditions:
                    seen.add(name)
                    todo.append(conditions[name])
            todo.extend(item.values())
    return found


def imported_exports(template: Any) -> set[str]:
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
