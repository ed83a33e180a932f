"""moto's stacks and change sets, found by name or by stack without walking them all (issue 29).

moto keeps a backend's stacks and change sets in plain dicts keyed by id and finds a stack by name by
walking every stack, on every DescribeStacks, CreateChangeSet and DeleteStack: over a deploy of N stacks,
N^2 work. Here the backend's two dicts are replaced by dict subclasses that keep, beside their items, an
index of them by some of their values' attributes (a stack's name and id, a change set's stack id),
updated by every way of adding, replacing and removing an item, so it holds however moto or the
emulator change them. The index is checked on use (a candidate whose attribute no longer matches is
skipped); an attribute changed after its item was added must be re-added (`ChangeSets.reindex`).

`stacks(backend)` and `change_sets(backend)` give the indexed dicts, converting a plain one found in
their place (a backend restored from an older snapshot) once.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

_MISSING = object()


class Additions:
    """The keys a dict gained since the watch began (present now and not then), kept as it changes."""

    def __init__(self) -> None:
        self.added: dict[str, None] = {}
        self.removed: set[str] = set()

    def add(self, key: str) -> None:
        """`key` was added to the dict."""
        if key in self.removed:
            self.removed.discard(key)
        else:
            self.added[key] = None

    def remove(self, key: str) -> None:
        """`key` was removed from the dict."""
        if key in self.added:
            del self.added[key]
        else:
            self.removed.add(key)


class Indexed(OrderedDict[str, Any]):
    """An OrderedDict whose values are also found by the attributes in FIELDS."""

    FIELDS: tuple[str, ...] = ()

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._index: dict[str, dict[Any, dict[str, None]]] = {field: {} for field in self.FIELDS}
        self._watches: list[Additions] = []
        super().__init__()
        self.update(*args, **kwargs)

    def _enter(self, key: str, value: Any) -> None:
        for field, index in self._index.items():
            attribute = getattr(value, field, _MISSING)
            if attribute is not _MISSING:
                index.setdefault(attribute, {})[key] = None

    def _leave(self, key: str, value: Any) -> None:
        for field, index in self._index.items():
            bucket = index.get(getattr(value, field, _MISSING))
            if bucket is not None:
                bucket.pop(key, None)
                if not bucket:
                    del index[getattr(value, field)]

    def __setitem__(self, key: str, value: Any) -> None:
        old = OrderedDict.get(self, key, _MISSING)
        if old is not _MISSING:
            self._leave(key, old)
        super().__setitem__(key, value)
        self._enter(key, value)
        if old is _MISSING:
            for watch in self._watches:
                watch.add(key)

    def __delitem__(self, key: str) -> None:
        value = self[key]
        super().__delitem__(key)
        self._leave(key, value)
        for watch in self._watches:
            watch.remove(key)

    def pop(self, key: str, default: Any = _MISSING) -> Any:
        """As dict.pop."""
        if key in self:
            value = self[key]
            del self[key]
            return value
        if default is _MISSING:
            raise KeyError(key)
        return default

    def popitem(self, last: bool = True) -> tuple[str, Any]:
        """As OrderedDict.popitem."""
        if not self:
            raise KeyError("dictionary is empty")
        key = next(reversed(self)) if last else next(iter(self))
        return key, self.pop(key)

    def setdefault(self, key: str, default: Any = None) -> Any:
        """As dict.setdefault."""
        if key not in self:
            self[key] = default
        return self[key]

    def update(self, *args: Any, **kwargs: Any) -> None:  # type: ignore[override]  # dict's overloads
        """As dict.update, each item through __setitem__."""
        for key, value in OrderedDict(*args, **kwargs).items():
            self[key] = value

    def clear(self) -> None:
        """As dict.clear."""
        for key in list(self):
            del self[key]

    def __ior__(self, other: Any) -> Indexed:  # type: ignore[override,misc]  # dict's overloads
        self.update(other)
        return self

    def copy(self) -> Indexed:
        """A copy of the same class, indexed anew."""
        return type(self)(self)

    def __reduce__(self) -> Any:
        # pickled as its items alone: the index is made anew from them when loaded
        return type(self), (), None, None, iter(list(self.items()))

    def keys_by(self, field: str, value: Any) -> list[str]:
        """The keys of the items whose `field` equals `value`, in this dict's order."""
        bucket = self._index[field].get(value)
        if not bucket:
            return []
        keys = [k for k in bucket if getattr(OrderedDict.get(self, k), field, _MISSING) == value]
        if len(keys) > 1:  # several (two stacks of one name): their order is this dict's, not the bucket's
            wanted = set(keys)
            keys = [k for k in self if k in wanted]
        return keys

    def values_by(self, field: str, value: Any) -> list[Any]:
        """The items' values whose `field` equals `value`, in this dict's order."""
        return [self[k] for k in self.keys_by(field, value)]

    @contextmanager
    def watching(self) -> Iterator[Additions]:
        """The keys added while the block runs (and still there), however the dict changed meanwhile."""
        watch = Additions()
        self._watches.append(watch)
        try:
            yield watch
        finally:
            self._watches.remove(watch)


