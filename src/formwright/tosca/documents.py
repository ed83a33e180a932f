"""Loading a service template and everything it imports, with source lines, without any network.

Every document is read with formwright's line-annotated YAML loader, so later checks can say
`file:line`. Imports are followed recursively as local files only; an import by URL is refused
(a transform must never depend on the network).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from formwright import sandbox
from formwright.errors import InputError
from formwright.template import line_of
from formwright.template.yaml_loader import TemplateLoader, load_yaml_text
from formwright.tosca.source import Source

_URL = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*://")


@dataclass
class Document:
    """One loaded YAML file: where it is, how to name it, and its line-annotated data."""

    path: Path
    shown: str
    data: dict
    duplicates: list[tuple[str, int, int]] = field(default_factory=list)  # (key, line, first line)

    def line(self, value: Any, key: str | None = None) -> int | None:
        """The line of `value` (or of `key` in it) in this document."""
        return line_of(value, key)


@dataclass
class Documents:
    """The entry service template and every document it imports, in load order."""

    entry: Document
    imported: list[Document] = field(default_factory=list)
    entry_imports: list[Path] = field(default_factory=list)

    def all(self) -> list[Document]:
        """Imported documents first, then the entry (later definitions win)."""
        return [*self.imported, self.entry]


def load_document(path: Path, shown: str) -> Document:
    """Read one TOSCA YAML file; malformed YAML becomes an InputError at `file:line`."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise InputError(f"cannot read: {err}", file=shown) from None
    duplicates: list[tuple[str, int, int]] = []
    try:
        # a duplicate key is PyYAML's "last one wins" in tosca-parser (a warning here, see `loader`)
        data = load_yaml_text(text, TemplateLoader, file=shown, json_fallback=True, duplicates=duplicates)
    except InputError as err:
        raise InputError(err.message.replace("YAML/JSON", "YAML"), file=shown, line=err.line) from None
    if not isinstance(data, dict):
        raise InputError("a TOSCA document must be a YAML mapping", file=shown, line=1)
    return Document(path=path, shown=shown, data=data, duplicates=duplicates)


def _import_file(entry: Any, doc: Document) -> tuple[str, int | None]:
    line = line_of(entry) or doc.line(doc.data, "imports")
    if isinstance(entry, str):
        return entry, line
    if isinstance(entry, dict):
        if "file" in entry:
            return str(entry["file"]), line
        if len(entry) == 1:
            (value,) = entry.values()
            if isinstance(value, str):
                return value, line
            if isinstance(value, dict) and "file" in value:
                return str(value["file"]), line_of(value) or line
    raise InputError("an import must name a file", file=doc.shown, line=line)


def _resolve_import(name: str, line: int | None, doc: Document, source: Source) -> Path:
    if _URL.match(name):
        raise InputError(f"import '{name}' is a URL; imports must be local files", file=doc.shown, line=line,
                         hint="download the file next to the service template and import it by path")
    if source.is_archive:  # extracted to a private folder, confined to it below
        target = (doc.path.parent / name).resolve()
    else:
        target = sandbox.confine(name, what=f"import '{name}'", base=doc.path.parent, file=doc.shown,
                                 line=line).resolve()
    if source.is_archive and not target.is_relative_to(source.root):
        raise InputError(f"import '{name}' points outside the archive", file=doc.shown, line=line)
    if not target.is_file():
        raise InputError(f"imported file '{name}' not found", file=doc.shown, line=line)
    return target


def load_documents(source: Source) -> Documents:
    """Load the entry template of `source` and, depth first, every local file it imports."""
    entry = load_document(source.entry, source.shown(source.entry))
    docs = Documents(entry=entry)
    seen: set[Path] = {source.entry}

    def follow(doc: Document) -> list[Path]:
        imports = doc.data.get("imports") or []
        if not isinstance(imports, list):
            raise InputError("'imports' must be a list", file=doc.shown, line=doc.line(doc.data, "imports"))
        paths = []
        for item in imports:
            name, line = _import_file(item, doc)
            path = _resolve_import(name, line, doc, source)
            paths.append(path)
            if path not in seen:
                seen.add(path)
                child = load_document(path, source.shown(path))
                follow(child)
                docs.imported.append(child)
        return paths

    docs.entry_imports = follow(entry)
    return docs
