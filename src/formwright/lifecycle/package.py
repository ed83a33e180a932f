"""A packaged project version: `NAME-VERSION.tar.gz` with the manifest, templates, actions and hooks, and a
checksum manifest; installed with `instance create|upgrade --from ARCHIVE`.

The archive holds one folder `NAME-VERSION/` with the project's files and `formwright-package.json`
({format, name, version, files: {path: sha256}}). Installing verifies it before anything runs: only
regular files and folders, relative paths inside the folder, bounded size and entry count, every file
listed with its checksum and nothing unlisted. The archive's own sha256 is its digest, kept with the
operation (and shown by `history`).
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import os
import shutil
import tarfile
from dataclasses import dataclass
from functools import partial
from pathlib import Path, PurePosixPath
from typing import Any

from formwright.errors import InputError
from formwright.lifecycle.rendering import LenientInputs, load_for_instance
from formwright.lifecycle.sources import project_files
from formwright.model.project import PROJECT_FILE, find_project_file

PACKAGE_FILE = "formwright-package.json"
FORMAT = 1
MAX_ENTRIES = 10_000
MAX_BYTES = 200 * 1024 * 1024  # unpacked


@dataclass
class PackageInfo:
    """What an archive says of itself, and its digest."""

    name: str
    version: str
    digest: str  # sha256:<hex> of the archive file
    files: int

    def to_json(self) -> dict[str, Any]:
        """Plain data."""
        return dict(self.__dict__)


def file_digest(path: Path) -> str:
    """`sha256:<hex>` of a file."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return f"sha256:{digest.hexdigest()}"


def build_package(source: Path, output: Path | None = None) -> tuple[Path, PackageInfo]:
    """Pack the project at `source` (it must load) into `output` (default `NAME-VERSION.tar.gz`)."""
    project_file = find_project_file(source)
    root = project_file.parent.resolve()
    project = load_for_instance(root, "package", LenientInputs({}, {}))
    if not project.version:
        raise InputError("a package needs the project's `version`", file=str(project_file),
                         hint='add version: "1.0" to formwright.yaml')
    name, version = project.name, str(project.version)
    top = f"{name}-{version}"
    target = Path(output) if output else Path(f"{top}.tar.gz")
    files: dict[str, str] = {}
    members: list[tuple[str, Path]] = []
    for path in project_files(root):
        if path.is_symlink():
            raise InputError("a package holds no symbolic links", file=str(path),
                             hint="copy the file it points to into the project")
        rel = path.relative_to(root).as_posix()
        if rel == PACKAGE_FILE:
            continue
        files[rel] = file_digest(path)
        members.append((rel, path))
    manifest = json.dumps({"format": FORMAT, "name": name, "version": version, "files": files},
                          indent=2, sort_keys=True).encode("utf-8")
    target.parent.mkdir(parents=True, exist_ok=True)
    pending = target.with_name(f".{target.name}.{os.getpid()}")
    # fixed times, owners and order: the same project makes the same archive, byte for byte
    with open(pending, "wb") as raw, gzip.GzipFile(filename="", fileobj=raw, mode="wb", mtime=0) as zipped, \
            tarfile.open(fileobj=zipped, mode="w", format=tarfile.PAX_FORMAT) as archive:
        _add(archive, f"{top}/{PACKAGE_FILE}", manifest, 0o644)
        for rel, path in members:
            mode = 0o755 if os.access(path, os.X_OK) else 0o644
            _add(archive, f"{top}/{rel}", path.read_bytes(), mode)
    os.replace(pending, target)
    return target, PackageInfo(name, version, file_digest(target), len(files))


def _add(archive: tarfile.TarFile, name: str, data: bytes, mode: int) -> None:
    info = tarfile.TarInfo(name)
    info.size, info.mode, info.mtime = len(data), mode, 0
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    archive.addfile(info, io.BytesIO(data))


def is_package(path: Path) -> bool:
    """True for a file that looks like a package archive (by its name)."""
    return path.is_file() and path.name.endswith((".tar.gz", ".tgz"))


