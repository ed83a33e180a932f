"""formwright's timestamp parser gives what botocore's own gives (cloud/timestamps.py): the same instant
with the same UTC offset, naive where botocore's is naive (the zone object may differ: dateutil's parser
gives `tzlocal()` for a "Z" time on a machine whose zone is named UTC, `tzutc()` elsewhere)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from botocore.utils import parse_timestamp
from hypothesis import given
from hypothesis import strategies as st

from formwright.cloud.timestamps import parse

MOMENTS = st.datetimes(min_value=datetime(1971, 1, 1), max_value=datetime(2200, 1, 1))
OFFSETS = st.sampled_from([None, "Z", "+00:00", "+05:30", "-08:00"])


def same(a: datetime, b: datetime) -> bool:
    """Equal, with equal offsets (or both naive)."""
    return a == b and a.utcoffset() == b.utcoffset() and (a.tzinfo is None) == (b.tzinfo is None)


@given(MOMENTS, OFFSETS, st.sampled_from([0, 3, 6]))
def test_an_iso_8601_string_parses_as_botocore_parses_it(moment: datetime, offset: str | None,
                                                         digits: int) -> None:
    text = moment.strftime("%Y-%m-%dT%H:%M:%S")
    if digits:
        text += "." + f"{moment.microsecond:06d}"[:digits]
    text += offset or ""
    assert same(parse(text), parse_timestamp(text)), text


def test_what_is_not_iso_8601_goes_to_botocore() -> None:
    for value in (1700000000, 1700000000.5, "1700000000", "Thu, 27 Nov 2026 14:50:00 GMT"):
        assert same(parse(value), parse_timestamp(value)), value


def test_cloudformations_format_is_an_aware_time() -> None:
    parsed = parse("2026-11-27T14:50:00.123Z")
    assert parsed == datetime(2026, 11, 27, 14, 50, 0, 123000, tzinfo=UTC)
    assert parsed.utcoffset() == timedelta(0)
    assert f"{parsed:%Y-%m-%d %H:%M}" == "2026-11-27 14:50"  # shown as UTC wherever the machine is
