"""Fn::ForEach of AWS::LanguageExtensions: expanding loops in Resources, Conditions and Outputs.

`Fn::ForEach::<LoopName>: [Identifier, Collection, {OutputKey: OutputValue}]`: the collection is a list
of strings, numbers or booleans, or a Ref to a CommaDelimitedList parameter; `${Identifier}` becomes
each item, `&{Identifier}` the item without its non-alphanumeric characters and `{Ref: Identifier}` the
item; loops nest up to 5 deep. A list of identifiers `[Id1, Id2]` loops over a list of lists, binding
each identifier to its part of every item. The functions inside the generated entries are resolved
afterwards, by the transform's one resolution pass.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from formwright.macros.errors import MacroError, MacroFailed, Unresolvable
from formwright.macros.intrinsics import Resolver
from formwright.template import line_of

FOREACH = "Fn::ForEach::"
_ALPHANUMERIC = re.compile(r"^[A-Za-z0-9]+$")
_NOT_ALPHANUMERIC = re.compile(r"[^A-Za-z0-9]")
#: CloudFormation's bound on nested loops (AWS's processor: MAX_FOREACH_NESTING_DEPTH = 5).
MAX_DEPTH = 5
#: Bounds on what loops may generate, so that a hostile template fails fast instead of filling memory:
#: far above anything that fits CloudFormation's 1 MB processed template.
MAX_ENTRIES = 100_000
MAX_TEXT = 64 * 1024 * 1024

Fail = Callable[..., MacroError]


def contains_foreach(node: Any) -> bool:
    """True when a Fn::ForEach key appears anywhere under `node`."""
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if any(isinstance(k, str) and k.startswith(FOREACH) for k in item):
                return True
            stack.extend(v for v in item.values() if isinstance(v, (dict, list)))
        elif isinstance(item, list):
            stack.extend(v for v in item if isinstance(v, (dict, list)))
    return False


def _depth(node: Any) -> int:
    """How deeply Fn::ForEach loops nest under `node`."""
    if isinstance(node, dict):
        deepest = 0
        for key, value in node.items():
            if isinstance(key, str) and key.startswith(FOREACH):
                body = value[2] if isinstance(value, list) and len(value) >= 3 else None
                deepest = max(deepest, 1 + _depth(body))
            elif isinstance(value, (dict, list)):
                deepest = max(deepest, _depth(value))
        return deepest
    if isinstance(node, list):
        return max((_depth(item) for item in node if isinstance(item, (dict, list))), default=0)
    return 0


def item_text(item: Any) -> str:
    """A collection item as the text that replaces the identifier (booleans as `true`/`false`,
    as in AWS's expected output `Outputtrue` of fnForEachPrimitiveTypesTest)."""
    if isinstance(item, bool):
        return "true" if item else "false"
    return str(item)


class ForEachExpander:
    """Expands every loop of one template."""

    def __init__(
        self, template: dict, resolver: Resolver, fail: Fail, hook: Callable[[dict], Any] | None = None
    ) -> None:
        self.resolver = resolver
        self.fail = fail
        #: Resolves functions while a generated body is parsed (C-speed walk); it raises to give up,
        #: leaving the body for the transform's resolution pass.
        self.hook = json.JSONDecoder(object_hook=hook) if hook is not None else None
        #: ids of generated values the hook already resolved.
        self.resolved: set[int] = set()
        parameters = template.get("Parameters")
        self.parameter_names = set(parameters) if isinstance(parameters, dict) else set()
        resources = template.get("Resources")
        self.resource_names = (
            {k for k in resources if not k.startswith(FOREACH)} if isinstance(resources, dict) else set()
        )
        self.loop_names: dict[str, int | None] = {}
        self.entries = 0
        self.text = 0

    def section(self, name: str, value: dict, line: int | None) -> dict:
        """One section with its loops expanded (the very object when it has none)."""
        depth = _depth(value)
        if depth > MAX_DEPTH:
            raise self.fail(
                f"Fn::ForEach nesting depth of {depth} exceeds the maximum allowed depth of {MAX_DEPTH}",
                line,
                "CloudFormation supports up to 5 nested Fn::ForEach loops",
            )
        return self.expand(value, (), line)

    def expand(self, node: Any, ids: tuple[str, ...], line: int | None) -> Any:
        """`node` with every Fn::ForEach expanded (copying only what changes)."""
        if isinstance(node, dict):
            if any(isinstance(key, str) and key.startswith(FOREACH) for key in node):
                return self.expand_mapping(node, ids, line)
            changed: dict | None = None
            for key, value in node.items():
                if isinstance(value, (dict, list)):
                    new = self.expand(value, ids, line_of(node, key) or line)
                    if new is not value:
                        if changed is None:
                            changed = dict(node)
                        changed[key] = new
            return node if changed is None else changed
        if isinstance(node, list):
            items = [self.expand(value, ids, line) for value in node]
            return node if all(a is b for a, b in zip(items, node, strict=True)) else items
        return node

    def expand_mapping(self, node: dict, ids: tuple[str, ...], line: int | None) -> dict:
        """A mapping with Fn::ForEach keys replaced by what their loops generate."""
        out: dict = {}
        plain = {key for key in node if not key.startswith(FOREACH)}
        for key, value in node.items():
            key_line = line_of(node, key) or line
            if not key.startswith(FOREACH):
                out[key] = self.expand(value, ids, key_line)
                continue
            for new_key, new_value in self.loop(key, value, ids, key_line):
                if new_key in out or new_key in plain:
                    raise self.fail(
                        f"Fn::ForEach expansion in '{key}' produced logical IDs that conflict with "
                        f"existing entries: {new_key}",
                        key_line,
                        "make each OutputKey unique, e.g. include ${Identifier} or &{Identifier}",
                    )
                out[new_key] = new_value
        return out

    def check_layout(
        self, key: str, value: Any, ids: tuple[str, ...], line: int | None
    ) -> tuple[tuple[str, ...], Any, dict]:
        """The loop's identifiers, collection and body, or CloudFormation's error for a bad loop."""
        name = key[len(FOREACH) :]
        layout_hint = "write [Identifier, [Item1, Item2], {OutputKey${Identifier}: OutputValue}]"
        if not _ALPHANUMERIC.match(name):
            raise self.fail(f"{key}: the loop name must be alphanumeric", line)
        if name in self.parameter_names:
            raise self.fail(
                f"{key}: loop name '{name}' conflicts with parameter name", line, "rename the loop"
            )
        if name in self.resource_names:
            raise self.fail(
                f"{key}: the loop name {name} conflicts with a logical ID in Resources",
                line,
                "rename the loop",
            )
        if name in self.loop_names and self.loop_names[name] != line:
            raise self.fail(
                f"{key}: the loop name {name} is already used (line {self.loop_names[name]})",
                line,
                "every loop needs a name unique in the template",
            )
        self.loop_names.setdefault(name, line)
        if not isinstance(value, list) or len(value) != 3:
            raise self.fail(f"{key} layout is incorrect", line, layout_hint)
        identifier, collection, output = value
        identifiers = self.identifiers(key, identifier, line)
        for one in identifiers:
            if one in self.parameter_names:
                raise self.fail(
                    f"{key}: identifier '{one}' conflicts with parameter name",
                    line,
                    "rename the identifier",
                )
            if one in ids or identifiers.count(one) > 1:
                raise self.fail(
                    f"{key}: identifier '{one}' conflicts with another loop identifier",
                    line,
                    "give nested loops different identifiers",
                )
        if not isinstance(output, dict) or not output:
            raise self.fail(f"{key} layout is incorrect", line, layout_hint)
        # An OutputKey without the identifier is valid: AWS's expected outputs of
        # fnForEachWithNoIdentifierInOutputKeyAndValid accept it (a one-item collection makes one key);
        # only keys that collide are refused (expand_mapping).
        return identifiers, collection, output

    def identifiers(self, key: str, identifier: Any, line: int | None) -> tuple[str, ...]:
        """The loop's identifier, or its list of identifiers (each a string or a Ref to a String
        parameter) that name the parts of each item of a list-of-lists collection, as the
        LanguageExtensions transform's own tests expect (fnForEachListOfLists*Test)."""
        hint = "write an alphanumeric Identifier, or a list of them for a collection of lists"
        if isinstance(identifier, str):
            names: list[Any] = [identifier]
        elif isinstance(identifier, list) and identifier:
            try:
                names = [self.resolver.resolve(one) if isinstance(one, dict) else one for one in identifier]
            except (Unresolvable, MacroFailed):
                raise self.fail(f"{key}: an identifier could not be resolved", line, hint) from None
        else:
            names = [None]
        for one in names:
            if not isinstance(one, str) or not _ALPHANUMERIC.match(one):
                raise self.fail(f"{key}: the identifier must be an alphanumeric string", line, hint)
        return tuple(names)

    def loop(self, key: str, value: Any, ids: tuple[str, ...], line: int | None) -> list[tuple[str, Any]]:
        """The (key, value) pairs one Fn::ForEach generates."""
        identifiers, collection, output = self.check_layout(key, value, ids, line)
        listed = isinstance(value[0], list)  # a list of identifiers: each item is a list of parts
        items = self.collection(key, collection, len(identifiers) if listed else 0, line)
        # Substitution works on the loop body's JSON text: one C-speed replace and parse per item
        # instead of a Python walk. `{"Ref":"Id"}` is matched only as a whole one-key object.
        text = json.dumps(output, separators=(",", ":"), ensure_ascii=False)
        nested = FOREACH in text
        pairs: list[tuple[str, Any]] = []
        for item in items:
            body_text = text
            for identifier, part in zip(identifiers, item, strict=True):
                quoted = json.dumps(part, ensure_ascii=False)
                ref = json.dumps({"Ref": identifier}, separators=(",", ":"), ensure_ascii=False)
                body_text = (
                    body_text.replace("${" + identifier + "}", quoted[1:-1])
                    .replace("&{" + identifier + "}", _NOT_ALPHANUMERIC.sub("", part))
                    .replace(ref, quoted)
                )
            self.count(key, len(output), len(body_text), line)
            if nested:
                body = self.expand_mapping(json.loads(body_text), (*ids, *identifiers), line)
            else:
                body = self.parse(body_text)
            pairs.extend(body.items())
        return pairs

    def parse(self, text: str) -> dict:
        """An innermost loop body, its functions resolved by the hook when it can."""
        if self.hook is not None:
            try:
                body = self.hook.decode(text)
            except Exception:  # noqa: BLE001 - any doubt: the resolution pass decides, with its errors
                return json.loads(text)
            self.resolved.update(id(value) for value in body.values())
            return body
        return json.loads(text)

    def count(self, key: str, entries: int, size: int, line: int | None) -> None:
        """Refuse loops that would generate more than any template can hold."""
        self.entries += entries
        self.text += size
        if self.entries > MAX_ENTRIES or self.text > MAX_TEXT:
            raise self.fail(
                f"{key}: the loops generate more than {MAX_ENTRIES:,} entries or "
                f"{MAX_TEXT // 1024 // 1024} MB",
                line,
                "a processed template can't exceed 1 MB; use fewer or smaller collections",
            )

    def collection(self, key: str, collection: Any, width: int, line: int | None) -> list[tuple[str, ...]]:
        """The loop's items as text, one tuple per item: one part for a single identifier (`width` 0),
        else a list of `width` parts, one per identifier; CloudFormation's errors for anything else."""
        hint = "use a list of strings, numbers or booleans, or a Ref to a CommaDelimitedList parameter"
        if width:
            hint = f"use a list of lists of {width} strings, numbers or booleans (one per identifier)"
        try:
            items = self.resolver.resolve(collection)
        except Unresolvable as err:
            raise self.fail(
                f"{key}: the collection could not be resolved: {err}",
                line,
                "give the parameter a value (--param Name=a,b,c) or a Default",
            ) from None
        except MacroFailed as err:
            raise self.fail(f"{key}: {err.message}", line, err.hint) from None
        if isinstance(items, str) and isinstance(collection, dict):
            items = [part.strip() for part in items.split(",")]  # a String parameter holding a list
        if not isinstance(items, list):
            raise self.fail(f"{key} layout is incorrect: the collection must be a list", line, hint)
        result = []
        for item in items:
            parts = item if width and isinstance(item, list) else [item] if not width else []
            if len(parts) != max(width, 1) or not all(isinstance(part, (str, int, float)) for part in parts):
                raise self.fail(
                    f"{key} layout is incorrect: the collection holds {json.dumps(item, default=str)[:60]}",
                    line,
                    hint,
                )
            result.append(tuple(item_text(part) for part in parts))
        return result
