"""botocore's data files (service models, endpoints, rule sets) decoded once and kept on disk.

Making a botocore client decodes JSON files shipped with botocore (endpoints.json alone is 1.2 MB) and
walks every service folder to check the service exists: ~70 ms of the ~90 ms of a CloudFormation client,
on every command. formwright gives its sessions a botocore `Loader` of its own (botocore's extension
point for this: the session's `data_loader` component), which

- keeps each decoded file under `$FORMWRIGHT_HOME/cache/botocore/` in `marshal` form (the JSON types
  only, read back ~4x faster than JSON is parsed), keyed by the file's path, size, mtime, inode and
  device, botocore's version and Python's, as Python keys its own .pyc files by the source's mtime and
  size: a changed, replaced or moved file is read again;
- keeps the list of services found by searching the data paths, keyed by the names in each path three
  levels down (`<path>/<service>/<api-version>/<file>`, what botocore's search looks at): a model dropped
  in ~/.aws/models or an AWS_DATA_PATH folder changes the key. botocore's own folder (449 services) is
  keyed by botocore's version and the folder's mtime: it changes only when botocore is installed;
- is shared by every session of the process with the same data path (as botocore's maintainers suggest
  in boto/botocore#3078): the second session's clients decode nothing.

The decoded JSON holds plain dicts where botocore's JSON loader makes OrderedDicts: dicts keep their
order, nothing in botocore uses OrderedDict's own methods on loaded data, and plain dicts decode twice as
fast and take less memory. A cache file that is missing, corrupt (checked by a CRC), unreadable or
unwritable is passed over: the file is decoded as botocore decodes it. Writes go to a temporary file that
replaces the entry in one step, so concurrent processes each see a whole entry or none.
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import json
import marshal
import os
import stat
import sys
import threading
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import botocore
from botocore.loaders import JSONFileLoader, Loader, create_loader, instance_cache

from formwright.cloud.local import formwright_home
from formwright.state.applied import write_atomic

FORMAT = 1  # bump when what an entry holds changes
_MAGIC = b"FWBD"
# the extensions botocore's JSONFileLoader tries, in its order
_OPENERS: tuple[tuple[str, Callable[..., Any]], ...] = ((".json", open), (".json.gz", gzip.open))

_shared: dict[tuple[str | None, str], Loader] = {}
_shared_lock = threading.Lock()


def cache_folder() -> Path:
    """Where the decoded data files are kept: `$FORMWRIGHT_HOME/cache/botocore`."""
    return formwright_home() / "cache" / "botocore"


class DiskCache:
    """Entries in `folder`, one file per name; each holds the full key it was written for."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def _file(self, name: tuple) -> Path:
        digest = hashlib.sha256(repr((FORMAT, sys.implementation.cache_tag, name)).encode()).hexdigest()
        return self.folder / f"{digest[:32]}.marshal"

    def get(self, name: tuple, key: tuple) -> Any:
        """The value stored under `name` for `key`, or None (missing, stale, corrupt or unreadable)."""
        try:
            blob = self._file(name).read_bytes()
        except OSError:
            return None
        if len(blob) < 8 or blob[:4] != _MAGIC or int.from_bytes(blob[4:8], "big") != zlib.crc32(blob[8:]):
            return None
        try:
            stored_key, value = marshal.loads(blob[8:])
        except (ValueError, EOFError, TypeError):
            return None
        return value if stored_key == key else None

    def put(self, name: tuple, key: tuple, value: Any) -> None:
        """Store `value` under `name` for `key` in one step; an unwritable folder is passed over."""
        try:
            body = marshal.dumps((key, value))
        except ValueError:  # not plain data: never cached
            return
        blob = _MAGIC + zlib.crc32(body).to_bytes(4, "big") + body
        with contextlib.suppress(OSError):  # rebuilt from botocore's file when missing: no fsync
            write_atomic(self._file(name), blob, durable=False)


def _identity(st: os.stat_result) -> tuple[int, int, int, int]:
    return (st.st_size, st.st_mtime_ns, st.st_ino, st.st_dev)


class CachedFileLoader(JSONFileLoader):
    """botocore's JSON file loader; a decoded file comes from the disk cache while the file is unchanged."""

    def __init__(self, cache: DiskCache) -> None:
        self.cache = cache

    def load_file(self, file_path: str) -> Any:
        """The decoded `file_path` + .json or .json.gz (botocore's order), or None when neither is a file."""
        for ext, opener in _OPENERS:
            full_path = file_path + ext
            try:
                before = os.stat(full_path)
            except OSError:
                continue
            if not stat.S_ISREG(before.st_mode):
                continue
            key = (botocore.__version__, full_path, *_identity(before))
            data = self.cache.get(("file", full_path), key)
            if data is not None:
                return data
            with opener(full_path, "rb") as fp:
                data = json.loads(fp.read().decode("utf-8"))
            with contextlib.suppress(OSError):
                if _identity(os.stat(full_path)) == key[2:]:  # not cached when it changed while being read
                    self.cache.put(("file", full_path), key, data)
            return data
        return None


