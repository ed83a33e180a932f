"""Deploy edges from `Fn::ImportValue`: a stack that imports another project stack's export waits for it.

Import and export names are resolved statically, as far as they can be: literals, `Ref` to a
parameter, `Fn::Sub` and `Fn::Join`, with the stack's own parameter values (given in the project, or
the template's defaults) and the pseudo parameters. A name that needs anything else (an output of
another stack, a resource attribute, Fn::Select …) cannot be matched before deploy: it is reported,
never guessed. Exports are per account and region: an import matches an exporter deployed to its own.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from formwright.cloud.regions import dns_suffix, partition_id
from formwright.model.project import OutputRef

_SUB_VAR = re.compile(r"\$\{([^}!][^}]*)\}")


class Unresolvable(Exception):
    """A name that depends on something only known in the cloud."""


class _Names:
    """Resolves name expressions of one stack's template."""

    def __init__(self, stack: Any, region: str, account: str) -> None:
        self.values: dict[str, str | None] = {}
        for name, decl in (stack.original.get("Parameters") or {}).items():
            if isinstance(decl, dict) and "Default" in decl:
                default = decl["Default"]
                self.values[name] = ",".join(map(str, default)) if isinstance(default, list) else str(default)
        self.values.update(stack.fixed_parameters)
        for key, value in stack.config.parameters.items():
            items = value if isinstance(value, list) else [value]
            known = not any(isinstance(v, OutputRef) for v in items)
            self.values[key] = ",".join(map(str, items)) if known else None
        self.values.update({
            "AWS::Region": region, "AWS::AccountId": account, "AWS::StackName": stack.stack_name,
            "AWS::Partition": partition_id(region), "AWS::URLSuffix": dns_suffix(region),
        })

    def resolve(self, node: Any) -> str:
        """The string `node` evaluates to, or Unresolvable."""
        if isinstance(node, str):
            return node
        if isinstance(node, (int, float)) and not isinstance(node, bool):
            return str(node)
        if isinstance(node, dict) and len(node) == 1:
            (fn, arg), = node.items()
            if fn == "Ref" and isinstance(arg, str):
                return self._value(arg)
            if fn == "Fn::Sub":
                text, extra = (arg, {}) if isinstance(arg, str) else (arg[0], arg[1]) if (
                    isinstance(arg, list) and len(arg) == 2 and isinstance(arg[1], dict)) else (None, {})
                if not isinstance(text, str):
                    raise Unresolvable(str(node))
                local = {k: self.resolve(v) for k, v in extra.items()}
                return _SUB_VAR.sub(lambda m: local[m.group(1)] if m.group(1) in local
                                    else self._value(m.group(1)), text).replace("${!", "${")
            if fn == "Fn::Join" and isinstance(arg, list) and len(arg) == 2 and isinstance(arg[1], list):
                return str(arg[0]).join(self.resolve(part) for part in arg[1])
        raise Unresolvable(str(node))

    def _value(self, name: str) -> str:
        value = self.values.get(name)
        if value is None:
            raise Unresolvable(f"${{{name}}}")
        return value


def _walk_imports(node: Any) -> Iterator[Any]:
    if isinstance(node, dict):
        if "Fn::ImportValue" in node and len(node) == 1:
            yield node["Fn::ImportValue"]
        for value in node.values():
            yield from _walk_imports(value)
    elif isinstance(node, list):
        for item in node:
            yield from _walk_imports(item)


def import_edges(stacks: dict[str, Any], region: str, account: str) -> tuple[dict[str, set[str]], list[str]]:
    """For each stack, the project stacks whose exports it imports; and one warning per import or
    export name that cannot be resolved before deploy.

    Exports are per account and region (CloudFormation's ListExports and Fn::ImportValue see only their
    own): an import matches a stack deployed to the same account and region (its own Target; `region` and
    `account` for a stack without one). When the only stacks exporting that name are elsewhere, the import
    will fail there: a warning names them.
    """
    warnings: list[str] = []
    places = {name: _place(stack, region, account) for name, stack in stacks.items()}
    names = {name: _Names(stack, places[name][1], places[name][0]) for name, stack in stacks.items()}
    exporters: dict[tuple[str, str, str], str] = {}  # (account, region, export name) -> stack
    for name, stack in stacks.items():
        for key, output in (stack.original.get("Outputs") or {}).items():
            export = output.get("Export") if isinstance(output, dict) else None
            if isinstance(export, dict) and "Name" in export:
                try:
                    exporters[(*places[name], names[name].resolve(export["Name"]))] = name
                except Unresolvable as err:
                    warnings.append(f"stack '{name}': the export name of output '{key}' cannot be resolved "
                                    f"before deploy ({err}); stacks importing it are not ordered after it")
    edges: dict[str, set[str]] = {name: set() for name in stacks}
    for name, stack in stacks.items():
        body = {k: stack.original.get(k) for k in ("Conditions", "Resources", "Outputs")}
        for expression in _walk_imports(body):
            try:
                wanted = names[name].resolve(expression)
            except Unresolvable as err:
                warnings.append(f"stack '{name}': Fn::ImportValue {err} cannot be resolved before deploy; "
                                "deploy order ignores it (add depends_on if it comes from this project)")
                continue
            exporter = exporters.get((*places[name], wanted))
            if exporter is not None:
                if exporter != name:
                    edges[name].add(exporter)
                continue
            elsewhere = sorted({f"'{s}' ({a}/{r})" for (a, r, n), s in exporters.items() if n == wanted})
            if elsewhere:
                where = "/".join(places[name])
                warnings.append(
                    f"stack '{name}' ({where}): Fn::ImportValue '{wanted}' is exported only by "
                    f"{', '.join(elsewhere)}; exports are per account and region, so the import cannot see "
                    "it (export it where the importer is, or pass the output with !ref, which reads across "
                    "accounts and regions)")
    return edges, warnings


def _place(stack: Any, region: str, account: str) -> tuple[str, str]:
    """(account, region) a stack deploys to: its own Target's, else the group's."""
    target = getattr(stack, "target", None)
    if target is None:
        return account, region
    return str(target.account_id()), str(target.region)
