"""Input values of an instance: their definitions, type conversion and checks, `--input k=v` pairs.

A `validation` pattern of a manifest runs in a child process with a time bound: a pattern written to
backtrack for ever (ReDoS) cannot hang an operation.
"""

from __future__ import annotations

import difflib
import json
import math
import subprocess
import sys
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from formwright.errors import InputError

PATTERN_TIMEOUT = 2.0
KINDS = {"number": "finite number"}  # NaN and infinities are refused


@dataclass
class InputDef:
    """One input of the deployment."""

    name: str
    type: str = "string"
    title: str = ""
    required: bool = False
    secure: bool = False
    default: Any = None
    validation: str | None = None
    values: list[Any] | None = None
    line: int | None = None

    def to_json(self) -> dict[str, Any]:
        """The definition as plain data (a secure default is never included)."""
        return {"name": self.name, "type": self.type, "title": self.title, "required": self.required,
                "secure": self.secure, "default": None if self.secure else self.default,
                "validation": self.validation, "values": self.values}


def close_hint(word: str, choices: list[str]) -> str:
    """`did you mean 'x'?`, or the known choices."""
    close = difflib.get_close_matches(word, choices, n=1)
    return f"did you mean '{close[0]}'?" if close else f"known: {', '.join(sorted(choices))}"


_MATCHER = "import json, re, sys\np, v = json.load(sys.stdin)\nsys.exit(0 if re.fullmatch(p, v) else 1)\n"


@lru_cache(maxsize=256)
def pattern_matches(pattern: str, value: str) -> bool | None:
    """Whether `value` matches `pattern` in full; None when it takes over PATTERN_TIMEOUT seconds.

    Python's `re` cannot be interrupted, so the match runs in a child process that is killed on time.
    """
    try:
        done = subprocess.run([sys.executable, "-I", "-c", _MATCHER], input=json.dumps([pattern, value]),
                              text=True, capture_output=True, timeout=PATTERN_TIMEOUT, check=False)
    except subprocess.TimeoutExpired:
        return None
    return done.returncode == 0


def check_input_value(definition: InputDef, value: Any, file: str | None = None) -> Any:
    """The value converted to the input's type, checked against its regex and allowed values."""
    shown = "****" if definition.secure else repr(value)
    where = {"file": file, "line": definition.line} if file else {"where": f"input '{definition.name}'"}
    try:
        if definition.type == "number":
            converted: Any = float(value)
            if not math.isfinite(converted):
                raise ValueError(value)
        elif definition.type == "integer":
            converted = int(value)
        elif definition.type == "boolean":
            if isinstance(value, bool):
                converted = value
            elif str(value).lower() in ("true", "yes", "1", "false", "no", "0"):
                converted = str(value).lower() in ("true", "yes", "1")
            else:
                raise ValueError(value)
        else:
            converted = value if isinstance(value, str) else str(value)
    except (TypeError, ValueError):
        raise InputError(
            f"input '{definition.name}' must be a {KINDS.get(definition.type, definition.type)}, got {shown}",
            **where
        ) from None
    if definition.validation:
        matched = pattern_matches(definition.validation, str(value))
        if matched is None:
            raise InputError(f"the `validation` pattern of input '{definition.name}' ran over "
                             f"{PATTERN_TIMEOUT:g} s on {shown}", **where,
                             hint="simplify the pattern: nested repetition like (a+)+ backtracks for ever")
        if not matched:
            raise InputError(
                f"input '{definition.name}' does not match {definition.validation}: {shown}", **where
            )
    if definition.values is not None and converted not in definition.values and str(value) not in \
            [str(v) for v in definition.values]:
        raise InputError(
            f"input '{definition.name}' must be one of {definition.values}, got {shown}", **where
        )
    return converted


def resolve_inputs(
    definitions: dict[str, InputDef],
    given: dict[str, str],
    *,
    previous: dict[str, Any] | None = None,
    file: str | None = None,
) -> dict[str, Any]:
    """Given values over previous ones over defaults, typed and checked;
    unknown or missing ones are errors."""
    for name in given:
        if name not in definitions:
            raise InputError(
                f"unknown input '{name}'",
                file=file,
                hint=close_hint(name, list(definitions)) if definitions else "the project has no inputs",
            )
    values: dict[str, Any] = {}
    for name, definition in definitions.items():
        if name in given:
            values[name] = check_input_value(definition, given[name])
        elif previous is not None and name in previous:
            values[name] = previous[name]
        elif definition.default is not None:
            values[name] = definition.default
        elif definition.required:
            raise InputError(f"input '{name}' is required", file=file, line=definition.line,
                             hint=f"pass --input {name}=…")
    return values


def parse_pairs(pairs: list[str] | None) -> dict[str, str]:
    """`k=v` command-line pairs into a mapping."""
    result: dict[str, str] = {}
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise InputError(f"bad --input '{pair.split('=')[0]}…'", hint="write --input name=value")
        result[key.strip()] = value
    return result


