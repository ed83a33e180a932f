"""Writing templates: YAML with short-form tags (or long form only) and JSON."""

from __future__ import annotations

import json
from typing import Any

import yaml

from formwright.errors import TemplateError
from formwright.template.tags import LONG_FORM_TAGS, is_simple_getatt
from formwright.template.values import Mapping, Sequence

_BaseDumper: type = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


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
        if tag == "GetAtt" and is_simple_getatt(value):
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
