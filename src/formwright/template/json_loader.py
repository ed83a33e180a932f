"""Reading JSON templates that YAML cannot read exactly (tabs, U+2028 …, control characters): duplicate
keys, huge integers, NaN and lone surrogates refused as CloudFormation would, inside the nesting bound."""

from __future__ import annotations

import json
import re
from typing import Any

from formwright.errors import TemplateError
from formwright.template.limits import MAX_DEPTH
from formwright.template.values import Mapping


def _json_object(pairs: list[tuple[str, Any]]) -> Mapping:
    result = Mapping()
    for key, value in pairs:
        if key in result:
            raise TemplateError(f"duplicate key '{key}'")
        result[key] = value
    return result


def _json_int(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise TemplateError(f"a number of {len(text):,} digits is not an integer a template can hold",
                            hint="quote it to make it text") from None


def _json_constant(name: str) -> Any:
    raise TemplateError(f"'{name}' is not JSON: CloudFormation cannot read NaN or infinite numbers")


_JSON_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def _check_json_depth(text: str) -> None:
    if text.count("[") + text.count("{") <= MAX_DEPTH:
        return
    depth = 0
    for match in _JSON_TOKENS.finditer(text):
        token = match.group()
        if token in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                raise TemplateError(f"nested more than {MAX_DEPTH} levels deep",
                                    line=text.count("\n", 0, match.start()) + 1, hint="flatten the structure")
        elif token in "]}":
            depth -= 1


def _check_text(value: Any) -> None:
    """Lone UTF-16 surrogates (`\\ud800` in JSON) cannot be sent to CloudFormation as UTF-8."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        elif isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                raise TemplateError(
                    f"text {item[:40]!r} holds a lone UTF-16 surrogate, which is not valid Unicode",
                    hint="write the character itself, or a proper \\uXXXX\\uXXXX pair",
                ) from None


def loads_json(text: str, file: str | None) -> Any:
    """Parse JSON template text (no line numbers: only the YAML reader knows them); errors carry `file`."""
    try:
        _check_json_depth(text)
        data = json.loads(text, object_pairs_hook=_json_object, parse_int=_json_int,
                          parse_constant=_json_constant)
        if _SURROGATE_ESCAPE.search(text):
            _check_text(data)
        return data
    except json.JSONDecodeError as err:
        raise TemplateError(f"not valid JSON: {err.msg}", file=file, line=err.lineno) from None
    except RecursionError:
        raise TemplateError(f"nested more than {MAX_DEPTH} levels deep", file=file) from None
    except TemplateError as err:
        err.file = file
        raise


# Characters JSON keeps verbatim but YAML treats as indentation or line breaks: such JSON is read by
# the JSON parser (without line numbers) so its values stay exact.
JSON_ONLY = ("\t", "\x85", "\u2028", "\u2029")
