"""Loading and dumping CloudFormation templates (YAML and JSON) with source line numbers.

A loaded template is plain Python data (dicts, lists, strings, numbers) whose dicts and lists are
`Mapping` / `Sequence` subclasses carrying the line they started on and, for a mapping, the line of
each key. Short-form tags (`!Ref`, `!GetAtt a.b`, `!Sub` …) become the long form (`{"Ref": …}`) on
load; `dump_yaml(short_form=True)` writes them back as tags.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import yaml

from formwright.errors import TemplateError

#: How deeply mappings and lists may nest in a template or project file. Real templates stay far
#: below it; the code that walks them (intrinsics, macros, plain()) recurses a few frames a level,
#: so the bound keeps every walk well inside the interpreter's recursion limit (1,000).
MAX_DEPTH = 100
#: How many values a document may hold once YAML aliases are expanded (billion-laughs bound).
MAX_EXPANDED_VALUES = 1_000_000
# Above this many nesting indicators the text is scanned for its depth before libyaml composes it:
# libyaml's C composer recurses per level and overflows the C stack (a segfault) past ~10,000.
_DEPTH_SCAN_THRESHOLD = 5_000

_BaseLoader: type = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_BaseDumper: type = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


class Mapping(dict):
    """A dict that remembers the source line of itself and of each key."""

    __slots__ = ("file", "key_lines", "line")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.line: int | None = None
        self.key_lines: dict[str, int] = {}
        self.file: str | None = None

    def line_of(self, key: str) -> int | None:
        """The line where `key` was written, else the line of this mapping."""
        return self.key_lines.get(key, self.line)

    def __reduce__(self):  # keeps copy.deepcopy and pickle working with __slots__
        return (_rebuild_mapping, (dict(self), self.line, self.key_lines, self.file))


def _rebuild_mapping(items: dict, line: int | None, key_lines: dict, file: str | None) -> Mapping:
    m = Mapping(items)
    m.line, m.key_lines, m.file = line, dict(key_lines), file
    return m


class Sequence(list):
    """A list that remembers the source line it started on."""

    __slots__ = ("line",)

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.line: int | None = None

    def __reduce__(self):
        return (_rebuild_sequence, (list(self), self.line))


def _rebuild_sequence(items: list, line: int | None) -> Sequence:
    s = Sequence(items)
    s.line = line
    return s


def line_of(value: Any, key: str | None = None) -> int | None:
    """Best-known source line of `value` (or of `key` inside it)."""
    if isinstance(value, Mapping):
        return value.line_of(key) if key is not None else value.line
    if isinstance(value, Sequence):
        return value.line
    return None


# Short-form tag -> long-form function name. `!GetAtt` and `!Condition` are special-cased.
SHORT_FORM_TAGS: dict[str, str] = {
    "Ref": "Ref",
    "GetAtt": "Fn::GetAtt",
    "Sub": "Fn::Sub",
    "Join": "Fn::Join",
    "If": "Fn::If",
    "Select": "Fn::Select",
    "Split": "Fn::Split",
    "FindInMap": "Fn::FindInMap",
    "Base64": "Fn::Base64",
    "Cidr": "Fn::Cidr",
    "ImportValue": "Fn::ImportValue",
    "GetAZs": "Fn::GetAZs",
    "Equals": "Fn::Equals",
    "And": "Fn::And",
    "Or": "Fn::Or",
    "Not": "Fn::Not",
    "Condition": "Condition",
    "Transform": "Fn::Transform",
}
LONG_FORM_TAGS: dict[str, str] = {v: k for k, v in SHORT_FORM_TAGS.items()}


class TemplateLoader(_BaseLoader):  # type: ignore[misc, valid-type]
    """YAML loader for CloudFormation: short-form tags, line numbers, no timestamps, no duplicates."""


class _Nesting:
    """Counts the nesting of the collection being constructed; refuses past MAX_DEPTH."""

    __slots__ = ("loader", "node")

    def __init__(self, loader: Any, node: yaml.Node) -> None:
        self.loader, self.node = loader, node

    def __enter__(self) -> None:
        depth = getattr(self.loader, "_fw_depth", 0) + 1
        if depth > MAX_DEPTH:
            raise TemplateError(
                f"nested more than {MAX_DEPTH} levels deep", line=self.node.start_mark.line + 1,
                hint="flatten the structure",
            )
        self.loader._fw_depth = depth

    def __exit__(self, *exc: object) -> None:
        self.loader._fw_depth -= 1


def _count_expanded(loader: Any, node: yaml.Node, result: Any, children: Any) -> None:
    """With aliases in the text, track each value's size once aliases are expanded."""
    sizes = getattr(loader, "_fw_sizes", None)
    if sizes is None:
        return
    size = 1 + sum(sizes.get(id(child), 1) for child in children)
    if size > MAX_EXPANDED_VALUES:
        raise TemplateError(
            f"YAML aliases expand to more than {MAX_EXPANDED_VALUES:,} values",
            line=node.start_mark.line + 1, hint="write the values out, or use fewer nested aliases",
        )
    sizes[id(result)] = size


