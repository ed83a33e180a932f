"""Plugins: what installed packages publish in formwright's entry-point groups, found and loaded one way.

- `formwright.resolvers`: a class with `resolve(argument, context) -> str | list[str]` and `secret: bool`,
  used as the tag `!NAME ARG` in formwright.yaml;
- `formwright.hooks`: a `module:function` taking the hook context, used as `{plugin: NAME}` in `hooks:`;
- `formwright.macros`: a Lambda-style `handler(event, context)` macro (macros/registry.py);
- `formwright.template_handlers`: a class with `handle(arguments, context) -> str` (a template's text),
  used as a stack's `template: {type: NAME, ...}`.

Finding the names reads only the installed packages' metadata; a plugin is imported when it is first
used, so a broken one fails only the project that uses it: one line naming its distribution and entry
point, exit 2.
"""

from __future__ import annotations

import functools
import inspect
import sys
from typing import TYPE_CHECKING, Any

from formwright.errors import InputError

if TYPE_CHECKING:
    import importlib.metadata

RESOLVERS = "formwright.resolvers"
HOOKS = "formwright.hooks"
MACROS = "formwright.macros"
TEMPLATE_HANDLERS = "formwright.template_handlers"

# the method each group's object must have, and the arguments it is called with
_METHODS = {RESOLVERS: ("resolve", 2), TEMPLATE_HANDLERS: ("handle", 2)}


class PluginError(InputError):
    """An installed plugin that cannot be used (it does not import, or has the wrong shape)."""


def entry_points(group: str) -> dict[str, importlib.metadata.EntryPoint]:
    """The entry points of `group` by name (the first installed wins, as importlib lists them); read once
    per import path."""
    return _entry_points(group, tuple(sys.path))


@functools.lru_cache(maxsize=16)
def _entry_points(group: str, _path: tuple[str, ...]) -> dict[str, importlib.metadata.EntryPoint]:
    import importlib.metadata  # ~20 ms, and the scan of every installed distribution: only when asked

    found: dict[str, importlib.metadata.EntryPoint] = {}
    for entry_point in importlib.metadata.entry_points(group=group):
        found.setdefault(entry_point.name, entry_point)
    return found


def names(group: str) -> list[str]:
    """The names published in `group`, sorted (no plugin is imported)."""
    return sorted(entry_points(group))


def describe(entry_point: importlib.metadata.EntryPoint) -> str:
    """`distribution 'pkg' 1.0, entry point formwright.resolvers:upper = pkg.mod:Upper`."""
    dist = getattr(entry_point, "dist", None)
    owner = f"distribution '{dist.name}' {dist.version}" if dist is not None else "an unknown distribution"
    return f"{owner}, entry point {entry_point.group}:{entry_point.name} = {entry_point.value}"


def load(group: str, name: str) -> Any:
    """The object plugin `name` of `group` publishes, checked for the shape its group needs (a resolver
    or template handler class is instantiated). PluginError (exit 2) when it cannot be used."""
    entry_point = entry_points(group).get(name)
    if entry_point is None:
        raise PluginError(f"no plugin '{name}' in {group}",
                          hint=f"installed: {', '.join(names(group)) or 'none'}")
    return _loaded(entry_point)


@functools.lru_cache(maxsize=64)
def _loaded(entry_point: importlib.metadata.EntryPoint) -> Any:
    where = describe(entry_point)
    try:
        value = entry_point.load()
    except Exception as err:  # noqa: BLE001 - any import failure of third-party code is its own line
        raise PluginError(f"plugin {entry_point.name} does not load ({where}): {type(err).__name__}: {err}",
                          hint="reinstall or fix the package") from None
    wanted = _METHODS.get(entry_point.group)
    if wanted is None:
        if not callable(value):
            raise PluginError(f"plugin {entry_point.name} is not callable ({where})",
                              hint="publish a function taking the context")
        return value
    method, arity = wanted
    try:
        instance = value() if inspect.isclass(value) else value
    except Exception as err:  # noqa: BLE001 - the plugin's constructor failed
        raise PluginError(f"plugin {entry_point.name} cannot be made ({where}): {type(err).__name__}: {err}",
                          hint="its class must take no arguments") from None
    function = getattr(instance, method, None)
    if not callable(function) or not _takes(function, arity):
        raise PluginError(f"plugin {entry_point.name} has no method {method}(argument, context) ({where})",
                          hint=f"define {method}(self, argument, context) on the class")
    return instance


def _takes(function: Any, count: int) -> bool:
    """True when `function` can be called with `count` positional arguments."""
    try:
        inspect.signature(function).bind(*range(count))
    except TypeError:
        return False
    except ValueError:  # no signature (a builtin): trust it
        return True
    return True
