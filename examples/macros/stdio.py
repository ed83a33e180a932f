"""Run a Lambda-style macro handler as an executable macro: request on stdin, response on stdout."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from typing import Any


def main(handler: Callable[[dict, Any], dict]) -> None:
    """Read the request, call the handler (no context), write the response."""
    event = json.load(sys.stdin)
    json.dump(handler(event, None), sys.stdout)
