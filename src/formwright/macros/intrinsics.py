"""Evaluating the intrinsic functions that can be known before deployment.

Parameters (with their values), pseudo parameters of the target, mappings and conditions are known
while macros run; resources, imports and availability zones are not. `resolve` returns the value or
raises `Unresolvable` naming what is missing.
"""

from __future__ import annotations

import json
import re
from typing import Any

from formwright.macros.errors import MacroFailed

_SUB_VARIABLE = re.compile(r"\$\{([^}]*)\}")
_PARTITIONS = (("cn-", "aws-cn", "amazonaws.com.cn"), ("us-gov-", "aws-us-gov", "amazonaws.com"))


class Unresolvable(Exception):
    """A value that depends on something known only at deployment."""


def partition_of(region: str) -> tuple[str, str]:
    """(partition, URL suffix) of a region."""
    for prefix, partition, suffix in _PARTITIONS:
        if region.startswith(prefix):
            return partition, suffix
    return "aws", "amazonaws.com"


class Resolver:
    """Resolves intrinsic functions against one template's parameters, mappings and conditions."""

    def __init__(
        self, template: dict, parameter_values: dict[str, Any], region: str, account_id: str
    ) -> None:
        mappings = template.get("Mappings")
        conditions = template.get("Conditions")
        self.mappings = mappings if isinstance(mappings, dict) else {}
        self.conditions = conditions if isinstance(conditions, dict) else {}
        partition, suffix = partition_of(region)
        self.values: dict[str, Any] = {
            "AWS::Region": region, "AWS::AccountId": account_id,
            "AWS::Partition": partition, "AWS::URLSuffix": suffix,
        }
        # NoEcho values stay out of the processed template (it is shown by plan, diff and build): a Ref
        # to one is left for CloudFormation to resolve at deployment.
        declared = template.get("Parameters")
        secret = {name for name, decl in (declared if isinstance(declared, dict) else {}).items()
                  if isinstance(decl, dict) and str(decl.get("NoEcho", "")).lower() == "true"}
        self.values.update({k: v for k, v in parameter_values.items() if k not in secret})
        self._evaluating: set[str] = set()

    def resolve(self, value: Any) -> Any:
        """The value with every intrinsic function evaluated."""
        if isinstance(value, list):
            return [self.resolve(item) for item in value]
        if not isinstance(value, dict):
            return value
        if len(value) == 1:
            (name, args), = value.items()
            method = _FUNCTIONS.get(name)
            if method is not None:
                return method(self, args)
            if name.startswith("Fn::") or name == "Ref":
                raise Unresolvable(f"{name} is known only at deployment")
        return {key: self.resolve(item) for key, item in value.items()}

    def ref(self, name: Any) -> Any:
        """A parameter's or pseudo parameter's value."""
        if not isinstance(name, str):
            raise MacroFailed("Ref must name a parameter or resource")
        if name in self.values:
            return self.values[name]
        raise Unresolvable(f"Ref {name} has no value here (a resource, or a parameter without a value)")

    def find_in_map(self, args: Any) -> Any:
        """Fn::FindInMap with the optional DefaultValue of the language extensions."""
        if not isinstance(args, list) or len(args) not in (3, 4):
            raise MacroFailed("Fn::FindInMap layout is incorrect",
                              hint="[MapName, TopLevelKey, SecondLevelKey, {DefaultValue: value}]")
        default: Any = None
        has_default = len(args) == 4
        if has_default:
            if not isinstance(args[3], dict) or set(args[3]) != {"DefaultValue"}:
                raise MacroFailed(
                    "Fn::FindInMap layout is incorrect", hint="the fourth item is {DefaultValue: value}"
                )
            default = args[3]["DefaultValue"]
        keys = [self.scalar(self.resolve(arg), "Fn::FindInMap") for arg in args[:3]]
        found = self.mappings.get(keys[0])
        found = found.get(keys[1]) if isinstance(found, dict) else None
        found = found.get(keys[2]) if isinstance(found, dict) else None
        if found is None:
            if has_default:
                return self.resolve(default)
            raise MacroFailed(f"Unable to get mapping for {keys[0]}::{keys[1]}::{keys[2]}",
                              hint="add the key to the mapping, or give a DefaultValue")
        return found

    def scalar(self, value: Any, where: str) -> str:
        """A string (numbers as text); anything else is a layout error."""
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            raise MacroFailed(f"{where}: expected a string, got {json.dumps(value, default=str)[:80]}")
        return str(value)

    def select(self, args: Any) -> Any:
        """Fn::Select."""
        if not isinstance(args, list) or len(args) != 2:
            raise MacroFailed("Fn::Select layout is incorrect", hint="[index, list]")
        index, items = self.resolve(args[0]), self.resolve(args[1])
        try:
            index = int(index)
        except (TypeError, ValueError):
            raise MacroFailed(f"Fn::Select index {index!r} is not a number") from None
        if not isinstance(items, list) or not 0 <= index < len(items):
            raise MacroFailed(f"Fn::Select index {index} is out of range")
        return items[index]

    def split(self, args: Any) -> Any:
        """Fn::Split."""
        if not isinstance(args, list) or len(args) != 2:
            raise MacroFailed("Fn::Split layout is incorrect", hint="[delimiter, string]")
        delimiter, text = self.resolve(args[0]), self.resolve(args[1])
        if not isinstance(delimiter, str) or not isinstance(text, str):
            raise MacroFailed("Fn::Split needs a delimiter and a string")
        return text.split(delimiter)

    def join(self, args: Any) -> Any:
        """Fn::Join."""
        if not isinstance(args, list) or len(args) != 2:
            raise MacroFailed("Fn::Join layout is incorrect", hint="[delimiter, [values]]")
        delimiter, items = self.resolve(args[0]), self.resolve(args[1])
        if not isinstance(delimiter, str) or not isinstance(items, list):
            raise MacroFailed("Fn::Join needs a delimiter and a list")
        return delimiter.join(self.scalar(item, "Fn::Join") for item in items)

    def length(self, args: Any) -> int:
        """Fn::Length: the number of items of a list."""
        items = self.resolve(args)
        if not isinstance(items, list):
            raise MacroFailed(
                "Fn::Length layout is incorrect", hint="Fn::Length takes a list or a Ref to a list parameter"
            )
        return len(items)

    def to_json_string(self, args: Any) -> str:
        """Fn::ToJsonString of a fully known object or array."""
        if not isinstance(args, (dict, list)):
            raise MacroFailed("Fn::ToJsonString layout is incorrect", hint="it takes an object or an array")
        return json.dumps(self.resolve(args), separators=(",", ":"), ensure_ascii=False)

    def sub(self, args: Any) -> str:
        """Fn::Sub where every variable is known."""
        if isinstance(args, str):
            text, variables = args, {}
        elif (
            isinstance(args, list)
            and len(args) == 2
            and isinstance(args[0], str)
            and isinstance(args[1], dict)
        ):
            text, variables = args[0], args[1]
        else:
            raise MacroFailed("Fn::Sub layout is incorrect", hint="a string, or [string, {Var: value}]")

        def replace(match: re.Match) -> str:
            name = match.group(1)
            if name.startswith("!"):
                return "${" + name[1:] + "}"
            if name in variables:
                return self.scalar(self.resolve(variables[name]), "Fn::Sub")
            if "." in name:
                raise Unresolvable(f"${{{name}}} is known only at deployment")
            return self.scalar(self.ref(name), "Fn::Sub")

        return _SUB_VARIABLE.sub(replace, text)

    def if_(self, args: Any) -> Any:
        """Fn::If on a condition of the template."""
        if not isinstance(args, list) or len(args) != 3 or not isinstance(args[0], str):
            raise MacroFailed(
                "Fn::If layout is incorrect", hint="[ConditionName, value if true, value if false]"
            )
        return self.resolve(args[1] if self.condition(args[0]) else args[2])

    def condition(self, name: Any) -> bool:
        """The truth of a named condition."""
        if not isinstance(name, str) or name not in self.conditions:
            raise MacroFailed(f"Condition {name} is not defined in Conditions")
        if name in self._evaluating:
            raise MacroFailed(f"Condition {name} refers to itself")
        self._evaluating.add(name)
        try:
            return self.truth(self.conditions[name])
        finally:
            self._evaluating.discard(name)

    def truth(self, value: Any) -> bool:
        """A condition function's truth."""
        result = self.resolve(value)
        if isinstance(result, str) and result.lower() in ("true", "false"):
            return result.lower() == "true"
        if not isinstance(result, bool):
            raise MacroFailed("a condition must be a condition function")
        return result

    def equals(self, args: Any) -> bool:
        """Fn::Equals."""
        if not isinstance(args, list) or len(args) != 2:
            raise MacroFailed("Fn::Equals layout is incorrect", hint="[value, value]")
        left, right = (self.resolve(arg) for arg in args)
        return _text(left) == _text(right)

    def and_(self, args: Any) -> bool:
        """Fn::And."""
        return all(self.truth(arg) for arg in _condition_list(args, "Fn::And"))

    def or_(self, args: Any) -> bool:
        """Fn::Or."""
        return any(self.truth(arg) for arg in _condition_list(args, "Fn::Or"))

    def not_(self, args: Any) -> bool:
        """Fn::Not."""
        if not isinstance(args, list) or len(args) != 1:
            raise MacroFailed("Fn::Not layout is incorrect", hint="[condition]")
        return not self.truth(args[0])


def _text(value: Any) -> Any:
    return (
        str(value).lower()
        if isinstance(value, bool)
        else str(value)
        if isinstance(value, (int, float))
        else value
    )


def _condition_list(args: Any, name: str) -> list:
    if not isinstance(args, list) or not 2 <= len(args) <= 10:
        raise MacroFailed(f"{name} layout is incorrect", hint="a list of 2 to 10 conditions")
    return args


_FUNCTIONS = {
    "Ref": Resolver.ref,
    "Fn::FindInMap": Resolver.find_in_map,
    "Fn::Select": Resolver.select,
    "Fn::Split": Resolver.split,
    "Fn::Join": Resolver.join,
    "Fn::Length": Resolver.length,
    "Fn::ToJsonString": Resolver.to_json_string,
    "Fn::Sub": Resolver.sub,
    "Fn::If": Resolver.if_,
    "Fn::Equals": Resolver.equals,
    "Fn::And": Resolver.and_,
    "Fn::Or": Resolver.or_,
    "Fn::Not": Resolver.not_,
    "Condition": Resolver.condition,
}
