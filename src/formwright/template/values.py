"""Template data with source lines: `Mapping` and `Sequence` remember where they (and each key) were
written; `line_of` reads it back and `plain` drops it. A `SourceLine` is a line that also knows its file."""

from __future__ import annotations

from typing import Any


class SourceLine(int):
    """A line number that knows its file. Values merged into a document from another file (an environment's
    overlay over formwright.yaml) keep pointing at that file, whichever file the code reporting an error at
    their line was reading: `FormwrightError` takes the file from the line."""

    def __new__(cls, line: int, file: str | None = None) -> SourceLine:
        value = super().__new__(cls, line)
        value.file = file
        return value

    file: str | None


class Mapping(dict):
    """A dict that remembers the source line of itself and of each key."""

    __slots__ = ("file", "key_lines", "line")

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.line: int | None = None
        self.key_lines: dict[str, int] = {}
        self.file: str | None = None

    def line_of(self, key: str) -> int | None:
        """The line where `key` was written, else the line of this mapping."""
        return self.key_lines.get(key, self.line)

    def __reduce__(self):  # keeps copy.deepcopy and pickle working with __slots__
        return (_rebuild_mapping, (dict(self), self.line, self.key_lines, self.file))


def _rebuild_mapping(items: dict, line: int | None, key_lines: dict, file: str | None) -> Mapping:
    m = Mapping(items)
    m.line, m.key_lines, m.file = line, dict(key_lines), file
    return m


class Sequence(list):
    """A list that remembers the source line it started on."""

    __slots__ = ("line",)

    def __init__(self, *args: Any) -> None:
        super().__init__(*args)
        self.line: int | None = None

    def __reduce__(self):
        return (_rebuild_sequence, (list(self), self.line))


def _rebuild_sequence(items: list, line: int | None) -> Sequence:
    s = Sequence(items)
    s.line = line
    return s


def line_of(value: Any, key: str | None = None) -> int | None:
    """Best-known source line of `value` (or of `key` inside it)."""
    if isinstance(value, Mapping):
        return value.line_of(key) if key is not None else value.line
    if isinstance(value, Sequence):
        return value.line
    return None


def copied(value: Any) -> Any:
    """A copy of template data that keeps its line annotations: as `copy.deepcopy`, five times faster
    (stacks sharing one template file each get their own copy of it, parsed once)."""
    if isinstance(value, Mapping):
        mapping = Mapping({k: copied(v) for k, v in value.items()})
        mapping.line, mapping.key_lines, mapping.file = value.line, dict(value.key_lines), value.file
        return mapping
    if isinstance(value, Sequence):
        sequence = Sequence([copied(v) for v in value])
        sequence.line = value.line
        return sequence
    if isinstance(value, dict):
        return {k: copied(v) for k, v in value.items()}
    if isinstance(value, list):
        return [copied(v) for v in value]
    return value


def plain(value: Any) -> Any:
    """A copy of `value` with ordinary dicts and lists (no line annotations)."""
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value
