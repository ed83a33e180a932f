"""The local cloud finds a stack by name, and a stack's change sets, without walking every stack (issue 29).

`emulator/indexed.py` keeps a backend's stacks and change sets in dicts indexed by name and stack id.
The answers must be those of the walks they replace (moto's `describe_stacks` and `get_stack`, the
emulator's `next(s for s in stacks.values() if s.name == name)`), however the dicts are changed: checked
here against those walks over random sequences of adds, replacements, deletions and re-pickling. And a
lookup must not walk: the dicts' iteration fails while a backend of many stacks is asked.
"""

from __future__ import annotations

import pickle
from collections import OrderedDict
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from formwright.cloud.emulator import indexed

NAMES = ["a", "b", "c", "d"]


def _stack(name: str, stack_id: str, status: str = "CREATE_COMPLETE") -> Any:
    return SimpleNamespace(name=name, stack_id=stack_id, status=status)


def _walk_named(backend: Any, name: str) -> Any:
    # the emulator's walk before issue 29 (api.create_change_set, api.delete)
    return next((s for s in backend.stacks.values() if s.name == name), None)


def _walk_described(backend: Any, name_or_id: str) -> Any:
    # moto 5's CloudFormationBackend.describe_stacks for one stack, None for its ValidationError
    for stack in backend.stacks.values():
        if stack.name == name_or_id or stack.stack_id == name_or_id:
            return stack
    return next((s for s in backend.deleted_stacks.values() if s.stack_id == name_or_id), None)


def _walk_change_sets(backend: Any, stack_id: str) -> list[str]:
    # api._run's and api.delete's walk before issue 29
    return [k for k, c in backend.change_sets.items() if c.stack_id == stack_id]


OPERATIONS = st.lists(st.tuples(
    st.sampled_from(["add", "replace", "delete", "pop", "popitem", "retire", "update", "setdefault",
                     "move_to_end", "clear", "pickle", "change_set", "move_change_set", "drop_change_set",
                     "plain"]),
    st.sampled_from(NAMES), st.integers(0, 30)), max_size=40)


def _apply(backend: Any, operation: str, name: str, number: int, made: list[int]) -> None:
    stacks, change_sets = backend.stacks, backend.change_sets
    keys = list(stacks)
    key = keys[number % len(keys)] if keys else None

    def new_id() -> str:
        made.append(len(made))
        return f"arn:stack/{name}/{made[-1]}"

    if operation == "add":
        stack_id = new_id()
        status = "REVIEW_IN_PROGRESS" if number % 3 == 0 else "CREATE_COMPLETE"
        stacks[stack_id] = _stack(name, stack_id, status)
    elif operation == "replace" and key is not None:  # the same key, another stack (of any name)
        stacks[key] = _stack(name, key)
    elif operation == "delete" and key is not None:
        del stacks[key]
    elif operation == "pop" and key is not None:
        stacks.pop(key)
        stacks.pop("not-there", None)
    elif operation == "popitem" and key is not None:
        stacks.popitem(last=number % 2 == 0)
    elif operation == "retire" and key is not None:  # DeleteStack: live -> deleted, keyed by its id
        stack = stacks.pop(key)
        backend.deleted_stacks[stack.stack_id] = stack
    elif operation == "update":
        first, second = new_id(), new_id()
        stacks.update({first: _stack(name, first)}, **{second: _stack(name, second)})
    elif operation == "setdefault":
        stack_id = key if key is not None and number % 2 else new_id()
        stacks.setdefault(stack_id, _stack(name, stack_id))
    elif operation == "move_to_end" and key is not None:
        stacks.move_to_end(key, last=number % 2 == 0)
    elif operation == "clear" and number == 0:  # moto's reset
        stacks.clear()
        change_sets.clear()
    elif operation == "pickle":  # a snapshot written and restored
        backend.stacks, backend.change_sets = pickle.loads(pickle.dumps((stacks, change_sets)))
    elif operation == "change_set" and key is not None:
        change_sets[f"arn:changeSet/{len(made)}"] = SimpleNamespace(stack_id=stacks[key].stack_id)
        made.append(len(made))
    elif operation == "move_change_set" and change_sets and key is not None:  # reuse_review's
        change_set_key = list(change_sets)[number % len(change_sets)]
        change_sets[change_set_key].stack_id = stacks[key].stack_id
        indexed.change_sets(backend).reindex(change_set_key)
    elif operation == "drop_change_set" and change_sets:
        del change_sets[list(change_sets)[number % len(change_sets)]]
    elif operation == "plain":  # a plain dict put in their place (a snapshot from before the index)
        backend.stacks, backend.change_sets = OrderedDict(stacks), OrderedDict(change_sets)


