"""Running a project stack's `hooks:` (model/hooks.py) around its deploy and delete.

Each action runs as an instance trigger's does (lifecycle/actions.py): a command without a shell or a
Python `module:function` in a child process, in the project folder, the JSON context on stdin, with its
timeout; its output goes to `.formwright/logs/hooks.log` with every secret masked. The context: the
event, the stack (name, CloudFormation name, region, account), its resolved parameters (secrets masked),
the plan's changes, and after a deploy its outputs.

Hooks run only when the stack has a change (an action with `always: true` runs every time): a hook that
runs on every no-op deploy (sceptre's hooks do) cannot tell its users that something was deployed, and a
project of 50 stacks would start 50 processes to change nothing.
"""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from formwright.engine.values import SECRET_MASK
from formwright.lifecycle.actions import OperationLog, Redactor, command_argv, run_command, run_python

if TYPE_CHECKING:
    from formwright.engine.prepared import Prepared
    from formwright.engine.results import StackPlan, StackResult
    from formwright.engine.stack import Stack
    from formwright.model.hooks import Hook

LOG_NAME = "hooks.log"


class HookFailed(Exception):
    """A hook action failed; its message is one line (secrets masked)."""


def hooks_of(stack: Stack, event: str, changed: bool) -> list[Hook]:
    """The actions of `event` to run now: all when the stack changes, else only those marked `always`."""
    config = getattr(stack, "config", None)
    actions = (getattr(config, "hooks", None) or {}).get(event, [])
    return [hook for hook in actions if changed or hook.always]


def run_hooks(stack: Stack, event: str, *, changed: bool, parameters: dict[str, str] | None = None,
              secrets: set[str] | None = None, plan: StackPlan | None = None,
              outputs: dict[str, str] | None = None, target: Any = None) -> None:
    """Run the stack's `event` actions in order; the first failure raises HookFailed."""
    hooks = hooks_of(stack, event, changed)
    if not hooks:
        return
    project = stack.config.project
    secret_values = {(parameters or {}).get(key) for key in secrets or ()} - {None, ""}
    redactor = Redactor({*(getattr(stack, "secret_values", ()) or ()), *secret_values})
    log = OperationLog(project.state_dir / "logs" / LOG_NAME, redactor)
    context = redactor.data(_context(stack, event, parameters or {}, secrets or set(), plan, outputs, target))
    cwd = Path(project.directory)
    for hook in hooks:
        where = f"{stack.name}/{event}"
        log.write(where, f"running {hook.shown()}")
        if hook.plugin:
            result = run_python(_plugin_target(hook.plugin), context, cwd=cwd, timeout=hook.timeout, log=log,
                                where=where)
        elif hook.is_python:
            assert isinstance(hook.action, str)
            result = run_python(hook.action, context, cwd=cwd, timeout=hook.timeout, log=log, where=where)
        else:
            assert hook.action is not None
            result = run_command(command_argv(hook.action, cwd), context, cwd=cwd, timeout=hook.timeout,
                                 log=log, where=where)
        if not result.ok:
            message = f"{event} hook {hook.shown()} failed: {result.error or 'no reason given'}"
            log.write(where, message, "error")
            raise HookFailed(redactor.text(message) + f" (its output: {log.path})")


def check_plugins(config: Any) -> None:
    """Every `{plugin: NAME}` hook of a stack loads (before any write): else one line at its hook."""
    from formwright import plugins

    for actions in config.hooks.values():
        for hook in actions:
            if hook.plugin:
                try:
                    plugins.load(plugins.HOOKS, hook.plugin)
                except plugins.PluginError as err:
                    raise plugins.PluginError(f"hook {hook.event}: {err.message}", file=config.project.file,
                                              line=hook.line, hint=err.hint) from None


def _plugin_target(name: str) -> str:
    """The `module:function` of a `formwright.hooks` plugin, loaded here first so that a broken plugin is
    one line naming its distribution (plugins.load raises PluginError)."""
    from formwright import plugins

    plugins.load(plugins.HOOKS, name)
    return plugins.entry_points(plugins.HOOKS)[name].value


def _context(stack: Stack, event: str, parameters: dict[str, str], secrets: set[str], plan: StackPlan | None,
             outputs: dict[str, str] | None, target: Any) -> dict[str, Any]:
    project = stack.config.project
    shown = {key: SECRET_MASK if key in secrets else value for key, value in sorted(parameters.items())}
    where = {"region": getattr(target, "region", None)}
    try:
        where["account"] = target.account_id() if target is not None else None
    except Exception:  # noqa: BLE001 - the context names the account where it is known
        where["account"] = None
    return {
        "event": event,
        "project": project.name,
        "environment": project.environment,
        "stack": {"name": stack.name, "stack_name": stack.stack_name, **where},
        "parameters": shown,
        "changes": _changes(plan),
        "outputs": dict(outputs) if outputs is not None else None,
    }


def _changes(plan: StackPlan | None) -> dict[str, Any] | None:
    if plan is None:
        return None
    data = asdict(plan)
    return {"kind": data["kind"], "resources": data["resources"], "parameters": data["parameters"],
            "tags": data["tags"]}


class HookSteps:
    """The hook steps of engine.runner.StackRunner (which has `target`): before, after and on failure."""

    target: Any

    def _hook(self, stack: Stack, event: str, prep: Prepared | None, plan: StackPlan | None = None, *,
              changed: bool = True, outputs: dict[str, str] | None = None) -> str | None:
        """Run the stack's `event` hooks; the failure's one line, or None."""
        try:
            run_hooks(stack, event, changed=changed, parameters=prep.parameters if prep else None,
                      secrets=prep.secrets if prep else None, plan=plan, outputs=outputs, target=self.target)
        except HookFailed as err:
            return str(err)
        return None

    def _around(self, stack: Stack, prep: Prepared, plan: StackPlan | None,
                result: StackResult) -> StackResult:
        """A stack without a change: its `always` hooks before and after."""
        failed = self._hook(stack, "before_deploy", prep, plan, changed=False)
        if failed is not None:
            result.outcome, result.error, result.exit_code = "failed", failed, 1
            return result
        return self._after(stack, prep, plan, result, "after_deploy", changed=False)

    def _after(self, stack: Stack, prep: Prepared | None, plan: StackPlan | None, result: StackResult,
               event: str, *, changed: bool = True) -> StackResult:
        """`after_*` hooks once the stack is done: a failure fails the result (the stack stays done)."""
        failed = self._hook(stack, event, prep, plan, changed=changed, outputs=result.outputs or None)
        if failed is not None:
            result.outcome, result.error, result.exit_code = "failed", failed, 1
            return self._failed(stack, prep, plan, result)
        return result

    def _failed(self, stack: Stack, prep: Prepared | None, plan: StackPlan | None,
                result: StackResult) -> StackResult:
        """`on_failure` hooks of a failed stack; their own failure is added to the error."""
        failed = self._hook(stack, "on_failure", prep, plan)
        if failed is not None:
            result.error = f"{result.error}; {failed}"
        return result

