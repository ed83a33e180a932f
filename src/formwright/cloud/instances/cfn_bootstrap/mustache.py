"""The `{{mustache}}` templates of cfn-init's `files` `context` (the real helper renders them with pystache):
`{{name}}` (HTML-escaped, pystache's default), `{{{name}}}` and `{{& name}}` (as is), dotted names, sections
`{{#name}}...{{/name}}` (a list repeats it, a true value shows it) and inverted `{{^name}}...{{/name}}`."""

from __future__ import annotations

import html
import json
import re
from typing import Any

SECTION = re.compile(r"\{\{([#^])\s*([\w.-]+)\s*\}\}(.*?)\{\{/\s*\2\s*\}\}", re.S)
TAG = re.compile(r"\{\{\{\s*([\w.-]+)\s*\}\}\}|\{\{(&?)\s*([\w.-]+)\s*\}\}")


def _lookup(stack: list[Any], name: str) -> Any:
    if name == ".":
        return stack[-1]
    first, *rest = name.split(".")
    for scope in reversed(stack):
        if isinstance(scope, dict) and first in scope:
            value = scope[first]
            for part in rest:
                value = value.get(part) if isinstance(value, dict) else None
            return value
    return None


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return value if isinstance(value, str) else json.dumps(value) if isinstance(value, dict | list) \
        else str(value)


def render(template: str, context: Any) -> str:
    """`template` with its tags filled from `context`."""
    return _render(template, [context])


def _render(template: str, stack: list[Any]) -> str:
    def section(found: re.Match[str]) -> str:
        kind, name, body = found.groups()
        value = _lookup(stack, name)
        if kind == "^":
            return _render(body, stack) if not value else ""
        if isinstance(value, list):
            return "".join(_render(body, [*stack, item]) for item in value)
        return _render(body, [*stack, value]) if value else ""

    def tag(found: re.Match[str]) -> str:
        raw, amp, name = found.groups()
        value = _text(_lookup(stack, raw or name))
        return value if raw or amp else html.escape(value, quote=True)

    return TAG.sub(tag, SECTION.sub(section, template))
