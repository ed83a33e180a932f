"""A stack's inputs as prepared for one deploy or plan."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass
class Prepared:
    """A stack's inputs at deploy time: resolved parameters, processed body and its hash."""

    parameters: dict[str, str]
    template: dict[str, Any]
    body: str
    hash: str
    secrets: set[str]

    def effective_parameters(self) -> dict[str, str]:
        """The values the stack will have: those given, and the template's defaults for the rest."""
        values = {}
        for name, decl in (self.template.get("Parameters") or {}).items():
            if isinstance(decl, dict) and "Default" in decl:
                default = decl["Default"]
                values[name] = ",".join(map(str, default)) if isinstance(default, list) else str(default)
        values.update(self.parameters)
        return values
