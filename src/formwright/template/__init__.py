"""The CloudFormation document: load/dump with line numbers, short-form tags, size limits, lint."""

from formwright.template.document import (
    LONG_FORM_TAGS,
    SHORT_FORM_TAGS,
    Mapping,
    Sequence,
    dump,
    dump_json,
    dump_yaml,
    line_of,
    load,
    loads,
    plain,
)
from formwright.template.limits import TEMPLATE_BODY_LIMIT, TEMPLATE_URL_LIMIT, check_size, needs_upload

__all__ = [
    "LONG_FORM_TAGS",
    "SHORT_FORM_TAGS",
    "TEMPLATE_BODY_LIMIT",
    "TEMPLATE_URL_LIMIT",
    "Mapping",
    "Sequence",
    "check_size",
    "dump",
    "dump_json",
    "dump_yaml",
    "line_of",
    "load",
    "loads",
    "needs_upload",
    "plain",
]
