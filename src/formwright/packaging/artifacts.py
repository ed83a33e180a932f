"""What packaging produces: artifacts named by their content, and the packaged template."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Artifact:
    """One object to put in the artifact bucket: a zipped folder, a file as is, or a packaged template."""

    source: str  # the local path it was made from (relative to the project when inside it)
    kind: str  # zip | file | template
    key: str  # <prefix>/<sha256><ext>
    data: bytes = field(repr=False)

    @property
    def sha256(self) -> str:
        """The content hash (also the key's name)."""
        return hashlib.sha256(self.data).hexdigest()

    @property
    def size(self) -> int:
        """Bytes."""
        return len(self.data)

    def to_json(self, bucket: str) -> dict[str, Any]:
        """The manifest entry: path, hash, size and where it goes."""
        return {"path": self.source, "kind": self.kind, "sha256": self.sha256, "size": self.size,
                "bucket": bucket, "key": self.key}


def artifact_key(prefix: str, data: bytes, suffix: str) -> str:
    """`<prefix>/<sha256><suffix>`: the same content always has the same key."""
    digest = hashlib.sha256(data).hexdigest()
    return f"{prefix.strip('/')}/{digest}{suffix}" if prefix.strip("/") else f"{digest}{suffix}"


@dataclass
class NestedTemplate:
    """A nested template as packaged (for lint and build): its file and its packaged form."""

    file: Path
    template: dict[str, Any]  # as uploaded (macros expanded when its parent's are)
    key: str
    source: dict[str, Any] | None = None  # packaged, before its macros ran: the lines of its file


@dataclass
class Packaged:
    """A template with its local paths replaced, what must be uploaded for it, and its nested templates."""

    template: dict[str, Any]
    artifacts: list[Artifact] = field(default_factory=list)
    nested: list[NestedTemplate] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    bucket: str | None = None  # where the artifacts go (None: there are none)

    @property
    def changed(self) -> bool:
        """True when packaging rewrote anything."""
        return bool(self.artifacts)
