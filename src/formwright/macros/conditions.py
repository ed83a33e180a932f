"""Conditions known before deployment: named conditions of a template's `Conditions` and the condition
functions (Fn::Equals, Fn::And, Fn::Or, Fn::Not), for the Resolver of intrinsics.py.

A condition that depends on a value known only at deployment is undecided (None), not an error; an
undefined name or a cycle is an error of the template, as CloudFormation refuses them.
"""

from __future__ import annotations

from typing import Any

from formwright.macros.errors import MacroFailed, Unresolvable


class Conditions:
    """The conditions of one template, each decided once; `resolve` is the Resolver's."""

    def __init__(self, template: dict) -> None:
        conditions = template.get("Conditions")
        self.conditions = conditions if isinstance(conditions, dict) else {}
        self._evaluating: set[str] = set()
        self._truths: dict[str, bool | None] = {}
        #: True while a condition is evaluated: there a Ref must name a parameter or pseudo parameter.
        self._in_condition = False

    def resolve(self, value: Any) -> Any:
        """The value with every intrinsic function evaluated (the Resolver's)."""
        raise NotImplementedError

    def condition(self, name: Any) -> bool:
        """The truth of a named condition; Unresolvable when it depends on values not known here."""
        truth = self.known_condition(name)
        if truth is None:
            raise Unresolvable(f"Condition {name} depends on values known only at deployment")
        return truth

    def known_condition(self, name: Any) -> bool | None:
        """The truth of a named condition, or None when it can't be known before deployment.

        Undefined names and cycles are errors of the template (CloudFormation refuses them).
        """
        if not isinstance(name, str) or name not in self.conditions:
            raise MacroFailed(
                f"Condition {name} is not defined in Conditions", hint="define it in the Conditions section"
            )
        if name in self._truths:
            return self._truths[name]
        if name in self._evaluating:
            raise MacroFailed(
                f"Circular dependency between conditions: {name} refers to itself",
                hint="a condition can't depend on itself, directly or through others",
            )
        self._evaluating.add(name)
        outer, self._in_condition = self._in_condition, True
        try:
            truth: bool | None = self.truth(self.conditions[name])
        except Unresolvable:
            truth = None
        finally:
            self._evaluating.discard(name)
            self._in_condition = outer
        self._truths[name] = truth
        return truth

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
        if _is_plain_mapping(left) or _is_plain_mapping(right):
            # AWS's transform refuses it (its suite's templateWithInvalidIntrinsicFunctionType)
            raise MacroFailed(
                "Intrinsic function input type is invalid: Fn::Equals compares a mapping",
                hint="compare strings, numbers or booleans",
            )
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


def _is_plain_mapping(value: Any) -> bool:
    """A mapping that is not a function call (`{"Ref": ...}`, `{"Fn::...": ...}`, `{"Condition": ...}`)."""
    if not isinstance(value, dict):
        return False
    if len(value) == 1:
        key = next(iter(value))
        return not (key in ("Ref", "Condition") or (isinstance(key, str) and key.startswith("Fn::")))
    return True


def _condition_list(args: Any, name: str) -> list:
    if not isinstance(args, list) or not 2 <= len(args) <= 10:
        raise MacroFailed(f"{name} layout is incorrect", hint="a list of 2 to 10 conditions")
    return args
