"""Count: copy a resource N times (after AWS's published `Count` example macro).

Use it in the Transform section. A resource with a top-level `Count: N` becomes N resources named
`<LogicalId>1` … `<LogicalId>N`; `%d` in any string of the copy becomes its number.
"""

from __future__ import annotations

from typing import Any


def _number(value: Any, index: int) -> Any:
    if isinstance(value, str):
        return value.replace("%d", str(index))
    if isinstance(value, dict):
        return {key: _number(item, index) for key, item in value.items()}
    if isinstance(value, list):
        return [_number(item, index) for item in value]
    return value


def handler(event: dict, context: Any) -> dict:
    """Expand every resource with a Count."""
    fragment = event["fragment"]
    resources: dict = {}
    for name, resource in fragment.get("Resources", {}).items():
        count = resource.get("Count") if isinstance(resource, dict) else None
        if count is None:
            resources[name] = resource
            continue
        if not isinstance(count, int) or isinstance(count, bool) or count < 0:
            return {"requestId": event["requestId"], "status": "failure",
                    "errorMessage": f"Count of {name} must be a whole number, not {count!r}"}
        body = {key: value for key, value in resource.items() if key != "Count"}
        for index in range(1, count + 1):
            resources[f"{name}{index}"] = _number(body, index)
    return {"requestId": event["requestId"], "status": "success", "fragment": {**fragment, "Resources": resources}}
