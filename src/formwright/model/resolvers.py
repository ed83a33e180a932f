"""Values from outside the project, written as YAML tags in formwright.yaml and resolved at plan/deploy time:

- `!ssm NAME` / `!ssm {name: NAME, decrypt: true}`: an SSM parameter (a SecureString only with decrypt);
- `!secret ID`, `!secret ID#json-key`, `!secret {id, key, version_stage, version_id}`: Secrets Manager;
- `!stack_output STACK.KEY` / `{stack, output, region, account, profile, role_arn, ...}`: an output of a
  stack this project does not manage (its target flows from the stack's, as a group's does);
- `!file PATH` / `!file {path: P, base64: true}`: a file's content, inside the project;
- `!cmd "COMMAND"`, `!cmd [argv...]`, `!cmd {run: ..., timeout: 30}`: a command's stdout (no shell), its
  surrounding whitespace stripped unless `strip: false` (sceptre's `!rcmd` keeps the final newline);
- `!NAME ARG` for a resolver a package publishes in the `formwright.resolvers` entry-point group.

Here only their form is read and checked (a `ValueSource` per tag, with its line); engine/resolve.py
fetches the values. `validate` checks the form and, offline, the arguments (a `!file` exists).
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from formwright.errors import ProjectError
from formwright.model.targets import TARGET_KEYS

BUILTIN = ("ssm", "secret", "stack_output", "file", "cmd")
CMD_TIMEOUT = 60.0  # seconds a `!cmd` may run unless it says otherwise
HINTS = {
    "ssm": "!ssm /app/db/host, or !ssm {name: /app/db/password, decrypt: true}",
    "secret": "!secret prod/db#password, or !secret {id: prod/db, key: password, version_stage: AWSPREVIOUS}",
    "stack_output": "!stack_output network.VpcId, or !stack_output {stack: network, output: VpcId, "
                    "region: eu-west-1}",
    "file": "!file certs/ca.pem, or !file {path: files/blob.bin, base64: true}",
    "cmd": "!cmd \"git rev-parse HEAD\", or !cmd [git, rev-parse, HEAD], or !cmd {run: ..., timeout: 30}",
}
KEYS = {
    "ssm": {"name", "decrypt"},
    "secret": {"id", "key", "version_stage", "version_id"},
    "stack_output": {"stack", "output", *TARGET_KEYS},
    "file": {"path", "base64"},
    "cmd": {"run", "timeout", "strip"},
}


@dataclass(frozen=True)
class ValueSource:
    """One resolver tag as written: its kind (`ssm`, … or a plugin's name), its argument (the scalar,
    list or mapping, as plain data) and where it was written."""

    kind: str
    argument: Any
    file: str | None = None
    line: int | None = None

    def __str__(self) -> str:
        return f"!{self.kind} {self.shown_argument()}"

    def __hash__(self) -> int:
        return hash(self.key)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ValueSource) and self.key == other.key

    @property
    def key(self) -> str:
        """The same source written twice is fetched once: its kind and argument as canonical JSON."""
        return f"{self.kind} {json.dumps(self.argument, sort_keys=True, default=str)}"

    def shown_argument(self) -> str:
        """The argument on one line."""
        if isinstance(self.argument, str):
            return self.argument
        return json.dumps(self.argument, sort_keys=True, default=str)

    @property
    def label(self) -> str:
        """Where the value comes from, for plans: `ssm:/app/db/host`, `secret:prod/db#password`."""
        arg = self.argument
        if self.kind == "ssm":
            return f"ssm:{self.option('name')}"
        if self.kind == "secret":
            key = self.option("key")
            return f"secret:{self.option('id')}" + (f"#{key}" if key else "")
        if self.kind == "stack_output":
            stack, output = self.stack_and_output()
            return f"stack_output:{stack}.{output}"
        if self.kind == "file":
            return f"file:{self.option('path')}"
        if self.kind == "cmd":
            return "cmd:" + shlex.join(self.argv()) + ("" if self.option("strip", True) else " (unstripped)")
        return f"{self.kind}:{self.shown_argument() if not isinstance(arg, str) else arg}"

    def option(self, name: str, default: Any = None) -> Any:
        """A key of the mapping form; the scalar form is the first key (`name`, `id`, `path`, `run`)."""
        if isinstance(self.argument, dict):
            return self.argument.get(name, default)
        if self.kind == "secret":
            secret_id, _, key = str(self.argument).partition("#")
            return {"id": secret_id, "key": key or None}.get(name, default)
        first = {"ssm": "name", "file": "path", "cmd": "run"}.get(self.kind)
        return self.argument if name == first else default

    def stack_and_output(self) -> tuple[str, str]:
        """`!stack_output` as (stack name, output key)."""
        if isinstance(self.argument, dict):
            return str(self.argument.get("stack")), str(self.argument.get("output"))
        text = str(self.argument)
        stack, _, output = text.partition("::" if "::" in text else ".")  # sceptre writes STACK::KEY
        return stack, output

    def argv(self) -> list[str]:
        """`!cmd` as an argv (a string is split as a shell would split words, but no shell runs)."""
        run = self.option("run")
        return shlex.split(run) if isinstance(run, str) else [str(part) for part in run or []]

    @property
    def builtin(self) -> bool:
        """True for the tags formwright itself resolves."""
        return self.kind in BUILTIN

    @property
    def secret(self) -> bool:
        """Known secret from its form: a Secrets Manager value or a decrypted SSM parameter. (A plugin says
        so itself when it is loaded.)"""
        return self.kind == "secret" or (self.kind == "ssm" and self.option("decrypt") is True)


def _plain(loader: yaml.Loader, node: yaml.Node) -> Any:
    """A tag's argument as plain data (str, list, dict of str)."""
    if isinstance(node, yaml.ScalarNode):
        return loader.construct_scalar(node)
    if isinstance(node, yaml.SequenceNode):
        return [_plain(loader, item) for item in node.value]
    if isinstance(node, yaml.MappingNode):
        return {str(_plain(loader, k)): _mapping_value(loader, v) for k, v in node.value}
    raise ProjectError("a resolver takes a scalar, a list or a mapping")


