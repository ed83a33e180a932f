"""Secrets formwright generated (e.g. a database password for a TOSCA stack), kept so they stay stable.

A generated password must be the same on every deploy, or each deploy would change the database's
password and no deploy would ever be a no-op. They live in `.formwright/secrets/<stack>.json`,
readable by the owner only, and are never printed.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from formwright.state.applied import write_atomic


class SecretStore:
    """Per-stack generated secrets in the work folder (mode 0600)."""

    def __init__(self, state_dir: Path) -> None:
        self.folder = state_dir / "secrets"

    def stable(self, stack: str, generated: dict[str, str]) -> dict[str, str]:
        """The stored value for each generated name; new names are stored with the value just made."""
        path = self.folder / f"{stack}.json"
        try:
            stored: dict[str, str] = json.loads(path.read_text(encoding="utf-8"))
        except (FileNotFoundError, json.JSONDecodeError):
            stored = {}
        missing = {k: v for k, v in generated.items() if k not in stored}
        if missing:
            stored.update(missing)
            self.folder.mkdir(parents=True, exist_ok=True)
            os.chmod(self.folder, 0o700)
            write_atomic(path, json.dumps(stored))
            os.chmod(path, 0o600)
        return {k: stored[k] for k in generated}