def install_package(archive: Path, state_dir: Path) -> tuple[Path, PackageInfo]:
    """Verify and unpack the archive under `.formwright/packages/<digest>/`; the project folder inside."""
    digest = file_digest(archive)
    home = state_dir / "packages" / digest.split(":")[1][:16]
    pending = home.with_name(f".{home.name}.{os.getpid()}")
    shutil.rmtree(pending, ignore_errors=True)
    try:
        info, top = _extract(archive, pending, digest)
        if (home / top / PROJECT_FILE).is_file():
            shutil.rmtree(pending, ignore_errors=True)
        else:
            shutil.rmtree(home, ignore_errors=True)
            os.replace(pending, home)
    except BaseException:
        shutil.rmtree(pending, ignore_errors=True)
        raise
    return home / top, info


def _bad(archive: Path, message: str) -> InputError:
    return InputError(f"not a valid package: {message}", file=str(archive),
                      hint="make it again with `formwright package DIR`")


def _extract(archive: Path, folder: Path, digest: str) -> tuple[PackageInfo, str]:
    try:
        handle = tarfile.open(archive, mode="r:gz")  # noqa: SIM115 - closed by the `with` below
    except (tarfile.TarError, OSError, EOFError) as err:
        raise _bad(archive, f"cannot read it ({err})") from None
    with handle:
        try:
            members = _checked_members(archive, handle)
        except (tarfile.TarError, OSError, EOFError, gzip.BadGzipFile) as err:
            raise _bad(archive, f"cannot read it ({err})") from None
        tops = {PurePosixPath(m.name).parts[0] for m in members}
        if len(tops) != 1:
            raise _bad(archive, "it must hold exactly one folder")
        top = tops.pop()
        listed = _read_manifest(archive, handle, top)
        seen: dict[str, str] = {}
        for member in members:
            rel = PurePosixPath(member.name).relative_to(top).as_posix()
            target = folder / top / rel
            if member.isdir():
                target.mkdir(parents=True, exist_ok=True)
                continue
            if rel == PACKAGE_FILE:
                continue
            if rel not in listed["files"]:
                raise _bad(archive, f"'{rel}' is not in its checksum manifest")
            target.parent.mkdir(parents=True, exist_ok=True)
            source = handle.extractfile(member)
            assert source is not None
            digester = hashlib.sha256()
            with open(target, "wb") as out:
                for chunk in iter(partial(source.read, 1 << 20), b""):
                    digester.update(chunk)
                    out.write(chunk)
            os.chmod(target, 0o755 if member.mode & 0o100 else 0o644)
            seen[rel] = f"sha256:{digester.hexdigest()}"
    for rel, expected in listed["files"].items():
        if rel not in seen:
            raise _bad(archive, f"'{rel}' is listed but missing")
        if seen[rel] != expected:
            raise _bad(archive, f"the checksum of '{rel}' does not match (the archive was altered)")
    if PROJECT_FILE not in seen:
        raise _bad(archive, f"it holds no {PROJECT_FILE}")
    return PackageInfo(str(listed["name"]), str(listed["version"]), digest, len(seen)), top


def _checked_members(archive: Path, handle: tarfile.TarFile) -> list[tarfile.TarInfo]:
    members: list[tarfile.TarInfo] = []
    total = 0
    for member in handle:
        if len(members) >= MAX_ENTRIES:
            raise _bad(archive, f"more than {MAX_ENTRIES} entries")
        path = PurePosixPath(member.name)
        if path.is_absolute() or ".." in path.parts or not path.parts or "\\" in member.name:
            raise _bad(archive, f"the entry '{member.name}' points outside its folder")
        if not (member.isfile() or member.isdir()):
            raise _bad(archive, f"the entry '{member.name}' is not a regular file or folder")
        total += member.size
        if total > MAX_BYTES:
            raise _bad(archive, f"it unpacks to more than {MAX_BYTES // (1024 * 1024)} MB")
        members.append(member)
    return members


def _read_manifest(archive: Path, handle: tarfile.TarFile, top: str) -> dict[str, Any]:
    try:
        member = handle.getmember(f"{top}/{PACKAGE_FILE}")
        source = handle.extractfile(member)
        data = json.loads(source.read(1 << 22).decode("utf-8")) if source else None
    except (KeyError, ValueError, UnicodeDecodeError):
        raise _bad(archive, f"no readable {PACKAGE_FILE}") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT or not isinstance(data.get("files"), dict):
        raise _bad(archive, f"{PACKAGE_FILE} is not a format {FORMAT} checksum manifest")
    return data

