"""`!toml settings.toml#db.port`: a value from a TOML file of the project (its path relative to the
project folder)."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any


class TomlValue:
    """A formwright resolver: `resolve(argument, context)` returns text (or a list of text)."""

    secret = False  # True would mask the value everywhere, as !secret's is

    def resolve(self, argument: Any, context: dict[str, Any]) -> str | list[str]:
        """The value at the dotted key of the TOML file."""
        path, _, key = str(argument).partition("#")
        data: Any = tomllib.loads((Path(context["directory"]) / path).read_text(encoding="utf-8"))
        for part in key.split("."):
            if not isinstance(data, dict) or part not in data:
                raise KeyError(f"{path} has no key {key}")  # formwright shows it as one line at the tag
            data = data[part]
        return [str(item) for item in data] if isinstance(data, list) else str(data)
