"""Reading YAML templates: short-form tags to long form, line numbers, no timestamps, no duplicate keys,
inside the nesting and alias bounds; every problem a TemplateError with `file:line`."""

from __future__ import annotations

import math
from typing import Any

import yaml

from formwright.errors import TemplateError
from formwright.template.json_loader import JSON_ONLY, loads_json
from formwright.template.limits import MAX_DEPTH, MAX_EXPANDED_VALUES
from formwright.template.tags import RAIN_TAGS, SHORT_FORM_TAGS
from formwright.template.values import Mapping, Sequence

# Above this many nesting indicators the text is scanned for its depth before libyaml composes it:
# libyaml's C composer recurses per level and overflows the C stack (a segfault) past ~10,000.
_DEPTH_SCAN_THRESHOLD = 5_000

_BaseLoader: type = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


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
        if key in result and getattr(loader, "_fw_duplicates", None) is not None:
            # the caller takes duplicates as YAML parsers such as PyYAML do (the last one wins), and says so
            loader._fw_duplicates.append((key, key_node.start_mark.line + 1, result.key_lines[key]))
        elif key in result:
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


def _tag_constructor(tag: str, function: str | None = None):
    function = function or SHORT_FORM_TAGS[tag]

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
for _tag in RAIN_TAGS:  # rain's directives: the long form `{Rain::Embed: path}`, processed by packaging
    TemplateLoader.add_constructor(f"!{_tag}", _tag_constructor(_tag, _tag))


def load_yaml_text(text: str, loader_class: type, *, file: str | None = None,
                   json_fallback: bool = False, duplicates: list | None = None) -> Any:
    """Parse YAML with a TemplateLoader (sub)class inside the depth, alias and value bounds.

    Every problem is a TemplateError with the file and, where known, the line. With a `duplicates` list, a
    duplicate key is not an error: the last value wins and (key, line, first line) is appended to it.
    """
    looks_json = json_fallback and text.lstrip().startswith("{")
    if looks_json and any(c in text for c in JSON_ONLY):
        return loads_json(text, file)
    try:
        _check_yaml_depth(text, loader_class)
        loader = loader_class(text)
        loader._fw_duplicates = duplicates
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
            return loads_json(text, file)
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
        if "maximum nesting depth" in problem:  # libyaml's own limit (PyYAML >= 6.0.3's C parser)
            return TemplateError(f"nested more than {MAX_DEPTH} levels deep", file=file, line=line,
                                 hint="flatten the structure")
        if "could not determine a constructor for the tag" in str(err):
            problem = f"unknown tag {str(err).split('tag')[-1].strip().splitlines()[0]}"
        return TemplateError(f"not valid YAML/JSON: {problem}", file=file, line=line)
    return TemplateError(f"not valid YAML/JSON: {err}", file=file)
