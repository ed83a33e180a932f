"""Named objects that know their parent and their dotted path (e.g. `shop.stacks.database`)."""

from __future__ import annotations


class Node:
    """An object in the project tree: a name, a parent, and where it was written."""

    def __init__(self, name: str, parent: Node | None = None, *, file: str | None = None,
                 line: int | None = None, group: str | None = None) -> None:
        self.name = name
        self.parent = parent
        self.file: str | None = file if file is not None else (parent.file if parent else None)
        self.line = line
        self.group = group  # the collection this node sits in under its parent, e.g. "stacks"

    @property
    def path(self) -> str:
        """The dotted path from the root, e.g. `shop.stacks.database`."""
        if self.parent is None:
            return self.name
        middle = f".{self.group}" if self.group else ""
        return f"{self.parent.path}{middle}.{self.name}"

    @property
    def root(self) -> Node:
        """The topmost node (the project)."""
        node = self
        while node.parent is not None:
            node = node.parent
        return node

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.path}>"
