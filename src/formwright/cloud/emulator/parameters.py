"""Template parameters: values given, defaults, types and constraints, checked as CloudFormation does.

Error texts are CloudFormation's ValidationError messages for CreateChangeSet / CreateStack
(AWS CloudFormation User Guide, "Parameters" section of the template reference).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any


class ParameterError(Exception):
    """A parameter value CloudFormation refuses; the message is CloudFormation's."""


def _number(name: str, text: str) -> int | float:
    try:
        return int(text)
    except ValueError:
        try:
            return float(text)
        except ValueError:
            raise ParameterError(f"Parameter '{name}' must be a number.") from None


def _check(name: str, decl: dict[str, Any], text: str) -> None:
    """Raise for a value that breaks the declaration's constraints.

    With a ConstraintDescription, any broken constraint reads "Parameter NAME failed to satisfy
    constraint: DESCRIPTION" (as CreateChangeSet answers: the wording users report from real stacks,
    e.g. "Parameter EnvironmentSuffix failed to satisfy constraint: Must be one of: dev, staging, prod").
    """
    broken = _broken(name, decl, text)
    if broken is None:
        return
    description = decl.get("ConstraintDescription")
    if description:
        raise ParameterError(f"Parameter {name} failed to satisfy constraint: {description}")
    raise ParameterError(broken)


def _broken(name: str, decl: dict[str, Any], text: str) -> str | None:
    """CloudFormation's own message for the first constraint the value breaks, or None."""
    kind = str(decl.get("Type", "String"))
    items = text.split(",") if kind == "CommaDelimitedList" or kind.startswith("List<") else [text]
    allowed = decl.get("AllowedValues")
    pattern = decl.get("AllowedPattern")
    for item in items:
        if allowed is not None and item not in [_scalar(a) for a in allowed]:  # [true, false] as text
            return f"Parameter '{name}' must be one of AllowedValues"
        if pattern is not None and not re.fullmatch(str(pattern), item):
            return f"Parameter '{name}' must match pattern {pattern}"
        if kind in ("Number", "List<Number>"):
            number = _number(name, item)
            if "MinValue" in decl and number < float(decl["MinValue"]):
                return f"Parameter '{name}' must be a number not less than {decl['MinValue']}"
            if "MaxValue" in decl and number > float(decl["MaxValue"]):
                return f"Parameter '{name}' must be a number not greater than {decl['MaxValue']}"
    if "MinLength" in decl and len(text) < int(decl["MinLength"]):
        return f"Parameter '{name}' must contain at least {decl['MinLength']} characters"
    if "MaxLength" in decl and len(text) > int(decl["MaxLength"]):
        return f"Parameter '{name}' must contain at most {decl['MaxLength']} characters"
    return None


def resolve_parameters(template: dict[str, Any], given: dict[str, str],
                       ssm: Callable[[str], str] | None = None) -> tuple[dict[str, Any], dict[str, str]]:
    """(values as the template sees them, values as DescribeStacks echoes them); raises ParameterError."""
    declared = template.get("Parameters") or {}
    unknown = sorted(set(given) - set(declared))
    if unknown:
        raise ParameterError(f"Parameters: [{', '.join(unknown)}] do not exist in the template")
    missing = sorted(n for n, d in declared.items() if n not in given and "Default" not in (d or {}))
    if missing:
        raise ParameterError(f"Parameters: [{', '.join(missing)}] must have values")
    values: dict[str, Any] = {}
    echoed: dict[str, str] = {}
    for name, decl in declared.items():
        decl = decl or {}
        raw = given[name] if name in given else decl["Default"]
        text = ",".join(str(v) for v in raw) if isinstance(raw, list) else _scalar(raw)
        _check(name, decl, text)
        kind = str(decl.get("Type", "String"))
        echoed[name] = "****" if str(decl.get("NoEcho", "")).lower() == "true" else text
        if kind.startswith("AWS::SSM::Parameter::Value<") and ssm is not None:
            text = ssm(text)
            kind = "CommaDelimitedList" if "List<" in kind else "String"
        if kind == "CommaDelimitedList" or kind.startswith("List<"):
            values[name] = [v.strip() for v in text.split(",")] if text else []
        else:
            values[name] = text
    return values, echoed


def _scalar(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
