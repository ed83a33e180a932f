"""`hooks:` of formwright.yaml: steps run around a project stack's deploy and delete.

    hooks:
      before_deploy: [[python3, hooks/check.py], {run: mypkg.hooks:seed, timeout: 60, always: true}]
      after_deploy: [hooks/smoke.sh]
      on_failure: [{plugin: notify}]

Set on the project, a group or a stack; per event the nearest level's list wins (as every other key flows
project -> group -> stack). Each item is an action as instance triggers run them (lifecycle/actions.py):
a command (a string split into words, or a list: no shell), a Python `module:function`, or a
`formwright.hooks` plugin; a mapping form adds `timeout` and `always`. engine/hooks.py runs them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from formwright.errors import ProjectError
from formwright.model.keys import check_keys, did_you_mean
from formwright.template.document import Mapping

EVENTS = ("before_deploy", "after_deploy", "before_delete", "after_delete", "on_failure")
ACTION_KEYS = {
    "run": "the action: a command (string or list, no shell) or a Python module:function",
    "plugin": "a hook published in the formwright.hooks entry-point group",
    "timeout": "seconds the action may run (default 300)",
    "always": "true: run even when the stack has no change",
}
HINT = ("hooks: {before_deploy: [[python3, hooks/check.py]], "
        "after_deploy: [{run: mypkg.hooks:smoke, timeout: 60}]}")


@dataclass(frozen=True)
class Hook:
    """One action of one event."""

    event: str
    action: str | list[str] | None  # None for a plugin
    plugin: str | None
    timeout: float
    always: bool
    line: int | None

    @property
    def is_python(self) -> bool:
        """True for a `module:function` action."""
        from formwright.lifecycle.manifest import PYTHON_HOOK

        return isinstance(self.action, str) and bool(PYTHON_HOOK.match(self.action.strip()))

    def shown(self) -> str:
        """The action on one line, for messages."""
        if self.plugin:
            return f"plugin {self.plugin}"
        return self.action if isinstance(self.action, str) else " ".join(self.action or [])


def read_hooks(value: Any, file: str, line: int | None) -> dict[str, list[Hook]]:
    """A `hooks:` mapping, checked: event -> its actions."""
    from formwright.lifecycle.manifest import _parse_action, _parse_timeout

    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ProjectError("`hooks` must map an event to a list of actions", file=file, line=line, hint=HINT)
    for event in value:
        if event not in EVENTS:
            raise ProjectError(f"unknown hook event '{event}'", file=file, line=value.line_of(event) or line,
                               hint=unknown_event_hint(str(event)))
    hooks: dict[str, list[Hook]] = {}
    for event, items in value.items():
        eline = value.line_of(event) or line
        if items is None:
            hooks[event] = []  # `before_deploy: ~` switches off what a group or the project set
            continue
        if not isinstance(items, list):
            items = [items] if isinstance(items, (str, Mapping)) else None
        if items is None:
            raise ProjectError(f"hooks.{event} must be a list of actions", file=file, line=eline, hint=HINT)
        result = []
        for item in items:
            iline = getattr(item, "line", None) or eline
            if isinstance(item, Mapping):
                check_keys(item, ACTION_KEYS, file, f"a {event} hook")
                if ("run" in item) == ("plugin" in item):
                    raise ProjectError(f"a {event} hook needs `run` or `plugin` (one of them)", file=file,
                                       line=iline, hint=HINT)
                plugin = item.get("plugin")
                if plugin is not None and (not isinstance(plugin, str) or not plugin.strip()):
                    raise ProjectError("`plugin` names a formwright.hooks entry point", file=file, line=iline)
                action = None if plugin else _parse_action(item.get("run"), file, iline)
                always = item.get("always", False)
                if not isinstance(always, bool):
                    raise ProjectError("`always` must be true or false", file=file,
                                       line=item.line_of("always"))
                timeout = _parse_timeout(item.get("timeout"), file, item.line_of("timeout") or iline)
                result.append(Hook(event, action, plugin, timeout, always, iline))
            else:
                action = _parse_action(item, file, iline)
                result.append(Hook(event, action, None, _parse_timeout(None, file, iline), False, iline))
        hooks[event] = result
    return hooks


def stack_hooks(project_hooks: Any, body_hooks: Any, file: str, line: int | None) -> dict[str, list[Hook]]:
    """A stack's hooks: the project's, then its group's and its own (already merged), event by event."""
    if project_hooks is not None and not isinstance(project_hooks, Mapping):
        raise ProjectError("`hooks` must map an event to a list of actions", file=file, line=line, hint=HINT)
    merged = {**read_hooks(project_hooks, file, line), **read_hooks(body_hooks, file, line)}
    return {event: actions for event, actions in merged.items() if actions}


def unknown_event_hint(event: str) -> str:
    """The nearest event name (sceptre's `before_create` reads as `before_deploy` here)."""
    sceptre = {"before_create": "before_deploy", "before_update": "before_deploy", "after_create":
               "after_deploy", "after_update": "after_deploy", "before_launch": "before_deploy"}
    if event in sceptre:
        return f"sceptre's `{event}` is `{sceptre[event]}` here"
    return did_you_mean(event, list(EVENTS))
