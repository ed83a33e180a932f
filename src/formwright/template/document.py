"""Loading and dumping CloudFormation templates (YAML and JSON) with source line numbers.

A loaded template is plain Python data (dicts, lists, strings, numbers) whose dicts and lists are
`Mapping` / `Sequence` subclasses carrying the line they started on and, for a mapping, the line of
each key. Short-form tags (`!Ref`, `!GetAtt a.b`, `!Sub` …) become the long form (`{"Ref": …}`) on
load; `dump_yaml(short_form=True)` writes them back as tags.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from formwright.errors import TemplateError
from formwright.template.dumper import dump, dump_json, dump_yaml
from formwright.template.limits import MAX_DEPTH, MAX_EXPANDED_VALUES
from formwright.template.tags import LONG_FORM_TAGS, SHORT_FORM_TAGS, is_simple_getatt
from formwright.template.values import Mapping, Sequence, line_of, plain
from formwright.template.yaml_loader import TemplateLoader, load_yaml_text

_is_simple_getatt = is_simple_getatt  # the name transform/cloudformation/yaml_out.py imports

__all__ = ["LONG_FORM_TAGS", "MAX_DEPTH", "MAX_EXPANDED_VALUES", "SHORT_FORM_TAGS", "Mapping", "Sequence",
           "TemplateLoader", "dump", "dump_json", "dump_yaml", "line_of", "load", "load_yaml_text", "loads",
           "plain"]


def loads(text: str, *, file: str | None = None) -> Any:
    """Parse template text (YAML or JSON) into line-annotated data; errors carry `file:line`."""
    return load_yaml_text(text, TemplateLoader, file=file, json_fallback=True)


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
