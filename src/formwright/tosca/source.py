"""Finding the service template in SRC: a YAML file, a folder, or a CSAR archive.

A CSAR is a zip holding `TOSCA-Metadata/TOSCA.meta` (whose `Entry-Definitions` names the service
template) or a single top-level YAML file. It is extracted into a private temporary folder; entries
that would land outside it (`..`, absolute paths, symlinks) are refused before anything is written.
Extraction is bounded (a zip bomb is refused, nothing big written): at most MAX_ENTRIES entries and
MAX_TOTAL bytes in all, counted while writing (a header may lie), and no entry inflating more than
MAX_RATIO times.
"""

from __future__ import annotations

import shutil
import stat
import tempfile
import zipfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from formwright import sandbox
from formwright.errors import InputError

META_PATH = "TOSCA-Metadata/TOSCA.meta"
META_HINT = "TOSCA.meta is a text file with a line 'Entry-Definitions: <service template>'"
MAX_ENTRIES = 10_000
MAX_TOTAL = 256 * 1024 * 1024
MAX_RATIO = 200
_CHUNK = 1 << 16
YAML_SUFFIXES = (".yaml", ".yml")
CSAR_SUFFIXES = (".csar", ".zip")


@dataclass
class Source:
    """The service template to parse: its entry file, the folder artifacts are relative to, and cleanup."""

    entry: Path
    root: Path
    display: str
    _tempdir: Path | None = field(default=None, repr=False)

    @property
    def is_archive(self) -> bool:
        """True when the source was extracted from a CSAR."""
        return self._tempdir is not None

    def close(self) -> None:
        """Remove the extracted CSAR, if any."""
        if self._tempdir is not None:
            shutil.rmtree(self._tempdir, ignore_errors=True)
            self._tempdir = None

    def __enter__(self) -> Source:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def shown(self, path: Path) -> str:
        """How to name `path` (a file of this source) in a message: relative to the CSAR when extracted."""
        try:
            relative = path.relative_to(self.root).as_posix()
        except ValueError:
            return str(path)
        if self._tempdir is not None:
            return f"{self.display}!{relative}"
        base = Path(self.display)
        return str(base / relative) if base.is_dir() else str(base.parent / relative)


def open_source(src: Path) -> Source:
    """Resolve SRC (a service template, a folder holding one, or a CSAR) to a `Source`."""
    if not src.exists():
        raise InputError("no such file or folder", file=str(src))
    sandbox.anchor(src if src.is_dir() else src.parent)
    sandbox.confine(src, what="TOSCA source", base=Path.cwd())
    if src.is_dir():
        return _from_folder(src)
    if src.suffix.lower() in CSAR_SUFFIXES or zipfile.is_zipfile(src):
        return _from_csar(src)
    if src.suffix.lower() in YAML_SUFFIXES:
        return Source(entry=src.resolve(), root=src.resolve().parent, display=str(src))
    raise InputError("not a TOSCA service template or CSAR", file=str(src),
                     hint="give a .yaml file, a folder, or a .csar/.zip archive")


def _from_folder(folder: Path) -> Source:
    meta = folder / META_PATH
    if meta.exists() and not meta.is_file():
        raise InputError(f"{META_PATH} is a folder, not the metadata file", file=str(meta), hint=META_HINT)
    if meta.is_file():
        entry = _entry_from_meta(meta.read_text(encoding="utf-8", errors="replace"), str(meta))
        return Source(
            entry=_inside(folder.resolve(), entry, str(meta)), root=folder.resolve(), display=str(folder)
        )
    candidates = sorted(p for p in folder.iterdir() if p.suffix.lower() in YAML_SUFFIXES and p.is_file())
    if len(candidates) != 1:
        found = ", ".join(p.name for p in candidates) or "none"
        raise InputError(f"cannot tell the service template in this folder (top-level YAML files: {found})",
                         file=str(folder), hint=f"add {META_PATH} with Entry-Definitions, or name the file")
    return Source(entry=candidates[0].resolve(), root=folder.resolve(), display=str(folder))


def _entry_from_meta(text: str, file: str) -> str:
    for number, raw in enumerate(text.splitlines(), start=1):
        key, sep, value = raw.partition(":")
        if sep and key.strip() == "Entry-Definitions":
            if not value.strip():
                raise InputError("Entry-Definitions is empty", file=file, line=number)
            return value.strip()
    raise InputError("TOSCA.meta has no Entry-Definitions", file=file,
                     hint="add a line 'Entry-Definitions: <service template>.yaml'")


