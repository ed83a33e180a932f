"""A template's `Rules` section, evaluated against the parameter values before anything is made (AWS
CloudFormation User Guide, "Rules template section syntax": rules "validate parameter values before
CloudFormation creates or updates any resources"; "Rule functions": a rule whose RuleCondition is false is
skipped, and an Assert that is false refuses the stack operation with its AssertDescription).
"""

from __future__ import annotations

from typing import Any

# The rule functions the local cloud cannot answer: they read attributes of live AWS resources.
_NOT_EVALUATED = ("Fn::ValueOf", "Fn::ValueOfAll")


class RuleError(Exception):
    """A rule's assertion is false, or a rule the local cloud cannot evaluate (the message says which)."""


def check_rules(template: dict[str, Any], values: dict[str, Any], pseudo: dict[str, Any]) -> None:
    """Raise RuleError for the first rule whose condition holds and one of whose assertions is false."""
    declared = template.get("Parameters") or {}
    for name, rule in (template.get("Rules") or {}).items():
        rule = rule or {}
        condition = rule.get("RuleCondition", True)
        if not _true(_eval(condition, values, pseudo, declared), name):
            continue
        for assertion in rule.get("Assertions") or []:
            if not _true(_eval(assertion.get("Assert"), values, pseudo, declared), name):
                # not verified on AWS: the text CloudFormation gives an assertion without a description
                raise RuleError(assertion.get("AssertDescription") or f"Template rule [{name}] failed")


def _true(value: Any, rule: str) -> bool:
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    raise RuleError(f"Template error: rule [{rule}] does not evaluate to a boolean")


def _list(value: Any) -> list[str]:
    return [str(v) for v in value] if isinstance(value, list) else [str(value)]


def _eval(node: Any, values: dict[str, Any], pseudo: dict[str, Any], declared: dict[str, Any]) -> Any:
    """The value of a rule expression: a string, a list of strings or a boolean."""
    if isinstance(node, list):
        return [_eval(n, values, pseudo, declared) for n in node]
    if not isinstance(node, dict) or len(node) != 1:
        return node
    (fn, arg), = node.items()
    if fn == "Ref":
        if arg in values:
            return values[arg]
        if arg in pseudo:
            return pseudo[arg]
        raise RuleError(f"Template error: rule references undefined parameter [{arg}]")
    if fn in _NOT_EVALUATED:
        raise RuleError(f"The local cloud cannot evaluate {fn} in a template's Rules: it reads attributes of "
                        f"live AWS resources. Check the rule on AWS, or remove it for the local cloud.")
    if fn == "Fn::RefAll":  # the values of every parameter of that type
        return [v for n, d in declared.items() if str((d or {}).get("Type")) == arg for v in _list(values[n])]
    args = _eval(arg, values, pseudo, declared)
    if fn == "Fn::Not":
        return not _true(args[0], "Fn::Not")
    if fn == "Fn::And":
        return all(_true(a, "Fn::And") for a in args)
    if fn == "Fn::Or":
        return any(_true(a, "Fn::Or") for a in args)
    if fn == "Fn::Equals":
        return _plain(args[0]) == _plain(args[1])
    if fn == "Fn::If":
        return args[1] if _true(args[0], "Fn::If") else args[2]
    if fn == "Fn::Contains":  # [list_of_strings, string]
        return str(args[1]) in _list(args[0])
    if fn == "Fn::EachMemberEquals":  # [list_of_strings, string]
        return all(v == str(args[1]) for v in _list(args[0]))
    if fn == "Fn::EachMemberIn":  # [strings_to_check, strings_to_match]
        return set(_list(args[0])) <= set(_list(args[1]))
    return node


def _plain(value: Any) -> Any:
    """Equals compares values as CloudFormation writes them: booleans as their strings."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return value if isinstance(value, list) else str(value)
