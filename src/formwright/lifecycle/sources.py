"""Where an instance's project comes from: content-addressed source snapshots and the secret store.

Every operation runs from a snapshot of the project folder under `.formwright/sources/<hash>/`, so a
revision can be rolled back exactly even after the original folder changed. Secure inputs and secure
properties never enter the journal; they live in `.formwright/secrets/instances/<instance>.json` (mode 0600).

Secure inputs are kept per operation (`operations[<operation id>]`), written before the operation acts:
a revision names the operation that made it, so rolling back to revision N uses N's secure values, and
`retry` of any operation (a custom one included) gets the values it was started with.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import threading
from pathlib import Path
from typing import Any

from formwright.errors import FormwrightError, InputError
from formwright.model.project import PROJECT_FILE, find_project_file
from formwright.state.journal import Operation
from formwright.state.secrets import read_secret_json, write_secret_json

IGNORED = {".formwright", ".git", "__pycache__", ".venv", ".pytest_cache"}


def project_files(root: Path) -> list[Path]:
    """Every file of a project folder (no work folders: .formwright, .git, caches), sorted."""
    found: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in IGNORED)
        found.extend(Path(dirpath) / f for f in sorted(filenames))
    return found


def source_hash(root: Path) -> str:
    """A hash of every file's relative path, executable bit and content under `root`."""
    digest = hashlib.sha256()
    for path in project_files(root):
        rel = path.relative_to(root).as_posix()
        executable = bool(path.stat().st_mode & stat.S_IXUSR)
        digest.update(f"{rel}\0{int(executable)}\0".encode())
        digest.update(hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def snapshot(source: Path, state_dir: Path) -> Path:
    """Copy the project folder `source` into `.formwright/sources/<hash>/` (once) and return that folder."""
    project_file = find_project_file(source)
    root = project_file.parent.resolve()
    if project_file.name != PROJECT_FILE:
        raise InputError(f"an instance needs a project folder with {PROJECT_FILE}", file=str(project_file))
    sources = state_dir / "sources"
    try:
        if root.is_relative_to(sources.resolve()):
            return root  # already a snapshot
    except OSError:
        pass
    target = sources / source_hash(root)[:16]
    if not (target / PROJECT_FILE).is_file():
        partial = sources / f".{target.name}.{os.getpid()}"
        shutil.rmtree(partial, ignore_errors=True)
        shutil.copytree(root, partial, ignore=shutil.ignore_patterns(*IGNORED), symlinks=True)
        try:
            os.replace(partial, target)
        except OSError:  # another process made the same snapshot first
            shutil.rmtree(partial, ignore_errors=True)
    return target.resolve()


class SecretStore:
    """`.formwright/secrets/instances/<instance>.json`, owner-only:
    secure inputs per operation, secure properties.

    {"operations": {op_id: {input: value}}, "properties": {name: value}, "inputs": {…}}; "inputs" is the
    single set older versions kept (the latest values), read only for operations recorded before.
    """

    def __init__(self, state_dir: Path) -> None:
        self.folder = state_dir / "secrets" / "instances"
        self._lock = threading.RLock()  # actions of concurrent elements report secure properties

    def _path(self, instance: str) -> Path:
        return self.folder / f"{instance}.json"

    def load(self, instance: str) -> dict[str, dict[str, Any]]:
        """{"inputs": {…}, "properties": {…}, "operations": {op_id: {…}}} of the instance."""
        data = read_secret_json(self._path(instance))
        return {"inputs": dict(data.get("inputs", {})), "properties": dict(data.get("properties", {})),
                "operations": {k: dict(v) for k, v in dict(data.get("operations", {})).items()}}

    def save(self, instance: str, data: dict[str, dict[str, Any]]) -> None:
        """Write the instance's secrets atomically, readable by the owner only."""
        write_secret_json(self._path(instance), data)

    def update(self, instance: str, *, inputs: dict[str, Any] | None = None,
               properties: dict[str, Any] | None = None) -> None:
        """Merge secure properties (and legacy latest inputs) into the store."""
        if not inputs and not properties:
            return
        with self._lock:
            data = self.load(instance)
            data["inputs"].update(inputs or {})
            data["properties"].update(properties or {})
            self.save(instance, data)

    def keep_operation(self, instance: str, operation_id: str, inputs: dict[str, Any]) -> None:
        """Keep the secure input values an operation runs with (before it acts); nothing when it has none."""
        if not inputs:
            return
        with self._lock:
            data = self.load(instance)
            data["operations"][operation_id] = dict(inputs)
            self.save(instance, data)

    def drop_operation(self, instance: str, operation_id: str) -> None:
        """Forget an operation's secure inputs (a finished custom operation: no revision, no retry)."""
        with self._lock:
            data = self.load(instance)
            if data["operations"].pop(operation_id, None) is not None:
                self.save(instance, data)

    def operation_inputs(self, instance: str, operation_id: str | None) -> dict[str, Any]:
        """The secure inputs the operation ran with (legacy stores: the latest values kept)."""
        data = self.load(instance)
        if operation_id is not None and operation_id in data["operations"]:
            return data["operations"][operation_id]
        return data["inputs"]

    def known_values(self, instance: str) -> list[Any]:
        """Every secret value kept for the instance (to mask them all, whatever revision is in play)."""
        data = self.load(instance)
        values = list(data["inputs"].values()) + list(data["properties"].values())
        for kept in data["operations"].values():
            values.extend(kept.values())
        return values

    def forget(self, instance: str) -> None:
        """Drop the instance's secrets (after it was deleted)."""
        self._path(instance).unlink(missing_ok=True)


def changed_since(op: Operation) -> str | None:
    """A note when the folder an operation was started from changed since (retry runs the snapshot)."""
    origin = op.params.get("origin")
    if not origin:
        return None
    try:
        root = find_project_file(Path(origin)).parent
        now = source_hash(root)[:16]
    except (FormwrightError, OSError):
        return f"the project folder {origin} is gone; retry runs the version of the failed attempt"
    if now == Path(op.params["source"]).name:
        return None
    return (f"the project at {origin} changed since the failed attempt: retry runs the version of that "
            f"attempt; to apply the change, finish with retry (or rollback) and then "
            f"`formwright instance upgrade {op.instance} --to {origin}`")
