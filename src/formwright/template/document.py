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


# Past this many bytes a file is no template CloudFormation takes (1,000,000 bytes by URL, 51,200 inline):
# reading stops there, so that /dev/zero or a runaway file is an error, not all the memory there is.
READ_LIMIT = 10 * 1_000_000


def read_bounded(path: Path, limit: int = READ_LIMIT) -> str:
    """A template file's text: a regular file of at most `limit` bytes (a device, a FIFO or a larger file
    is a TemplateError, read no further than the limit)."""
    if path.exists() and not path.is_file():
        what = "a folder" if path.is_dir() else "not a regular file (a device or a pipe)"
        raise TemplateError(f"the template is {what}", file=str(path), hint="give a template file")
    with open(path, "rb") as handle:
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise TemplateError(f"the template is over {limit:,} bytes; CloudFormation takes at most "
                            "1,000,000", file=str(path))
    return data.decode("utf-8")


def load(path: str | Path) -> Any:
    """Load a template file; the top level must be a mapping."""
    p = Path(path)
    try:
        text = read_bounded(p)
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
