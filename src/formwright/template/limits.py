"""The bounds of a template: CloudFormation's size limits, and formwright's own bounds on nesting and on
expanded YAML aliases (what the loaders refuse before it costs the process its stack or memory)."""

from __future__ import annotations

from formwright.errors import TemplateError

#: How deeply mappings and lists may nest in a template or project file. Real templates stay far
#: below it; the code that walks them (intrinsics, macros, plain()) recurses a few frames a level,
#: so the bound keeps every walk well inside the interpreter's recursion limit (1,000).
MAX_DEPTH = 100
#: How many values a document may hold once YAML aliases are expanded (billion-laughs bound).
MAX_EXPANDED_VALUES = 1_000_000
#: A template passed inline as TemplateBody may be at most this many bytes.
TEMPLATE_BODY_LIMIT = 51_200
#: A template passed by TemplateURL (from S3) may be at most this many bytes.
TEMPLATE_URL_LIMIT = 1_000_000


def needs_upload(body: str) -> bool:
    """True when the body is too large to pass inline and must go through S3."""
    return len(body.encode("utf-8")) > TEMPLATE_BODY_LIMIT


def check_size(body: str, *, where: str | None = None, file: str | None = None) -> int:
    """Raise CloudFormation's error when the body is over 1 MB; return its size in bytes."""
    size = len(body.encode("utf-8"))
    if size > TEMPLATE_URL_LIMIT:
        raise TemplateError(
            f"Template may not exceed {TEMPLATE_URL_LIMIT} bytes in size (this one is {size} bytes)",
            where=where,
            file=file,
            hint="split it into nested stacks or several stacks",
        )
    return size
