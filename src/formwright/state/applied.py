"""The applied cache: per stack, the hash of what was last deployed and its outputs.

A stack whose processed template, parameters, tags, capabilities and termination protection hash
to the recorded value, and whose cloud status is *_COMPLETE, is skipped without a write call.
Files are written atomically (temporary file + rename) so a crash never leaves half a record.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any


def inputs_hash(body: str, parameters: dict[str, str], tags: dict[str, str], capabilities: list[str],
                termination_protection: bool | None, options: dict[str, Any] | None = None) -> str:
    """The hash that decides whether a stack changed since it was last applied."""
    digest = hashlib.sha256()
    digest.update(body.encode("utf-8"))
    inputs: list[Any] = [sorted(parameters.items()), sorted(tags.items()), sorted(capabilities),
                         termination_protection]
    if options and any(v for v in options.values()):  # unset options keep the hashes recorded before them
        inputs.append(sorted(options.items()))
    digest.update(json.dumps(inputs).encode("utf-8"))
    return digest.hexdigest()


@dataclass
class AppliedRecord:
    """What formwright last applied to one stack."""

    stack_name: str
    hash: str
    stack_id: str = ""
    outputs: dict[str, str] = field(default_factory=dict)
    applied_at: float = 0.0
    updated: str = ""  # the stack's LastUpdatedTime then: a later change by anyone else shows


def write_atomic(path: Path, text: str | bytes, *, durable: bool = True) -> None:
    """Write `text` (or bytes) to `path` so that readers see the old or the new content, never half;
    `durable`: on disk before it replaces the old (an fsync, ~5-10 ms here: not for what is rebuilt or
    checked anyway)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "wb" if isinstance(text, bytes) else "w",
                       encoding=None if isinstance(text, bytes) else "utf-8") as handle:
            handle.write(text)
            if durable:
                handle.flush()
                os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


class AppliedCache:
    """`.formwright/applied/<target>/<stack>.json` records, one per stack; <target> names the kind,
    account, region and endpoint (engine.group.target_key), so targets never share records."""

    def __init__(self, state_dir: Path, target_key: str) -> None:
        self.folder = state_dir / "applied" / target_key

    def _path(self, stack: str) -> Path:
        return self.folder / f"{stack}.json"

    def get(self, stack: str) -> AppliedRecord | None:
        """The record of `stack`, or None."""
        try:
            data: dict[str, Any] = json.loads(self._path(stack).read_text(encoding="utf-8"))
            return AppliedRecord(**data)
        except (FileNotFoundError, json.JSONDecodeError, TypeError):
            return None

    def put(self, stack: str, record: AppliedRecord) -> None:
        """Record what was applied to `stack`."""
        record.applied_at = record.applied_at or time.time()
        # not durable: a record lost or left old by a crash is one the next deploy does not trust (its
        # stack's LastUpdatedTime is not the record's), so it costs one change set, never a wrong no-op
        write_atomic(self._path(stack), json.dumps(asdict(record), indent=2, sort_keys=True), durable=False)

    def forget(self, stack: str) -> None:
        """Drop the record of `stack` (after it was deleted)."""
        self._path(stack).unlink(missing_ok=True)
