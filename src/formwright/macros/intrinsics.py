"""Evaluating the intrinsic functions that can be known before deployment.

Parameters (with their values), pseudo parameters of the target, mappings and conditions are known
while macros run; resources, imports and availability zones are not. `resolve` returns the value or
raises `Unresolvable` naming what is missing.
"""

from __future__ import annotations

import base64
import json
import re
from typing import Any

from formwright.macros.conditions import Conditions
from formwright.macros.errors import MacroFailed, Unresolvable

_SUB_VARIABLE = re.compile(r"\$\{([^}]*)\}")


class _NoValue:
    """`Ref: AWS::NoValue` once evaluated: the key or list item holding it is removed."""

    def __repr__(self) -> str:
        return "AWS::NoValue"


NO_VALUE: Any = _NoValue()
#: Pseudo parameters known only once the stack exists (or given by the API call that makes it).
_DEPLOY_TIME_PSEUDO = ("AWS::StackName", "AWS::StackId", "AWS::NotificationARNs")
#: Condition functions: Fn::ToJsonString refuses them (AWS's processor checks before resolving).
_CONDITION_FUNCTIONS = ("Fn::And", "Fn::Or", "Fn::Not", "Fn::Equals")


def partition_of(region: str) -> tuple[str, str]:
    """(AWS::Partition, AWS::URLSuffix) of a region, from botocore's partition data."""
    from formwright.cloud.regions import partition_of as partition_record

    record = partition_record(region)
    if record is None:
        return "aws", "amazonaws.com"
    return str(record["id"]), str(record["outputs"]["dnsSuffix"])