class Stacks(Indexed):
    """A backend's live stacks by id, also found by name and by stack id."""

    FIELDS = ("name", "stack_id")


class ChangeSets(Indexed):
    """A backend's change sets by id, also found by the stack they are for."""

    FIELDS = ("stack_id",)

    def reindex(self, key: str) -> None:
        """Index the change set at `key` again after its stack changed (reuse of a stack in review)."""
        self[key] = self[key]


def stacks(backend: Any) -> Stacks:
    """The backend's stacks, indexed (a plain dict found in their place is converted once)."""
    found = backend.stacks
    if type(found) is not Stacks:
        found = backend.stacks = Stacks(found)
    return found


def change_sets(backend: Any) -> ChangeSets:
    """The backend's change sets, indexed (a plain dict found in their place is converted once)."""
    found = backend.change_sets
    if type(found) is not ChangeSets:
        found = backend.change_sets = ChangeSets(found)
    return found


def index(backend: Any) -> None:
    """Make the backend's stacks and change sets indexed dicts (when moto makes a backend)."""
    stacks(backend)
    change_sets(backend)


def stack_named(backend: Any, name: str) -> Any:
    """The first live stack (in the backend's order) called `name`, or None, as a walk of them would find."""
    found = stacks(backend).values_by("name", name)
    return found[0] if found else None


def stacks_named(backend: Any, name: str) -> list[Any]:
    """Every live stack called `name`, in the backend's order."""
    return stacks(backend).values_by("name", name)


def change_set_keys_of(backend: Any, stack_id: str) -> list[str]:
    """The keys of the change sets for the stack `stack_id`, in the backend's order."""
    return change_sets(backend).keys_by("stack_id", stack_id)


def described(backend: Any, name_or_stack_id: str) -> Any:
    """moto's DescribeStacks of one stack: the first live stack named so or with that id, else the deleted
    stack with that id (keyed by its id: moto and the emulator both file it so), else None."""
    live = stacks(backend)
    keys = live.keys_by("name", name_or_stack_id) + live.keys_by("stack_id", name_or_stack_id)
    if keys:
        if len(keys) > 1:
            wanted = set(keys)
            keys = [k for k in live if k in wanted]
        return live[keys[0]]
    deleted = backend.deleted_stacks.get(name_or_stack_id)
    if deleted is not None and deleted.stack_id == name_or_stack_id:
        return deleted
    return None


def install(models: Any) -> None:
    """A backend's stacks and change sets indexed (the dicts above), and moto's lookups of one stack
    by name or id (DescribeStacks, and get_stack behind DescribeStackEvents, GetTemplate and others) answered
    from the index: the same stack or the same error, without walking every stack."""
    from moto.cloudformation.exceptions import ValidationError

    original_init = models.CloudFormationBackend.__init__

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        original_init(self, *args, **kwargs)
        index(self)

    def describe_stacks(self: Any, name_or_stack_id: str) -> list[Any]:
        if not name_or_stack_id:
            return list(self.stacks.values())
        found = described(self, name_or_stack_id)
        if found is None:
            raise ValidationError(name_or_stack_id)
        return [found]

    def get_stack(self: Any, name_or_stack_id: str) -> Any:
        # moto's: by id among live then deleted stacks, else by name among live ones
        live = stacks(self)
        found = live.get(name_or_stack_id)
        if found is None:
            found = self.deleted_stacks.get(name_or_stack_id)
        if found is None:
            found = stack_named(self, name_or_stack_id)
        if found is None:
            raise ValidationError(name_or_stack_id)
        return found

    models.CloudFormationBackend.__init__ = __init__  # type: ignore[method-assign]  # moto has no hook for this: patched in place
    models.CloudFormationBackend.describe_stacks = describe_stacks  # type: ignore[method-assign]  # moto has no hook for this: patched in place
    models.CloudFormationBackend.get_stack = get_stack  # type: ignore[method-assign]  # moto has no hook for this: patched in place
