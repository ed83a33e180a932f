"""`template: {type: queues, count: 2}`: a template handler that writes a template of N SQS queues."""

from __future__ import annotations

import json
from typing import Any


class Queues:
    """A formwright template handler: `handle(arguments, context)` returns the template's text."""

    def handle(self, arguments: dict[str, Any], context: dict[str, Any]) -> str:
        """A template with `count` queues and their URLs as outputs."""
        count = int(arguments.get("count", 1))
        resources = {f"Queue{i}": {"Type": "AWS::SQS::Queue"} for i in range(1, count + 1)}
        outputs = {f"Queue{i}Url": {"Value": {"Ref": f"Queue{i}"}} for i in range(1, count + 1)}
        return json.dumps({"Parameters": {"Port": {"Type": "String"}}, "Resources": resources,
                           "Outputs": {**outputs, "Port": {"Value": {"Ref": "Port"}}}}, indent=2)
