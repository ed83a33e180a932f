"""Secrets kept in the work folder: owner-only JSON files that are never printed.

Two kinds live here: passwords formwright generated for a stack (a TOSCA database password must be
the same on every deploy, or each deploy would change it and none would be a no-op), and an
instance's secure inputs and properties (lifecycle). Both use the same owner-only file helpers.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from formwright.state.applied import write_atomic


def read_secret_json(path: Path) -> dict[str, Any]:
    """The JSON object in `path`, or {} when it is missing or unreadable."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (FileNotFoundError, json.JSONDecodeError):
        return {}
    return data if isinstance(data, dict) else {}


def write_secret_json(path: Path, data: dict[str, Any]) -> None:
    """Write `data` atomically to `path`, readable by the owner only (folder 0700, file 0600)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    os.chmod(path.parent, 0o700)
    write_atomic(path, json.dumps(data, sort_keys=True))
    os.chmod(path, 0o600)


class GeneratedSecrets:
    """`.formwright/secrets/generated/<stack>.json`: passwords formwright made for a stack."""

    def __init__(self, state_dir: Path) -> None:
        self.folder = state_dir / "secrets" / "generated"

    def stable(self, stack: str, generated: dict[str, str]) -> dict[str, str]:
        """The stored value for each generated name; new names are stored with the value just made."""
        path = self.folder / f"{stack}.json"
        stored = read_secret_json(path)
        missing = {k: v for k, v in generated.items() if k not in stored}
        if missing:
            stored.update(missing)
            write_secret_json(path, stored)
        return {k: stored[k] for k in generated}