def _construct_mapping(loader: yaml.Loader, node: yaml.MappingNode) -> Mapping:
    with _Nesting(loader, node):
        result = _construct_mapping_items(loader, node)
    _count_expanded(loader, node, result, result.values())
    return result


def _construct_mapping_items(loader: yaml.Loader, node: yaml.MappingNode) -> Mapping:
    result = Mapping()
    result.line = node.start_mark.line + 1
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        if not isinstance(key, (str, int, float, bool)) or key is None:
            raise TemplateError(
                "a mapping key must be a plain string", line=key_node.start_mark.line + 1
            )
        key = str(key) if not isinstance(key, str) else key
        if key in result:
            raise TemplateError(
                f"duplicate key '{key}' (first at line {result.key_lines[key]})",
                line=key_node.start_mark.line + 1,
                hint="CloudFormation rejects templates with duplicate keys; remove one",
            )
        result[key] = loader.construct_object(value_node, deep=True)
        result.key_lines[key] = key_node.start_mark.line + 1
    return result


def _construct_sequence(loader: yaml.Loader, node: yaml.SequenceNode) -> Sequence:
    with _Nesting(loader, node):
        result = Sequence(loader.construct_object(child, deep=True) for child in node.value)
    result.line = node.start_mark.line + 1
    _count_expanded(loader, node, result, result)
    return result


def _construct_timestamp_as_text(loader: yaml.Loader, node: yaml.ScalarNode) -> str:
    # AWSTemplateFormatVersion: 2010-09-09 must stay a string, as CloudFormation reads it.
    return loader.construct_scalar(node)


def _construct_int(loader: Any, node: yaml.ScalarNode) -> int:
    try:
        return yaml.constructor.SafeConstructor.construct_yaml_int(loader, node)
    except (ValueError, IndexError):  # IndexError: an empty `!!int`
        text = str(node.value)
        what = f"a number of {len(text):,} digits" if len(text) > 40 else f"'{text}'"
        raise TemplateError(f"{what} is not an integer a template can hold",
                            line=node.start_mark.line + 1, hint="quote it to make it text") from None


def _construct_float(loader: Any, node: yaml.ScalarNode) -> float:
    try:
        value = yaml.constructor.SafeConstructor.construct_yaml_float(loader, node)
    except (ValueError, IndexError):
        raise TemplateError(f"'{node.value}' is not a number", line=node.start_mark.line + 1) from None
    if not math.isfinite(value):
        raise TemplateError(
            f"'{node.value}' (NaN or infinity) has no JSON form, so CloudFormation cannot read it",
            line=node.start_mark.line + 1, hint="quote it to make it text",
        )
    return value


def _construct_bool(loader: Any, node: yaml.ScalarNode) -> bool:
    try:
        return yaml.constructor.SafeConstructor.construct_yaml_bool(loader, node)
    except KeyError:
        raise TemplateError(f"'{node.value}' is not true or false", line=node.start_mark.line + 1) from None


def _refuse_tag(loader: Any, node: yaml.Node) -> Any:
    tag = node.tag.replace("tag:yaml.org,2002:", "!!")
    raise TemplateError(
        f"the YAML tag {tag} has no CloudFormation meaning", line=node.start_mark.line + 1,
        hint="write a plain mapping, list or text",
    )


