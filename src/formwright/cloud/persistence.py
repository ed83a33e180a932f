"""The local cloud's state on disk: a snapshot of all of moto's backends and the emulator's records.

moto has no state persistence of its own for its server (its recorder replays requests, which would
make every id anew and grows with every call), so the local cloud pickles the live objects: every
backend moto has made (`BackendDict._instances`, whatever service: S3 objects, SSM parameters,
secrets, queue messages, and the CloudFormation stacks with the emulator's records on them) plus the
module-level registries of the emulator (`register`). One pickle keeps the objects they share shared
(a stack's resource is the same object as the one in EC2's backend).

File format: one JSON header line (the format, formwright, moto and Python versions), then the pickle.
A snapshot is written to a temporary file in the same folder, flushed to disk and renamed over the
previous one, so a crash while writing keeps the previous snapshot whole. A snapshot from other
versions is refused with the reason before anything is loaded; one that does not load whole is
refused too, and nothing of it is installed.
"""

from __future__ import annotations

import collections
import io
import json
import os
import pickle
import sys
import threading
import weakref
from importlib import metadata
from pathlib import Path
from typing import Any

FORMAT = 1
REGISTRIES: dict[str, dict[str, Any]] = {}  # name -> a module-level dict of the emulator's own state


class SnapshotRefused(Exception):
    """A snapshot that cannot be loaded; the message says why."""


def register(name: str) -> dict[str, Any]:
    """A dict kept in the snapshot (and emptied by a reset): for emulator state held outside moto's
    objects. State stored as attributes of moto's objects (a stack's record) needs no registration."""
    return REGISTRIES.setdefault(name, {})


def versions() -> dict[str, Any]:
    """What a snapshot must have been written by to be loaded."""
    return {"format": FORMAT, "formwright": metadata.version("formwright"), "moto": metadata.version("moto"),
            "python": f"{sys.version_info.major}.{sys.version_info.minor}"}


def _new_defaultdict(cls: type[collections.defaultdict[Any, Any]], factory: Any) -> Any:
    made = cls.__new__(cls)
    made.default_factory = factory
    return made


_RLOCK, _LOCK = type(threading.RLock()), type(threading.Lock())


def _pickler(stream: io.BytesIO) -> pickle.Pickler:
    import cloudpickle  # pickles the lambdas some of moto's backends keep (defaultdict factories)

    class Pickler(cloudpickle.Pickler):
        """Locks are made anew; moto's dict subclasses are rebuilt without their __init__."""

        def reducer_override(self, obj: Any) -> Any:
            kind = type(obj)
            if kind is _RLOCK:
                return threading.RLock, ()
            if kind is _LOCK:
                return threading.Lock, ()
            if kind is weakref.WeakValueDictionary:
                return weakref.WeakValueDictionary, (dict(obj),)
            if isinstance(obj, collections.defaultdict) and kind is not collections.defaultdict:
                # a defaultdict subclass pickles as a call of its __init__ with the factory alone, which
                # moto's (SSM's ParameterDict) refuse
                return (_new_defaultdict, (kind, obj.default_factory), getattr(obj, "__dict__", None) or None,
                        None, iter(obj.items()))
            return super().reducer_override(obj)

    return Pickler(stream, protocol=pickle.HIGHEST_PROTOCOL)


def _backend_dicts() -> dict[str, Any]:
    """moto's backends in use, by `module:global` name (where the live BackendDict is found again)."""
    found = {}
    for backend in list(_live_backends()):
        module_name = backend.backend.__module__
        module = sys.modules.get(module_name)
        name = next((n for n, v in vars(module).items() if v is backend), None) if module else None
        if name is None:
            raise SnapshotRefused(f"moto's {backend.service_name} backend is not a module global: "
                                  "the local cloud cannot snapshot it")
        found[f"{module_name}:{name}"] = backend
    return found


def _live_backends() -> list[Any]:
    """moto's registry of the BackendDicts in use (a class attribute its own code reads the same way)."""
    from moto.core.base_backend import BackendDict

    # moto declares the class-level registry as a generic instance variable; its own code ignores this too
    return BackendDict._instances  # type: ignore[misc]


def capture() -> bytes:
    """The whole state as snapshot bytes (call holding the state lock)."""
    payload = {"backends": {key: dict(bd) for key, bd in _backend_dicts().items()},
               "registries": {name: dict(reg) for name, reg in REGISTRIES.items()}}
    stream = io.BytesIO()
    stream.write(json.dumps(versions()).encode() + b"\n")
    _pickler(stream).dump(payload)
    return stream.getvalue()


def write(path: Path, data: bytes) -> None:
    """Write snapshot bytes atomically: a temporary file beside `path`, synced, renamed over it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    for stale in path.parent.glob(f"{path.name}.tmp-*"):  # left by a writer killed mid-write
        stale.unlink(missing_ok=True)
    temporary = path.with_name(f"{path.name}.tmp-{os.getpid()}")
    with open(temporary, "wb") as stream:
        stream.write(data)
        stream.flush()
        os.fsync(stream.fileno())
    os.replace(temporary, path)


def header(path: Path) -> dict[str, Any]:
    """The header of a snapshot file; refused when it is not one."""
    try:
        with open(path, "rb") as stream:
            return dict(json.loads(stream.readline()))
    except (ValueError, TypeError) as err:
        raise SnapshotRefused(f"{path} is not a local-cloud snapshot ({err})") from None


def refusal(found: dict[str, Any]) -> str | None:
    """Why a snapshot with this header cannot be loaded here, or None."""
    wanted = versions()
    different = [f"{key} {found.get(key)} (this is {value})" for key, value in wanted.items()
                 if found.get(key) != value]
    if different:
        return "it was written by another version: " + ", ".join(different)
    return None


def load(path: Path) -> dict[str, Any]:
    """A snapshot's payload, read whole; SnapshotRefused when it cannot be."""
    reason = refusal(header(path))
    if reason:
        raise SnapshotRefused(f"{path}: {reason}")
    with open(path, "rb") as stream:
        stream.readline()
        try:
            payload = pickle.load(stream)  # noqa: S301 - the local cloud's own file in the user's home
        except Exception as err:  # noqa: BLE001 - any unpickling failure refuses the whole snapshot
            raise SnapshotRefused(f"{path} does not load ({type(err).__name__}: {err})") from None
    if not isinstance(payload, dict) or set(payload) != {"backends", "registries"}:
        raise SnapshotRefused(f"{path} does not hold a local-cloud state")
    return payload


def install(payload: dict[str, Any]) -> None:
    """Replace the live state by a loaded payload (call holding the state lock, before serving)."""
    import importlib

    targets = {}
    for key in payload["backends"]:
        module, name = key.split(":")
        targets[key] = getattr(importlib.import_module(module), name)
    for key, contents in payload["backends"].items():
        backend = targets[key]
        dict.clear(backend)
        dict.update(backend, contents)
        if backend not in _live_backends():
            _live_backends().append(backend)
    for name, contents in payload["registries"].items():
        register(name).clear()
        REGISTRIES[name].update(contents)


def reset_registries() -> None:
    """Empty the emulator's registries (moto's reset empties its backends)."""
    for registry in REGISTRIES.values():
        registry.clear()


def stack_count() -> int:
    """How many stacks the local cloud holds (every account and region), deleted ones left out."""
    from moto.cloudformation.models import cloudformation_backends

    return sum(len(region.stacks) for account in dict.values(cloudformation_backends)
               for region in dict.values(account))