def _inside(root: Path, relative: str, file: str) -> Path:
    target = (root / relative).resolve()
    if not target.is_relative_to(root):
        raise InputError(f"Entry-Definitions '{relative}' points outside the archive", file=file)
    if not target.is_file():
        raise InputError(f"Entry-Definitions '{relative}' is not in the archive", file=file)
    return target


def _check_member(info: zipfile.ZipInfo, csar: str) -> None:
    name = info.filename
    path = PurePosixPath(name.replace("\\", "/"))
    if path.is_absolute() or name.startswith(("/", "\\")) or (len(name) > 1 and name[1] == ":"):
        raise InputError(f"archive entry '{name}' has an absolute path", file=csar,
                         hint="a CSAR may only hold relative paths")
    if ".." in path.parts:
        raise InputError(f"archive entry '{name}' escapes the archive folder", file=csar,
                         hint="a CSAR may not hold '..' in paths")
    mode = info.external_attr >> 16
    if stat.S_ISLNK(mode):
        raise InputError(f"archive entry '{name}' is a symbolic link", file=csar,
                         hint="a CSAR may not hold symbolic links")


def _extract(archive: zipfile.ZipFile, members: list[zipfile.ZipInfo], target: Path, csar: str) -> None:
    """Extract `members` into `target`, stopping at the first bound crossed (see the module doc)."""
    if len(members) > MAX_ENTRIES:
        raise InputError(f"the archive has {len(members)} entries, more than {MAX_ENTRIES}", file=csar)
    written = 0
    for info in members:
        if info.file_size > MAX_RATIO * max(info.compress_size, 1) and info.file_size > _CHUNK:
            ratio = info.file_size // max(info.compress_size, 1)
            raise InputError(f"archive entry '{info.filename}' inflates {ratio} times (a zip bomb?); refused",
                             file=csar)
        path = target / info.filename
        if info.is_dir():
            path.mkdir(parents=True, exist_ok=True)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        with archive.open(info) as source, path.open("wb") as sink:
            while chunk := source.read(_CHUNK):
                written += len(chunk)
                if written > MAX_TOTAL:
                    raise InputError(f"the archive holds more than {MAX_TOTAL:,} bytes; refused",
                                     file=csar)
                sink.write(chunk)


def _from_csar(csar: Path) -> Source:
    try:
        archive = zipfile.ZipFile(csar)
    except (zipfile.BadZipFile, OSError, ValueError) as err:
        raise InputError(f"not a valid CSAR (zip) archive: {err}", file=str(csar)) from None
    with archive:
        members = archive.infolist()
        for info in members:
            _check_member(info, str(csar))
        names = {m.filename.rstrip("/") for m in members}
        tempdir = Path(tempfile.mkdtemp(prefix="formwright-csar-"))
        try:
            try:
                _extract(archive, members, tempdir, str(csar))
            except InputError:
                raise
            except Exception as err:  # noqa: BLE001 - zipfile, zlib and the OS raise many types here
                raise InputError(f"not a valid CSAR (zip) archive: {type(err).__name__}: {err}",
                                 file=str(csar)) from None
            root = tempdir.resolve()
            if (root / META_PATH).is_dir():
                raise InputError(f"{META_PATH} is a folder in the archive, not the metadata file",
                                 file=str(csar), hint=META_HINT)
            if META_PATH in names:
                meta_text = (root / META_PATH).read_text(encoding="utf-8", errors="replace")
                entry = _inside(
                    root, _entry_from_meta(meta_text, f"{csar}!{META_PATH}"), f"{csar}!{META_PATH}"
                )
            else:
                top = sorted(n for n in names if "/" not in n and n.lower().endswith(YAML_SUFFIXES))
                if len(top) != 1:
                    raise InputError(
                        "CSAR has no entry definitions",
                        file=str(csar),
                        hint=f"add {META_PATH} with Entry-Definitions, or one top-level YAML file",
                    )
                entry = root / top[0]
        except BaseException:
            shutil.rmtree(tempdir, ignore_errors=True)
            raise
    return Source(entry=entry, root=root, display=str(csar), _tempdir=tempdir)
