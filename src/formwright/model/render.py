"""`{{ … }}` in formwright.yaml: Jinja2 with StrictUndefined, errors carrying the value's line."""

from __future__ import annotations

import functools
import os
from typing import TYPE_CHECKING, Any

from formwright import sandbox
from formwright.errors import ProjectError
from formwright.template.document import Mapping, Sequence

if TYPE_CHECKING:
    import jinja2


@functools.lru_cache(maxsize=1)
def _environment() -> jinja2.Environment:
    """The Jinja2 environment, made on the first `{{`: a project without any never imports Jinja2
    (~50 ms of `formwright status`). Sandboxed: `{{ cycler.__init__.__globals__.os.popen(...) }}` in a
    project file must not run code."""
    import jinja2.sandbox

    return jinja2.sandbox.SandboxedEnvironment(undefined=jinja2.StrictUndefined, autoescape=False,
                                               keep_trailing_newline=True)


@functools.lru_cache(maxsize=4096)
def _compiled(text: str) -> jinja2.Template:
    """The compiled template of one value (a project is loaded several times per operation)."""
    return _environment().from_string(text)


class Renderer:
    """Renders `{{ … }}` in string values with StrictUndefined; errors carry the value's line."""

    def __init__(self, context: dict[str, Any], file: str) -> None:
        self.context = context
        self.file = file

    def render(self, value: Any, line: int | None) -> Any:
        """`value` with every string in it rendered (mappings and lists keep their lines)."""
        if isinstance(value, str) and ("{{" in value or "{%" in value):
            import jinja2

            try:
                return _compiled(value).render(self.context)
            except jinja2.UndefinedError as err:
                raise ProjectError(f"undefined in '{value}': {err.message}", file=self.file, line=line,
                                   hint=self.undefined_hint(value, err.message or "")) from None
            except jinja2.TemplateError as err:
                raise ProjectError(f"bad expression '{value}': {err}", file=self.file, line=line) from None
            except Exception as err:  # noqa: BLE001 - {{ 1/0 }}, {{ 'a' + 1 }}: the expression failed
                raise ProjectError(f"expression '{value}' failed: {type(err).__name__}: {err}",
                                   file=self.file, line=line) from None
        if isinstance(value, Mapping):
            return with_lines(value, {k: self.render(v, value.line_of(k)) for k, v in value.items()})
        if isinstance(value, list):
            out = Sequence(self.render(v, getattr(value, "line", line)) for v in value)
            out.line = getattr(value, "line", line)
            return out
        return value


    def undefined_hint(self, value: str, message: str) -> str:
        """How to define what `value` misses: an environment variable is exported, a `var` set, and an
        instance's names exist only in `formwright instance` commands."""
        import re

        if "'instance' is undefined" in message or "'input' is undefined" in message:
            return ("a project of instances, whose stacks are named per instance: see them with `formwright "
                    "instance list` and `formwright instance show NAME`; make one with `formwright instance "
                    "create NAME`")
        for scope, names in (("env", self.context.get("env") or {}), ("var", self.context.get("var") or {})):
            for name in re.findall(rf"\b{scope}\.(\w+)", value):
                if name in names:
                    continue
                if scope == "env":
                    return (f"the environment variable {name} is not set: export {name}=..., or give a "
                            f"default: {{{{ env.{name} | default('x') }}}}")
                return (f"set it: --var {name}=..., `vars: {{{name}: ...}}`, or a default: "
                        f"{{{{ var.{name} | default('x') }}}}")
        return "set the variable (--var K=V, vars:) or give a default: {{ var.K | default('x') }}"


def with_lines(original: Mapping, items: dict) -> Mapping:
    """A Mapping of `items` that keeps the lines and file of `original`."""
    result = Mapping(items)
    result.line, result.key_lines, result.file = original.line, original.key_lines, original.file
    return result


def default_context() -> dict[str, Any]:
    """What `{{ … }}` sees in every project: `env` (the process environment; empty under the sandbox)."""
    return {"env": {} if sandbox.active() is not None else dict(os.environ)}