def _tag_constructor(tag: str):
    function = SHORT_FORM_TAGS[tag]

    def construct(loader: yaml.Loader, node: yaml.Node) -> Mapping:
        with _Nesting(loader, node):
            result = _construct_tagged(loader, node)
        _count_expanded(loader, node, result, result.values())
        return result

    def _construct_tagged(loader: yaml.Loader, node: yaml.Node) -> Mapping:
        if isinstance(node, yaml.ScalarNode):
            value: Any = loader.construct_scalar(node)
            if tag == "GetAtt":
                if "." not in value:
                    raise TemplateError(
                        f"!GetAtt '{value}' must be 'Resource.Attribute'", line=node.start_mark.line + 1
                    )
                value = Sequence(value.split(".", 1))
                value.line = node.start_mark.line + 1
        elif isinstance(node, yaml.SequenceNode):
            value = _construct_sequence(loader, node)
        else:
            value = _construct_mapping(loader, node)
        result = Mapping({function: value})
        result.line = node.start_mark.line + 1
        result.key_lines[function] = result.line
        return result

    return construct


TemplateLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)
TemplateLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_SEQUENCE_TAG, _construct_sequence)
TemplateLoader.add_constructor("tag:yaml.org,2002:timestamp", _construct_timestamp_as_text)
TemplateLoader.add_constructor("tag:yaml.org,2002:int", _construct_int)
TemplateLoader.add_constructor("tag:yaml.org,2002:float", _construct_float)
TemplateLoader.add_constructor("tag:yaml.org,2002:bool", _construct_bool)
for _core in ("set", "omap", "pairs", "binary"):
    TemplateLoader.add_constructor(f"tag:yaml.org,2002:{_core}", _refuse_tag)
for _tag in SHORT_FORM_TAGS:
    TemplateLoader.add_constructor(f"!{_tag}", _tag_constructor(_tag))


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


def _loads_json(text: str, file: str | None) -> Any:
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
_JSON_ONLY = ("\t", "\x85", "\u2028", "\u2029")


def loads(text: str, *, file: str | None = None) -> Any:
    """Parse template text (YAML or JSON) into line-annotated data; errors carry `file:line`."""
    return load_yaml_text(text, TemplateLoader, file=file, json_fallback=True)


def load_yaml_text(text: str, loader_class: type, *, file: str | None = None,
                   json_fallback: bool = False) -> Any:
    """Parse YAML with a TemplateLoader (sub)class inside the depth, alias and value bounds.

    Every problem is a TemplateError with the file and, where known, the line.
    """
    looks_json = json_fallback and text.lstrip().startswith("{")
    if looks_json and any(c in text for c in _JSON_ONLY):
        return _loads_json(text, file)
    try:
        _check_yaml_depth(text, loader_class)
        loader = loader_class(text)
        if "&" in text:
            loader._fw_sizes = {}
        try:
            data = loader.get_single_data()
        finally:
            loader.dispose()
    except TemplateError as err:
        err.file = err.file or file
        raise
    except yaml.YAMLError as err:
        if looks_json:  # JSON that YAML refuses (raw control characters …): JSON decides
            return _loads_json(text, file)
        raise _yaml_error(err, file) from None
    if isinstance(data, Mapping):
        data.file = file
    return data


def _check_yaml_depth(text: str, loader_class: type) -> None:
    """Refuse a document nested past MAX_DEPTH before libyaml composes it (see the threshold)."""
    indicators = sum(text.count(c) for c in "[{-:?")
    if indicators <= _DEPTH_SCAN_THRESHOLD:
        return  # each nesting level needs its own indicator, so the constructors' count suffices
    depth = 0
    for event in yaml.parse(text, Loader=loader_class):
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > MAX_DEPTH:
                raise TemplateError(f"nested more than {MAX_DEPTH} levels deep",
                                    line=event.start_mark.line + 1, hint="flatten the structure")
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1


def _yaml_error(err: yaml.YAMLError, file: str | None) -> TemplateError:
    if isinstance(err, yaml.MarkedYAMLError):
        mark = err.problem_mark or err.context_mark
        line = mark.line + 1 if mark else None
        problem = err.problem or str(err)
        if "could not determine a constructor for the tag" in str(err):
            problem = f"unknown tag {str(err).split('tag')[-1].strip().splitlines()[0]}"
        return TemplateError(f"not valid YAML/JSON: {problem}", file=file, line=line)
    return TemplateError(f"not valid YAML/JSON: {err}", file=file)