class Resolver(Conditions):
    """Resolves intrinsic functions against one template's parameters, mappings and conditions."""

    def __init__(
        self, template: dict, parameter_values: dict[str, Any], region: str, account_id: str
    ) -> None:
        super().__init__(template)
        mappings = template.get("Mappings")
        self.mappings = mappings if isinstance(mappings, dict) else {}
        partition, suffix = partition_of(region)
        self.values: dict[str, Any] = {
            "AWS::Region": region,
            "AWS::AccountId": account_id,
            "AWS::Partition": partition,
            "AWS::URLSuffix": suffix,
        }
        # NoEcho values stay out of the processed template (it is shown by plan, diff and build): a Ref
        # to one is left for CloudFormation to resolve at deployment.
        declared = template.get("Parameters")
        secret = {
            name
            for name, decl in (declared if isinstance(declared, dict) else {}).items()
            if isinstance(decl, dict) and str(decl.get("NoEcho", "")).lower() == "true"
        }
        self.values.update({k: v for k, v in parameter_values.items() if k not in secret})
        self.parameter_names = set(declared) if isinstance(declared, dict) else set()

    def resolve(self, value: Any) -> Any:
        """The value with every intrinsic function evaluated."""
        if isinstance(value, list):
            items = [self.resolve(item) for item in value]
            return [item for item in items if item is not NO_VALUE]
        if not isinstance(value, dict):
            return value
        if len(value) == 1:
            ((name, args),) = value.items()
            method = _FUNCTIONS.get(name)
            if method is not None:
                return method(self, args)
            if name.startswith("Fn::") or name == "Ref":
                raise Unresolvable(f"{name} is known only at deployment")
        resolved = {key: self.resolve(item) for key, item in value.items()}
        return {key: item for key, item in resolved.items() if item is not NO_VALUE}

    def partial(self, value: Any, refs: bool = False) -> Any:
        """The value with every function that can be known now evaluated, the others kept as written
        (their arguments evaluated as far as they can be). `AWS::NoValue` removes its key or item.

        A bare `Ref` to a parameter stays a Ref unless `refs` (CloudFormation resolves it at deployment
        to the same value); everything else known is evaluated as AWS's transform does: its expected
        outputs have `Fn::Sub` of known values as plain strings and `Fn::If` on a known condition decided.
        Returns the very object when nothing in it changed.
        """
        if isinstance(value, list):
            items: list | None = None
            for index, item in enumerate(value):
                if isinstance(item, (dict, list)):  # scalars never change: no call for them
                    new = self.partial(item, refs)
                    if new is not item:
                        if items is None:
                            items = list(value)
                        items[index] = new
            return value if items is None else [item for item in items if item is not NO_VALUE]
        if not isinstance(value, dict):
            return value
        if len(value) == 1:
            ((name, args),) = value.items()
            if name == "Ref":
                return self._partial_ref(value, args, refs)
            if name == "Fn::If":
                return self._partial_if(value, args, refs)
            if name == "Fn::FindInMap":
                return self._partial_find_in_map(value, args, refs)
            if name == "Fn::ToJsonString":
                return self.to_json_text(args)
            if name in _CONDITION_FUNCTIONS:
                return self._kept(value, name, args, refs)  # valid in Conditions only: left for checks
            if name in _FUNCTIONS and name != "Condition":
                try:
                    return self.resolve(value)
                except Unresolvable as err:
                    if name == "Fn::Length":  # CloudFormation has no Fn::Length after the transform
                        raise MacroFailed(
                            f"Fn::Length could not be resolved: {err}",
                            hint="its list must be known before deployment",
                        ) from None
                    return self._kept(value, name, args, refs)
            if name.startswith("Fn::"):
                return self._kept(value, name, args, refs)
        changed: dict | None = None
        for key, item in value.items():
            if not isinstance(item, (dict, list)):
                continue
            new = self.partial(item, refs)
            if new is not item:
                if changed is None:
                    changed = dict(value)
                if new is NO_VALUE:
                    del changed[key]
                else:
                    changed[key] = new
        return value if changed is None else changed

    def _kept(self, value: dict, name: str, args: Any, refs: bool) -> Any:
        """A function left for deployment, with its arguments evaluated as far as they can be."""
        new = self.partial(args, refs)
        return value if new is args else {name: new}

    def _partial_ref(self, value: dict, target: Any, refs: bool) -> Any:
        if isinstance(target, dict):  # Ref of a function: it must give a name
            try:
                target = self.resolve(target)
            except Unresolvable:
                return value
            if not isinstance(target, str):
                raise MacroFailed(
                    "Ref layout is incorrect", hint="Ref takes the name of a parameter or resource"
                )
            value = {"Ref": target}
        if not isinstance(target, str):
            raise MacroFailed("Ref layout is incorrect", hint="Ref takes the name of a parameter or resource")
        if target == "AWS::NoValue":
            return NO_VALUE
        if refs and target in self.values:
            return self.values[target]
        return value

    def _partial_if(self, value: dict, args: Any, refs: bool) -> Any:
        if not isinstance(args, list) or len(args) != 3 or not isinstance(args[0], str):
            raise MacroFailed(
                "Fn::If layout is incorrect", hint="[ConditionName, value if true, value if false]"
            )
        truth = self.known_condition(args[0])
        if truth is None:
            return self._kept(value, "Fn::If", args, refs)
        return self.partial(args[1] if truth else args[2], refs)

    def _partial_find_in_map(self, value: dict, args: Any, refs: bool) -> Any:
        """Keys known: the mapped value, else the DefaultValue (as written, evaluated where it can be)."""
        try:
            return self.find_in_map(args)
        except Unresolvable:
            pass
        if isinstance(args, list) and len(args) == 4:
            try:
                keys = [self.scalar(self.resolve(arg), "Fn::FindInMap") for arg in args[:3]]
            except Unresolvable:
                return self._kept(value, "Fn::FindInMap", args, refs)
            if self._lookup(keys) is None:
                return self.partial(args[3]["DefaultValue"], refs)
        return self._kept(value, "Fn::FindInMap", args, refs)

    def ref(self, name: Any) -> Any:
        """A parameter's or pseudo parameter's value."""
        if isinstance(name, dict):
            name = self.resolve(name)
        if not isinstance(name, str):
            raise MacroFailed("Ref layout is incorrect", hint="Ref takes the name of a parameter or resource")
        if name == "AWS::NoValue":
            return NO_VALUE
        if name in self.values:
            return self.values[name]
        if self._in_condition and name not in self.parameter_names and name not in _DEPLOY_TIME_PSEUDO:
            # CloudFormation: conditions can reference parameters and pseudo parameters only.
            raise MacroFailed(
                f"Unresolved dependency {name}: a condition can only Ref a parameter",
                hint="use `Condition: Name` to refer to another condition",
            )
        raise Unresolvable(f"Ref {name} has no value here (a resource, or a parameter without a value)")

    def find_in_map(self, args: Any) -> Any:
        """Fn::FindInMap with the optional DefaultValue of the language extensions."""
        if not isinstance(args, list) or len(args) not in (3, 4):
            raise MacroFailed(
                "Fn::FindInMap layout is incorrect",
                hint="[MapName, TopLevelKey, SecondLevelKey, {DefaultValue: value}]",
            )
        default: Any = None
        has_default = len(args) == 4
        if has_default:
            if not isinstance(args[3], dict) or set(args[3]) != {"DefaultValue"}:
                raise MacroFailed(
                    "Fn::FindInMap layout is incorrect", hint="the fourth item is {DefaultValue: value}"
                )
            default = args[3]["DefaultValue"]
        for arg in args[:3]:
            self._check_map_key(arg)
        keys = [self.scalar(self.resolve(arg), "Fn::FindInMap") for arg in args[:3]]
        found = self._lookup(keys)
        if found is None:
            if has_default:
                return self.resolve(default)
            raise MacroFailed(
                f"Unable to get mapping for {keys[0]}::{keys[1]}::{keys[2]}",
                hint="add the key to the mapping, or give a DefaultValue",
            )
        return self.resolve(found)

    def _check_map_key(self, arg: Any) -> None:
        """A key given by Fn::GetAtt or a Ref to a resource can never be looked up: AWS refuses them
        (fnFindInMapWithUnsupportedFunctionFnGetAtt / FnRef), while other functions wait for deployment."""
        if not isinstance(arg, dict) or len(arg) != 1:
            return
        ((name, target),) = arg.items()
        if name == "Fn::GetAtt" or (
            name == "Ref"
            and isinstance(target, str)
            and target not in self.values
            and target not in self.parameter_names
            and not target.startswith("AWS::")
        ):
            raise MacroFailed(
                f"Fn::FindInMap does not support {name} to a resource in its keys",
                hint="a key must be a string, a Ref to a parameter or another Fn::FindInMap",
            )

    def _lookup(self, keys: list[str]) -> Any:
        found: Any = self.mappings
        for key in keys:
            found = found.get(key) if isinstance(found, dict) else None
        return found

    def scalar(self, value: Any, where: str) -> str:
        """A string (numbers and booleans as text); anything else is a layout error."""
        if isinstance(value, bool):
            return "true" if value else "false"
        if not isinstance(value, (str, int, float)):
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
        delimiter = self.resolve(args[0])
        if not isinstance(delimiter, str) or not delimiter:
            # AWS's processor and CloudFormation refuse an empty delimiter (Python's split would raise).
            raise MacroFailed(
                "Fn::Split layout is incorrect", hint="the delimiter must be a non-empty string"
            )
        text = self.resolve(args[1])
        if not isinstance(text, str):
            raise MacroFailed("Fn::Split layout is incorrect", hint="[delimiter, string]")
        return text.split(delimiter)

    def base64(self, args: Any) -> str:
        """Fn::Base64 of a known string (AWS's transform resolves it: harness test_base64_encoding)."""
        text = self.resolve(args)
        if not isinstance(text, str):
            raise MacroFailed("Fn::Base64 layout is incorrect", hint="it takes a string")
        return base64.b64encode(text.encode("utf-8")).decode("ascii")

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
        items = self.partial(args, refs=True)
        if isinstance(items, dict) and len(items) == 1 and next(iter(items)).startswith(("Fn::", "Ref")):
            raise Unresolvable(f"{next(iter(items))} is known only at deployment")
        if not isinstance(items, list):
            raise MacroFailed(
                "Fn::Length layout is incorrect", hint="Fn::Length takes a list or a Ref to a list parameter"
            )
        return len(items)

    def to_json_string(self, args: Any) -> str:
        """Fn::ToJsonString of a fully known object or array."""
        text = self.to_json_text(args)
        if not isinstance(text, str):
            raise Unresolvable("Fn::ToJsonString holds values known only at deployment")
        return text

    def to_json_text(self, args: Any) -> Any:
        """Fn::ToJsonString: the JSON text; values known only at deployment are spliced in with Fn::Join.

        Like AWS's processor it refuses condition functions and AWS::NotificationARNs inside (checked
        before anything is resolved) and an Fn::Split it cannot resolve (a list has no JSON text).
        """
        if not isinstance(args, (dict, list)):
            raise MacroFailed("Fn::ToJsonString layout is incorrect", hint="it takes an object or an array")
        _check_json_string_args(args)
        known = self.partial(args, refs=True)
        holes: list[Any] = []

        def mark(node: Any) -> Any:
            if isinstance(node, dict):
                if len(node) == 1 and next(iter(node)).startswith(("Fn::", "Ref")):
                    if next(iter(node)) == "Fn::Split":
                        raise MacroFailed(
                            "Unable to resolve Fn::Split intrinsic function",
                            hint="Fn::ToJsonString needs every Fn::Split known before deployment",
                        )
                    holes.append(node)
                    return f"\x00{len(holes) - 1}\x00"
                return {k: mark(v) for k, v in node.items()}
            if isinstance(node, list):
                return [mark(v) for v in node]
            return node

        text = json.dumps(mark(known), separators=(",", ":"), ensure_ascii=False)
        if not holes:
            return text
        parts: list[Any] = []
        for index, piece in enumerate(re.split(r"\\u0000(\d+)\\u0000", text)):
            if index % 2:
                parts.append(holes[int(piece)])
            elif piece:
                parts.append(piece)
        return {"Fn::Join": ["", parts]}

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
            if any(value is None for value in variables.values()):
                raise MacroFailed("Fn::Sub layout is incorrect", hint="a variable's value can't be null")
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


_FUNCTIONS = {
    "Ref": Resolver.ref,
    "Fn::FindInMap": Resolver.find_in_map,
    "Fn::Select": Resolver.select,
    "Fn::Split": Resolver.split,
    "Fn::Base64": Resolver.base64,
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


def _check_json_string_args(node: Any) -> None:
    """Refuse what AWS's processor refuses inside Fn::ToJsonString before resolving anything."""
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if len(item) == 1:
                ((name, args),) = item.items()
                if name in _CONDITION_FUNCTIONS:
                    raise MacroFailed(
                        f"Fn::ToJsonString does not support {name} intrinsic function",
                        hint="condition functions belong in Conditions; use Fn::If here",
                    )
                if name == "Ref" and args == "AWS::NotificationARNs":
                    raise MacroFailed(
                        "Fn::ToJsonString does not support AWS::NotificationARNs pseudo parameter"
                    )
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
