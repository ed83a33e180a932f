"""A template's `Rules` section, evaluated against the parameter values before anything is made (AWS
CloudFormation User Guide, "Rules template section syntax": rules "validate parameter values before
CloudFormation creates or updates any resources"; "Rule functions": a rule whose RuleCondition is false is
skipped, and an Assert that is false refuses the stack operation with its AssertDescription).

The rule functions themselves are evaluated by resolve.RuleResolver, beside the Conditions section's.
"""

from __future__ import annotations

from typing import Any

from .resolve import NotBoolean, RuleResolver, TemplateError


class RuleError(Exception):
    """A rule's assertion is false, or a rule the local cloud cannot evaluate (the message says which)."""


def check_rules(template: dict[str, Any], values: dict[str, Any], pseudo: dict[str, Any]) -> None:
    """Raise RuleError for the first rule whose condition holds and one of whose assertions is false."""
    resolver = RuleResolver(template, values, pseudo)
    for name, rule in (template.get("Rules") or {}).items():
        rule = rule or {}
        if not _holds(resolver, rule.get("RuleCondition", True), name):
            continue
        for assertion in rule.get("Assertions") or []:
            if not _holds(resolver, assertion.get("Assert"), name):
                # not verified on AWS: the text CloudFormation gives an assertion without a description
                raise RuleError(assertion.get("AssertDescription") or f"Template rule [{name}] failed")


def _holds(resolver: RuleResolver, node: Any, rule: str) -> bool:
    try:
        return resolver.truth(node)
    except NotBoolean:
        raise RuleError(f"Template error: rule [{rule}] does not evaluate to a boolean") from None
    except TemplateError as err:
        raise RuleError(str(err)) from None