@settings(max_examples=150, deadline=None)
@given(OPERATIONS, OPERATIONS)
def test_lookups_answer_as_the_walks_they_replace(before, during) -> None:
    backend = SimpleNamespace(stacks=OrderedDict(), change_sets=OrderedDict(), deleted_stacks={})
    made: list[int] = []
    for operation in before:
        _apply(backend, operation[0], operation[1], operation[2], made)
        indexed.index(backend)
    watched = indexed.stacks(backend)
    old_keys = set(watched)
    with watched.watching() as added:
        for operation in during:
            if operation[0] not in ("pickle", "plain"):  # the watch is of this dict
                _apply(backend, operation[0], operation[1], operation[2], made)
    assert set(added.added) == set(watched) - old_keys  # no_half_made's removals, exactly the old diff
    ids = [s.stack_id for s in [*backend.stacks.values(), *backend.deleted_stacks.values()]]
    for name in [*NAMES, "missing", *ids, "arn:stack/missing"]:
        assert indexed.stack_named(backend, name) is _walk_named(backend, name)
        assert indexed.stacks_named(backend, name) == [s for s in backend.stacks.values() if s.name == name]
        assert indexed.described(backend, name) is _walk_described(backend, name)
        assert indexed.change_set_keys_of(backend, name) == _walk_change_sets(backend, name)


class _NoWalk:
    """Iteration of the indexed dicts fails while installed: a lookup that walks them shows."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.monkeypatch = monkeypatch

    def __enter__(self) -> None:
        def walk(*args: Any, **kwargs: Any) -> Any:
            raise AssertionError("a lookup walked every stack or change set")

        for cls in (indexed.Stacks, indexed.ChangeSets):
            for method in ("__iter__", "__reversed__", "keys", "values", "items"):
                self.monkeypatch.setattr(cls, method, walk)

    def __exit__(self, *exc: Any) -> None:
        self.monkeypatch.undo()


def test_lookups_in_a_backend_of_many_stacks_do_not_walk_them(monkeypatch) -> None:
    from moto.cloudformation.exceptions import ValidationError
    from moto.cloudformation.models import CloudFormationBackend

    from formwright.cloud import moto_server
    from formwright.cloud.emulator import api

    moto_server.patch_moto()
    backend = CloudFormationBackend("eu-west-1", "123456789012")
    assert type(backend.stacks) is indexed.Stacks and type(backend.change_sets) is indexed.ChangeSets
    for number in range(2000):
        stack_id = f"arn:aws:cloudformation:eu-west-1:123456789012:stack/s{number}/{number}"
        backend.stacks[stack_id] = _stack(f"s{number}", stack_id)
        backend.change_sets[f"arn:changeSet/{number}"] = SimpleNamespace(stack_id=stack_id)
    gone = _stack("gone", "arn:stack/gone/1", "DELETE_COMPLETE")
    backend.deleted_stacks[gone.stack_id] = gone
    wanted = backend.stacks["arn:aws:cloudformation:eu-west-1:123456789012:stack/s1500/1500"]
    with _NoWalk(monkeypatch):
        assert backend.describe_stacks("s1500") == [wanted]
        assert backend.describe_stacks(wanted.stack_id) == [wanted]
        assert backend.describe_stacks(gone.stack_id) == [gone]
        with pytest.raises(ValidationError, match="Stack with id new does not exist"):
            backend.describe_stacks("new")  # the usual first DescribeStacks of a deploy: a miss, no walk
        assert backend.get_stack("s1500") is wanted
        assert backend.get_stack(gone.stack_id) is gone
        with pytest.raises(ValidationError):
            backend.get_stack("new")
        assert indexed.stack_named(backend, "new") is None  # CreateChangeSet's and reuse_review's
        assert indexed.change_set_keys_of(backend, wanted.stack_id) == ["arn:changeSet/1500"]
        with api.no_half_made(backend):  # the success path copies neither dict
            backend.stacks["arn:stack/new/1"] = _stack("new", "arn:stack/new/1")
    with pytest.raises(RuntimeError), api.no_half_made(backend):  # the failure path takes back its stack
        backend.stacks["arn:stack/newer/1"] = _stack("newer", "arn:stack/newer/1")
        raise RuntimeError("a bug of the emulator")
    assert "arn:stack/newer/1" not in backend.stacks and "arn:stack/new/1" in backend.stacks
