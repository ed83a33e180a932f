"""template.yaml text, byte-identical to `formwright.template.dump_yaml`, in a fraction of its time.

`dump_yaml` runs PyYAML's pure-Python representer (a dispatch per value, alias bookkeeping). A
transformed template holds only plain dicts, lists, strings, integers, booleans and None, with no
object shared between two places, so its YAML node tree is built here directly and handed to
PyYAML's C emitter with the same settings. Anything else (another type, a shared object that
`dump_yaml` would write as an anchor) falls back to `dump_yaml` itself, so the text never differs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from formwright.template import dump_yaml
from formwright.template.document import LONG_FORM_TAGS, Mapping, Sequence, _is_simple_getatt

_BaseDumper: type = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


class _Dumper(_BaseDumper):  # type: ignore[misc, valid-type]
    """The C emitter, remembering which tag each scalar would resolve to: it asks twice per scalar
    (pure-Python regular expressions), and a template repeats most of its keys and values."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._resolved: dict[tuple, str] = {}

    def resolve(self, kind: type, value: Any, implicit: Any) -> str:
        if kind is not ScalarNode:
            return super().resolve(kind, value, implicit)
        if not implicit[0] and not self.yaml_path_resolvers:  # the emitter's "quoted?" ask: always str
            return self.DEFAULT_SCALAR_TAG
        key = (value, implicit)
        tag = self._resolved.get(key)
        if tag is None:
            tag = self._resolved[key] = super().resolve(kind, value, implicit)
        return tag
_STR = "tag:yaml.org,2002:str"
_MAP = "tag:yaml.org,2002:map"
_SEQ = "tag:yaml.org,2002:seq"
_SCALARS: dict[type, tuple[str, Callable[[Any], str]]] = {
    bool: ("tag:yaml.org,2002:bool", lambda v: "true" if v else "false"),
    int: ("tag:yaml.org,2002:int", str),
    type(None): ("tag:yaml.org,2002:null", lambda v: "null"),
}
_DICTS = (dict, Mapping)  # the exact types dump_yaml has representers for
_LISTS = (list, Sequence)


class _Unsupported(Exception):
    """The data holds something only `dump_yaml` writes correctly."""


class _Builder:
    """Builds the node tree `dump_yaml` (short form) would build, refusing what it cannot mirror."""

    def __init__(self) -> None:
        self.seen: set[int] = set()

    def node(self, value: Any) -> Node:
        kind = type(value)
        if kind is str:
            return ScalarNode(_STR, value, style="|" if "\n" in value and not value.startswith(" ") else None)
        if kind in _SCALARS:
            tag, text = _SCALARS[kind]
            return ScalarNode(tag, text(value))
        if kind in _DICTS or kind in _LISTS:
            self.claim(value)
            return self.mapping(value) if kind in _DICTS else self.sequence(_SEQ, value)
        raise _Unsupported

    def claim(self, value: dict | list) -> None:
        """Note a container; one met twice would be an anchor and an alias in `dump_yaml`."""
        if id(value) in self.seen:
            raise _Unsupported
        self.seen.add(id(value))

    def sequence(self, tag: str, items: list) -> SequenceNode:
        return SequenceNode(tag, [self.node(item) for item in items], flow_style=False)

    def mapping(self, value: dict, tag: str = _MAP) -> Node:
        if tag == _MAP and len(value) == 1:
            tagged = self.short_form(value)
            if tagged is not None:
                return tagged
        return MappingNode(tag, [(self.node(k), self.node(v)) for k, v in value.items()], flow_style=False)

    def short_form(self, value: dict) -> Node | None:
        """The `!Tag` node of a one-key intrinsic function, as `dump_yaml` writes it; else None."""
        ((key, inner),) = value.items()
        tag = LONG_FORM_TAGS.get(key)
        if tag == "GetAtt" and _is_simple_getatt(inner):
            return ScalarNode(f"!{tag}", f"{inner[0]}.{inner[1]}")
        if tag is None or (tag == "Condition" and not isinstance(inner, str)):
            return None
        kind = type(inner)
        if kind in _DICTS or kind in _LISTS:
            self.claim(inner)
            return self.mapping(inner, f"!{tag}") if kind in _DICTS else self.sequence(f"!{tag}", inner)
        if kind in (str, int, float):
            return ScalarNode(f"!{tag}", str(inner))
        if kind in (bool, type(None)):
            return None  # dump_yaml writes these as a plain one-key mapping
        raise _Unsupported


def template_yaml(data: Any) -> str:
    """`dump_yaml(data)` (short form), computed quickly when `data` is plain template data."""
    try:
        root = _Builder().node(data)
    except (_Unsupported, RecursionError):
        return dump_yaml(data)
    return yaml.serialize(root, Dumper=_Dumper, width=1000, allow_unicode=True)