class CachingLoader(Loader):
    """botocore's Loader whose files come through `CachedFileLoader` and whose service lists are cached."""

    def __init__(self, cache: DiskCache, extra_search_paths: list[str] | None = None) -> None:
        super().__init__(extra_search_paths=extra_search_paths, file_loader=CachedFileLoader(cache))
        self.cache = cache
        self._paths = _SearchPaths(super().search_paths)
        self._models_lock = threading.Lock()

    @property
    def search_paths(self) -> list[str]:
        """botocore's search paths, each once: every boto3 Session appends boto3's own folder to its
        session's loader, and this one is shared by every session of the process."""
        return self._paths

    def load_service_model(self, service_name: str, type_name: str, api_version: str | None = None) -> Any:
        """botocore's, one thread at a time: it merges the sdk-extras into a model it has cached, and the
        threads of every session of the process share this loader."""
        with self._models_lock:
            return super().load_service_model(service_name, type_name, api_version=api_version)

    @instance_cache
    def list_available_services(self, type_name: str) -> list[str]:
        """The services that have a `type_name` model in some search path (botocore's answer, cached)."""
        paths = list(self.search_paths)
        key = (botocore.__version__, type_name, tuple(self._path_state(path) for path in paths))
        cached = self.cache.get(("services", type_name, tuple(paths)), key)
        if cached is not None:
            return list(cached)
        services: list[str] = super().list_available_services(type_name)
        if key == (botocore.__version__, type_name, tuple(self._path_state(path) for path in paths)):
            self.cache.put(("services", type_name, tuple(paths)), key, services)
        return services

    def _path_state(self, path: str) -> tuple:
        """What the services found under `path` depend on: its tree three levels down, by name (a
        service's folders, their API versions' folders, their files); botocore's own folder by its mtime."""
        try:
            top = os.stat(path).st_mtime_ns
        except OSError:
            return (path, None)
        if path == self.BUILTIN_DATA_PATH:  # botocore's own: changes only with an install of botocore
            return (path, top)
        return (path, _tree(path, 3))


class _SearchPaths(list):
    """A list of paths that keeps each path once (botocore and boto3 only append to it)."""

    def append(self, path: str) -> None:
        """Add `path` at the end unless it is already there."""
        if path not in self:
            super().append(path)


def _tree(folder: str, depth: int) -> tuple:
    """The names under `folder`, `depth` levels down: (name, subtree) for a folder, name for a file."""
    try:
        entries = sorted(os.scandir(folder), key=lambda entry: entry.name)
    except OSError:
        return ()
    names: list[Any] = []
    for entry in entries:
        if entry.is_dir():
            names.append((entry.name, _tree(entry.path, depth - 1) if depth > 1 else ()))
        elif entry.is_file():
            names.append(entry.name)
    return tuple(names)


def shared_loader(data_path: str | None) -> Loader:
    """The process's caching loader for a data path (`AWS_DATA_PATH` or the profile's `data_path`), as
    botocore's `create_loader` would make it; one per data path and cache folder. Without a home folder
    (no HOME, no FORMWRIGHT_HOME) botocore's own loader."""
    try:
        folder = cache_folder()
    except RuntimeError:  # Path.home() without a home (Python 3.12+)
        return create_loader(data_path)
    if folder.parts[:1] == ("~",):  # Path.home() without a home (Python 3.11): "~" left as it is
        return create_loader(data_path)
    folder = folder.absolute()
    with _shared_lock:
        loader = _shared.get((data_path, str(folder)))
        if loader is None:
            extra = None
            if data_path is not None:
                extra = [os.path.expanduser(os.path.expandvars(path)) for path in data_path.split(os.pathsep)]
            loader = _shared[(data_path, str(folder))] = CachingLoader(DiskCache(folder), extra)
        return loader


def install(core: Any) -> None:
    """Make the botocore session `core` load its data through the shared caching loader (made when first
    asked for, so that the session's own data path is read as botocore reads it)."""
    core.lazy_register_component("data_loader",
                                 lambda: shared_loader(core.get_config_variable("data_path")))
