"""Reproducible zip archives: the same folder gives the same bytes, wherever and whenever it is zipped.

Entries are sorted, every timestamp is 1980-01-01 (the earliest a zip can hold), modes are 0644 or 0755
(executable files) and owners are not recorded. Python's byte-code caches and version-control folders,
which change from run to run without the code changing, are left out.
"""

from __future__ import annotations

import io
import os
import zipfile
from collections.abc import Callable
from pathlib import Path

FIXED_TIME = (1980, 1, 1, 0, 0, 0)
SKIPPED_DIRS = frozenset({"__pycache__", ".git", ".hg", ".svn", ".aws-sam"})
SKIPPED_FILES = frozenset({".DS_Store"})


def folder_files(folder: Path) -> list[tuple[str, Path]]:
    """(name in the archive, path) of every file under `folder`, sorted, symlinks followed."""
    found: list[tuple[str, Path]] = []
    for top, dirs, files in os.walk(folder, followlinks=True):
        dirs[:] = sorted(d for d in dirs if d not in SKIPPED_DIRS)
        base = Path(top)
        for name in files:
            if name in SKIPPED_FILES or name.endswith(".pyc"):
                continue
            path = base / name
            found.append((path.relative_to(folder).as_posix(), path))
    return sorted(found)


def zip_entries(entries: list[tuple[str, Path]], *, check: Callable[[Path], None] | None = None) -> bytes:
    """The zip of these (name, path) pairs, reproducibly; `check` is called on every file first."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, path in entries:
            if check is not None:
                check(path)
            info = zipfile.ZipInfo(name, date_time=FIXED_TIME)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.create_system = 3  # unix: the mode below is read by Lambda's unzip
            mode = 0o755 if os.access(path, os.X_OK) else 0o644
            info.external_attr = (0o100000 | mode) << 16
            archive.writestr(info, path.read_bytes())
    return buffer.getvalue()


def zip_folder(folder: Path, *, check: Callable[[Path], None] | None = None) -> bytes:
    """The folder's files as a reproducible zip (names relative to the folder)."""
    return zip_entries(folder_files(folder), check=check)


def is_zip(path: Path) -> bool:
    """True for a file that is already a zip archive."""
    return zipfile.is_zipfile(path)
