"""An invocation's output in the function's CloudWatch Logs group, `/aws/lambda/NAME`, as Lambda
writes it: one stream per invocation here (`YYYY/MM/DD/[$LATEST]id`), START / the function's lines /
END / REPORT, each line one event with the time it was written."""

from __future__ import annotations

from typing import Any

from formwright.cloud.lambda_runtime.runner import Outcome


def save(function: Any, outcome: Outcome) -> None:
    """Put the invocation's lines into the function's log group (made when missing, as Lambda makes it)."""
    from moto.logs.models import logs_backends

    backend = logs_backends[function.account_id][function.region]
    group = f"/aws/lambda/{function.function_name}"
    backend.ensure_log_group(group)
    if outcome.stream not in backend.groups[group].streams:
        backend.create_log_stream(group, outcome.stream)
    # CloudWatch takes a batch in time order (a stable sort: lines of one millisecond keep theirs)
    events: list[dict[str, Any]] = [{"timestamp": stamp, "message": text}
                                    for stamp, text in sorted(outcome.lines, key=lambda line: line[0])]
    backend.put_log_events(group, outcome.stream, events)
