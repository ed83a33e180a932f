"""CloudFormation logical names: alphanumeric, readable, unique."""

from __future__ import annotations

import re

_WORD = re.compile(r"[A-Za-z0-9]+")


def camel(text: str) -> str:
    """`my-web_server.1` → `MyWebServer1`; never empty, never starting with a digit."""
    words = _WORD.findall(text)
    name = "".join(w[:1].upper() + w[1:] for w in words) or "Node"
    return name if name[0].isalpha() else f"N{name}"


class Namer:
    """Hands out unique logical names (a suffix number on collision)."""

    def __init__(self) -> None:
        self._used: set[str] = set()

    def reserve(self, name: str) -> None:
        """Keep `name` from being handed out (a logical id given by its fixed name)."""
        self._used.add(name)

    def name(self, *parts: str) -> str:
        """A fresh logical name made of `parts`."""
        base = "".join(camel(p) for p in parts)[:200]
        candidate, n = base, 2
        while candidate in self._used:
            candidate, n = f"{base}{n}", n + 1
        self._used.add(candidate)
        return candidate
