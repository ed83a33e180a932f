"""Choosing input values: given `--input K=V` strings, typed and checked against constraints.

Every required input without a value and without a default is reported together, once.
"""

from __future__ import annotations

from typing import Any

from formwright.errors import InputError
from formwright.tosca.model import Input

_TRUE = {"true", "yes", "1", "on"}
_FALSE = {"false", "no", "0", "off"}


def parse_assignments(pairs: list[str]) -> dict[str, str]:
    """`["K=V", …]` as a dict; a pair without `=` is an error naming it."""
    out: dict[str, str] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise InputError(f"--input '{pair}' must be KEY=VALUE")
        out[key.strip()] = value
    return out


def convert(item: Input, value: Any) -> Any:
    """`value` converted to the input's TOSCA type (strings from the command line become numbers …)."""
    if not isinstance(value, str):
        return value
    try:
        if item.type == "integer":
            return int(value)
        if item.type == "float":
            return float(value)
        if item.type == "boolean":
            lowered = value.lower()
            if lowered in _TRUE | _FALSE:
                return lowered in _TRUE
            raise ValueError(value)
    except ValueError:
        raise InputError(f"input '{item.name}' must be a {item.type}, got '{value}'",
                         file=item.location.file if item.location else None,
                         line=item.location.line if item.location else None) from None
    return value


def _check_constraints(item: Input, value: Any) -> None:
    from toscaparser.elements.constraints import Constraint

    for raw in item.constraints:
        if not isinstance(raw, dict) or len(raw) != 1:
            continue
        ((name, expected),) = raw.items()
        try:
            Constraint(item.name, item.type, {name: expected}).validate(value)
        except Exception as err:  # noqa: BLE001 - tosca-parser's ValidationError and friends
            message = getattr(err, "message", None) or str(err)
            raise InputError(f"input '{item.name}': {message}",
                             file=item.location.file if item.location else None,
                             line=item.location.line if item.location else None) from None


def assign_inputs(inputs: dict[str, Input], given: dict[str, Any], file: str) -> None:
    """Set each input's value (given, else its default); fail once listing every missing required input."""
    unknown = sorted(set(given) - set(inputs))
    if unknown:
        raise InputError(f"unknown input{'s' if len(unknown) > 1 else ''}: {', '.join(unknown)}", file=file,
                         hint=f"declared inputs: {', '.join(sorted(inputs)) or 'none'}")
    missing = []
    for item in inputs.values():
        if item.name in given:
            item.value = convert(item, given[item.name])
        elif item.default is not None:
            item.value = item.default
        elif item.required:
            missing.append(item.name)
            continue
        if item.value is not None:
            _check_constraints(item, item.value)
    if missing:
        raise InputError(f"missing required input{'s' if len(missing) > 1 else ''}: {', '.join(missing)}",
                         file=file, hint="pass each with --input NAME=VALUE")