def _mapping_value(loader: yaml.Loader, node: yaml.Node) -> Any:
    """Mapping values keep YAML's own types (`decrypt: true`, `timeout: 30`)."""
    if isinstance(node, yaml.ScalarNode):
        return loader.construct_object(node)
    return _plain(loader, node)


def check_form(kind: str, argument: Any, line: int | None, file: str | None = None) -> None:
    """The argument of a built-in resolver has the shape it takes (offline: nothing is fetched)."""
    hint = HINTS[kind]

    def bad(message: str) -> ProjectError:
        return ProjectError(f"!{kind}: {message}", file=file, line=line, hint=hint)

    if isinstance(argument, dict):
        unknown = sorted(set(argument) - KEYS[kind])
        if unknown:
            raise bad(f"unknown key '{unknown[0]}' (known: {', '.join(sorted(KEYS[kind]))})")
    elif kind != "cmd" and not isinstance(argument, str):
        raise bad("takes a string or a mapping")
    source = ValueSource(kind, argument)
    if kind == "ssm":
        name = source.option("name")
        if not isinstance(name, str) or not name.strip():
            raise bad("needs a parameter name")
        if source.option("decrypt", False) not in (True, False):
            raise bad("`decrypt` must be true or false")
    elif kind == "secret":
        if not str(source.option("id") or "").strip():
            raise bad("needs a secret id")
        if isinstance(argument, dict) and "version_stage" in argument and "version_id" in argument:
            raise bad("give `version_stage` or `version_id`, not both")
    elif kind == "stack_output":
        stack, output = source.stack_and_output()
        if not stack or stack == "None" or not output or output == "None" or "." in output:
            raise bad("needs STACK.KEY")
    elif kind == "file":
        if not str(source.option("path") or "").strip():
            raise bad("needs a path")
        if source.option("base64", False) not in (True, False):
            raise bad("`base64` must be true or false")
    elif kind == "cmd":
        run = source.option("run")
        if isinstance(run, list) and not all(isinstance(p, (str, int, float)) for p in run):
            raise bad("a command list holds words")
        try:
            argv = source.argv()
        except ValueError as err:
            raise bad(f"cannot split the command: {err}") from None
        if not argv:
            raise bad("needs a command")
        timeout = source.option("timeout", CMD_TIMEOUT)
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not 0 < timeout <= 3600:
            raise bad("`timeout` must be 1 to 3600 seconds")
        if source.option("strip", True) not in (True, False):
            raise bad("`strip` must be true or false")


