"""botocore's timestamp parsing, without dateutil's general parser for the ISO 8601 strings AWS sends.

botocore parses every timestamp of a response with `dateutil.parser.parse`: 77 µs each on this machine,
against 12 µs for `datetime.fromisoformat`, and a DescribeStacks answer holds two or three of them per
stack. An ISO 8601 string is parsed here by `datetime.fromisoformat`: the same instant with the same UTC
offset as botocore's, naive where botocore's is naive (the zone object is the standard library's, where
dateutil's parser gives its own `tzutc`, `tzoffset` or, on a machine whose zone is named UTC,
`tzlocal`). Anything else (an epoch number, an RFC 822 date) goes to botocore's own parser. It is
installed with botocore's hook for this, the response parser factory's `set_parser_defaults(
timestamp_parser=...)`, as the AWS CLI installs its own for `cli_timestamp_format`.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from botocore.utils import parse_timestamp


def parse(value: Any) -> datetime:
    """The datetime botocore's `parse_timestamp` gives for `value`, faster for an ISO 8601 string."""
    if isinstance(value, str) and "T" in value:
        try:
            parsed = datetime.fromisoformat(value)
        except ValueError:
            return parse_timestamp(value)
        return parsed
    return parse_timestamp(value)


def install(core: Any) -> None:
    """Parse the timestamps of every client of the botocore session `core` with `parse`."""
    core.get_component("response_parser_factory").set_parser_defaults(timestamp_parser=parse)
