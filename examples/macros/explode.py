"""Explode: one resource per entry of a mapping (after AWS's published `Explode` example macro).

Use it in the Transform section. A resource with `ExplodeMap: MapName` becomes one copy per key of
that mapping, named `<LogicalId><Key>` (or with `%s` in the logical id replaced by the key); a string
`!Explode Attr` in the copy becomes the mapping's value of Attr for that key.
"""

from __future__ import annotations

import re
from typing import Any

PREFIX = "!Explode "


def _fill(value: Any, row: dict) -> Any:
    if isinstance(value, str) and value.startswith(PREFIX):
        return row.get(value[len(PREFIX):].strip(), value)
    if isinstance(value, dict):
        return {key: _fill(item, row) for key, item in value.items()}
    if isinstance(value, list):
        return [_fill(item, row) for item in value]
    return value


def handler(event: dict, context: Any) -> dict:
    """Explode every resource with an ExplodeMap."""
    fragment = event["fragment"]
    mappings = fragment.get("Mappings", {})
    resources: dict = {}
    for name, resource in fragment.get("Resources", {}).items():
        map_name = resource.get("ExplodeMap") if isinstance(resource, dict) else None
        if map_name is None:
            resources[name] = resource
            continue
        if map_name not in mappings:
            return {"requestId": event["requestId"], "status": "failure",
                    "errorMessage": f"{name}: no mapping named {map_name}"}
        body = {key: value for key, value in resource.items() if key != "ExplodeMap"}
        for key, row in mappings[map_name].items():
            clean = re.sub(r"[^A-Za-z0-9]", "", key)
            logical_id = name.replace("%s", clean) if "%s" in name else f"{name}{clean}"
            resources[logical_id] = _fill(body, row)
    return {"requestId": event["requestId"], "status": "success", "fragment": {**fragment, "Resources": resources}}