def _constructor(kind: str):
    def construct(loader: yaml.Loader, node: yaml.Node) -> ValueSource:
        line = node.start_mark.line + 1
        argument = _plain(loader, node)
        if kind in BUILTIN:
            check_form(kind, argument, line)
        return ValueSource(kind, argument, None, line)

    return construct


# a tag as YAML text may hold one: `!` where a node begins (a `!` in a string may match too: that only costs
# the plugins' look-up)
_TAG = re.compile(r"(?<![^\s\[{,])!([^\s\[\]{},]+)")


def register_tags(loader: type[yaml.Loader], text: str | None = None) -> None:
    """Add the built-in resolver tags, and one per installed `formwright.resolvers` plugin, to `loader`.
    Given the `text` to be loaded, the plugins are looked up only when it has a tag `loader` does not know
    yet: finding them reads every installed distribution's metadata (~20 ms with its import)."""
    kinds: list[str] = list(BUILTIN)
    if text is None or any(f"!{tag}" not in loader.yaml_constructors and tag not in BUILTIN
                           for tag in _TAG.findall(text)):
        from formwright.plugins import RESOLVERS, names

        kinds += names(RESOLVERS)
    for kind in kinds:
        if f"!{kind}" not in loader.yaml_constructors:
            loader.add_constructor(f"!{kind}", _constructor(kind))


def with_place(value: Any, file: str, line: int | None, render: Any = None) -> Any:
    """A ValueSource that knows its file (and the value's line when its own is not known), its argument's
    `{{ … }}` rendered with `render(value, line)` when given (`!ssm /app/{{ environment }}/db/host`)."""
    if not isinstance(value, ValueSource):
        return value
    where = value.line or line
    argument = value.argument
    if render is not None:
        argument = _rendered(argument, lambda text: render(text, where))
    if value.builtin:
        check_form(value.kind, argument, where, file)
    return ValueSource(value.kind, argument, file, where)


def _rendered(argument: Any, render: Any) -> Any:
    if isinstance(argument, str):
        return render(argument)
    if isinstance(argument, list):
        return [_rendered(item, render) for item in argument]
    if isinstance(argument, dict):
        return {key: _rendered(item, render) for key, item in argument.items()}
    return argument


def sources_in(value: Any) -> list[ValueSource]:
    """The ValueSources of a parameter value (a list value's items included)."""
    items = value if isinstance(value, list) else [value]
    return [item for item in items if isinstance(item, ValueSource)]


def check_sources(project: Any) -> None:
    """Every resolver of the project, checked offline (`check_offline`): what load, and so `validate`, can
    tell without fetching anything."""
    names = {stack.stack_name: name for name, stack in project.stacks.items()}
    for stack in project.stacks.values():
        found = [s for value in stack.parameters.values() for s in sources_in(value)]
        found += [v for v in stack.tags.values() if isinstance(v, ValueSource)]
        for source in found:
            check_offline(source, project.directory, names)


def check_offline(source: ValueSource, project_dir: Path, stack_names: dict[str, str]) -> None:
    """What `validate` checks of a resolver without the cloud: a `!file` exists inside the project; a
    `!stack_output` does not name a stack of this project (a `!ref` orders the deploy, this would not)."""
    from formwright import sandbox

    if source.kind == "file":
        path = sandbox.Sandbox(project_dir).confine(str(source.option("path")), what="!file",
                                                    file=source.file, line=source.line)
        if not path.is_file():
            raise ProjectError(f"{source}: no such file", file=source.file, line=source.line,
                               hint=f"looked for {path}")
    if source.kind == "stack_output":
        stack, output = source.stack_and_output()
        if stack in stack_names:
            name = stack_names[stack]
            raise ProjectError(f"{source}: '{stack}' is stack '{name}' of this project", file=source.file,
                               line=source.line,
                               hint=f"write !ref {name}.outputs.{output}: it also deploys '{name}' first")
