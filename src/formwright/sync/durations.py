"""Go durations as Flux objects write them (`5s`, `1m30s`, `500ms`), and a reconcile interval's bounds."""

from __future__ import annotations

import math
import re

_DURATION_PART = re.compile(r"(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)")
_DURATION_UNITS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


MIN_INTERVAL = 1.0
MAX_INTERVAL = 366 * 24 * 3600.0


def parse_duration(text: str | int | float) -> float:
    """A Go duration (`5s`, `1m30s`, `500ms`) or a number of seconds, in seconds (finite, not negative)."""
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        seconds = float(text)
    else:
        value = str(text).strip()
        if not value or _DURATION_PART.sub("", value) != "":
            raise ValueError(f"'{text}' is not a duration (use Go's form: 30s, 5m, 1h30m, 500ms)")
        seconds = sum(float(n) * _DURATION_UNITS[unit] for n, unit in _DURATION_PART.findall(value))
    if not math.isfinite(seconds) or seconds < 0:
        raise ValueError(f"'{text}' is not a duration (a finite number of seconds, or Go's form: 30s, 5m)")
    return seconds


def parse_interval(text: str | int | float, minimum: float = MIN_INTERVAL) -> float:
    """A reconcile interval: a duration from `minimum` (1s) to a year; anything else is refused."""
    seconds = parse_duration(text)
    if seconds < minimum:
        raise ValueError(f"{text} is too short: at least {format_duration(minimum)} (a loop this tight "
                         "would hammer the source and the CloudFormation API)")
    if seconds > MAX_INTERVAL:
        raise ValueError(f"{text} is too long: at most {format_duration(MAX_INTERVAL)}")
    return seconds


def format_duration(seconds: float) -> str:
    """Seconds as a short Go-style duration: `90s` → `1m30s`."""
    if seconds < 1:
        return f"{round(seconds * 1000)}ms"
    whole = round(seconds)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    text = (f"{hours}h" if hours else "") + (f"{minutes}m" if minutes else "") + (f"{secs}s" if secs else "")
    return text or "0s"
