"""sceptre's resolvers in a stack's values, written as formwright's: `!stack_output` as `!ref`, the external,
SSM, Secrets Manager, file and command resolvers as the tags of formwright.yaml, `!environment_variable` as
`{{ env.X }}`; a literal `!join`/`!split`/`!select`/`!sub` computed; anything else listed, never guessed."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from formwright.sceptre.reader import Tagged

DROP = object()  # `!no_value`: the key is left out, as sceptre leaves it out


@dataclass
class Tag:
    """A formwright.yaml tag to write (`!ref net.outputs.VpcId`)."""

    tag: str
    value: Any


@dataclass
class Unmapped:
    """A sceptre construct with no formwright counterpart: where it is and what it is."""

    where: str
    what: str


class ValueMapper:
    """Maps one stack's values; `stack_key` turns a sceptre stack path (`dev/vpc.yaml`) into the formwright
    stack it became, `copy_file` copies a file a resolver reads into the new project and returns its path
    there."""

    def __init__(self, stack_key: Callable[[str], str | None], copy_file: Callable[[str, Tagged], str | None],
                 unmapped: list[Unmapped]) -> None:
        self.stack_key = stack_key
        self.copy_file = copy_file
        self.unmapped = unmapped
        self.references: list[str] = []  # stacks read by !stack_output: sceptre makes them dependencies

    def map(self, value: Any) -> Any:
        """The value with every resolver mapped; DROP for `!no_value`; None where it cannot be mapped."""
        if isinstance(value, Tagged):
            return self._tag(value)
        if isinstance(value, list):
            return [v for v in (self.map(v) for v in value) if v is not DROP]
        if isinstance(value, dict):
            return {k: v for k, v in ((k, self.map(v)) for k, v in value.items()) if v is not DROP}
        return value

    def _miss(self, tagged: Tagged, why: str) -> None:
        self.unmapped.append(Unmapped(tagged.where(), f"{tagged.tag} {_short(tagged.value)}: {why}"))

    def _tag(self, tagged: Tagged) -> Any:
        tag, arg = tagged.tag, tagged.value
        if tag == "!no_value":
            return DROP
        if tag == "!stack_output" and isinstance(arg, str) and "::" in arg:
            path, key = arg.split("::", 1)
            target = self.stack_key(path.strip())
            if target is None:
                self._miss(tagged, f"no stack config {path.strip()} in the project")
                return None
            self.references.append(target)
            return Tag("!ref", f"{target}.outputs.{key.strip()}")
        if tag == "!stack_output_external" and isinstance(arg, str) and "::" in arg:
            words = arg.split()
            stack, key = words[0].split("::", 1)
            if len(words) > 1:
                self._miss(tagged, f"the profile '{words[1]}' is not carried over: set it on the stack")
            return Tag("!stack_output", f"{stack}.{key}")
        if tag == "!ssm" and isinstance(arg, str):
            return Tag("!ssm", arg)
        if tag == "!secretsmanager" and isinstance(arg, str):
            return Tag("!secret", arg)
        if tag == "!file" and isinstance(arg, str) and arg.lower().endswith((".json", ".yaml", ".yml")):
            # sceptre-file-resolver hands over such a file parsed (a mapping), formwright's !file its text
            self._miss(tagged, "sceptre's !file parses a JSON or YAML file; formwright's !file reads text")
            return None
        if tag in ("!file_contents", "!file") and isinstance(arg, str):
            copied = self.copy_file(arg, tagged)
            return Tag("!file", copied) if copied else None
        if tag == "!environment_variable" and isinstance(arg, str):
            return "{{ env." + arg.strip() + " }}"
        if tag in ("!rcmd", "!cmd") and isinstance(arg, str):
            # sceptre-cmd-resolver runs the command with `$SHELL -c` (bash when SHELL is unset) and passes
            # its stdout as it is, final newline included; formwright's !cmd runs no shell and strips
            return Tag("!cmd", {"run": ["bash", "-c", arg], "strip": False})
        if tag in ("!join", "!split", "!select", "!sub"):
            return self._intrinsic(tagged)
        self._miss(tagged, "no formwright counterpart (a custom resolver needs sceptre's runtime)")
        return None

    def _intrinsic(self, tagged: Tagged) -> Any:
        """sceptre's `!join`/`!split`/`!select`/`!sub` computed when every argument is a literal."""
        args = self.map(tagged.value)
        if holds(args, (Tag, type(None))):
            self._miss(tagged, "its arguments hold resolvers; write the value by hand")
            return None
        try:
            if tagged.tag == "!join":
                return str(args[0]).join(str(v) for v in args[1])
            if tagged.tag == "!split":
                return str(args[1]).split(str(args[0]))
            if tagged.tag == "!select":
                return args[1][int(args[0])]
            return str(args[0]).format(**args[1])
        except (IndexError, KeyError, TypeError, ValueError) as err:
            self._miss(tagged, f"its arguments do not fit ({err})")
            return None


def holds(value: Any, kind: type | tuple[type, ...]) -> bool:
    """True when `value` or anything inside it is a `kind`."""
    if isinstance(value, kind):
        return True
    if isinstance(value, list):
        return any(holds(v, kind) for v in value)
    if isinstance(value, dict):
        return any(holds(v, kind) for v in value.values())
    return False


def _short(value: Any) -> str:
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
