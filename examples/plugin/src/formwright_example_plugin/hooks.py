"""The `note` hook: appends one line per event to `deploys.log` in the project folder."""

from __future__ import annotations

from typing import Any


def note(context: dict[str, Any]) -> None:
    """Called with the hook's JSON context (formwright runs it in a child process, in the project folder)."""
    changes = context.get("changes") or {}
    line = f"{context['event']} {context['stack']['name']} {changes.get('kind', '')}".rstrip()
    with open("deploys.log", "a", encoding="utf-8") as log:
        log.write(line + "\n")