def load(path: str | Path) -> Any:
    """Load a template file; the top level must be a mapping."""
    p = Path(path)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise TemplateError("template file not found", file=str(path)) from None
    except (OSError, UnicodeDecodeError) as err:
        raise TemplateError(f"cannot read template: {err}", file=str(path)) from None
    data = loads(text, file=str(path))
    if not isinstance(data, dict):
        raise TemplateError(
            "a template must be a mapping with Resources", file=str(path), line=1
        )
    return data


def plain(value: Any) -> Any:
    """A copy of `value` with ordinary dicts and lists (no line annotations)."""
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value


class _TaggedDumper(_BaseDumper):  # type: ignore[misc, valid-type]
    """Writes intrinsic functions as short-form tags."""


class _PlainDumper(_BaseDumper):  # type: ignore[misc, valid-type]
    """Writes long form only."""


def _represent_dict(dumper: yaml.Dumper, data: dict) -> yaml.Node:
    return dumper.represent_mapping("tag:yaml.org,2002:map", data.items())


def _represent_list(dumper: yaml.Dumper, data: list) -> yaml.Node:
    return dumper.represent_sequence("tag:yaml.org,2002:seq", data)


def _represent_str(dumper: yaml.Dumper, data: str) -> yaml.Node:
    style = "|" if "\n" in data and not data.startswith(" ") else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=style)


def _represent_tagged(dumper: yaml.Dumper, data: dict) -> yaml.Node:
    if len(data) == 1:
        (key, value), = data.items()
        tag = LONG_FORM_TAGS.get(key)
        if tag == "GetAtt" and _is_simple_getatt(value):
            return dumper.represent_scalar(f"!{tag}", f"{value[0]}.{value[1]}")
        if tag == "Condition" and not isinstance(value, str):
            tag = None  # a `Condition` key holding structure is not the condition function
        if tag is not None:
            if isinstance(value, dict):
                return dumper.represent_mapping(f"!{tag}", value.items())
            if isinstance(value, list):
                return dumper.represent_sequence(f"!{tag}", value)
            if isinstance(value, (str, int, float, bool)) and not isinstance(value, bool):
                return dumper.represent_scalar(f"!{tag}", str(value) if not isinstance(value, str) else value)
    return _represent_dict(dumper, data)


def _is_simple_getatt(value: Any) -> bool:
    return (
        isinstance(value, list)
        and len(value) == 2
        and all(isinstance(v, str) for v in value)
        and "." not in value[0]
    )


for _dumper in (_TaggedDumper, _PlainDumper):
    _dumper.add_representer(str, _represent_str)
    _dumper.add_representer(list, _represent_list)
    _dumper.add_representer(Sequence, _represent_list)
_PlainDumper.add_representer(dict, _represent_dict)
_PlainDumper.add_representer(Mapping, _represent_dict)
_TaggedDumper.add_representer(dict, _represent_tagged)
_TaggedDumper.add_representer(Mapping, _represent_tagged)


def dump_yaml(data: Any, *, short_form: bool = True) -> str:
    """Template data as YAML; intrinsic functions as short-form tags unless `short_form=False`."""
    dumper = _TaggedDumper if short_form else _PlainDumper
    return yaml.dump(
        data, Dumper=dumper, sort_keys=False, default_flow_style=False, allow_unicode=True, width=1000
    )


def dump_json(data: Any, *, indent: int | None = 2) -> str:
    """Template data as JSON (CloudFormation's Processed form)."""
    separators = (",", ":") if indent is None else (",", ": ")
    return json.dumps(data, indent=indent, separators=separators, ensure_ascii=False, default=str)


def dump(data: Any, fmt: str) -> str:
    """Dump as `json` or `yaml`."""
    if fmt == "json":
        return dump_json(data)
    if fmt == "yaml":
        return dump_yaml(data)
    raise TemplateError(f"unknown template format '{fmt}'", hint="use json or yaml")
