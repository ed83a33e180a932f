"""`!ref <stack>.outputs.<Key>` in formwright.yaml: the YAML tag, the reference it makes, and the check that
every reference and dependency names a stack of the project, without a cycle."""

from __future__ import annotations

import graphlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import yaml

from formwright.errors import ProjectError, TemplateError
from formwright.model.keys import did_you_mean
from formwright.template.document import TemplateLoader, load_yaml_text

if TYPE_CHECKING:
    from formwright.model.tree import Project, StackConfig


@dataclass(frozen=True)
class OutputRef:
    """`!ref stack.outputs.Key`: the value of another stack's output."""

    stack: str
    output: str
    file: str | None = None
    line: int | None = None

    def __str__(self) -> str:
        return f"!ref {self.stack}.outputs.{self.output}"

    @property
    def base(self) -> str:
        """The referenced stack's name without a `@region` (`!ref app@eu-west-1.outputs.Url`)."""
        return self.stack.partition("@")[0]


class ProjectLoader(TemplateLoader):
    """The template loader plus the `!ref` tag of formwright.yaml."""


def _construct_ref(loader: yaml.Loader, node: yaml.Node) -> OutputRef:
    line = node.start_mark.line + 1
    if not isinstance(node, yaml.ScalarNode):
        raise ProjectError("!ref takes '<stack>.outputs.<Key>'", line=line)
    text = loader.construct_scalar(node).strip()
    parts = text.split(".")
    if len(parts) != 3 or parts[1] != "outputs" or not all(parts):
        raise ProjectError(
            f"bad reference '!ref {text}'", line=line, hint="write !ref <stack>.outputs.<OutputKey>"
        )
    return OutputRef(parts[0], parts[2], None, line)


ProjectLoader.add_constructor("!ref", _construct_ref)


def load_yaml(text: str, file: str) -> Any:
    """YAML text of formwright.yaml (or an overlay, a var file) with `!ref` and the resolver tags (`!ssm`,
    …, model/resolvers.py); errors name `file`."""
    if "!" in text:
        from formwright.model.resolvers import register_tags

        register_tags(ProjectLoader, text)
    try:
        return load_yaml_text(text, ProjectLoader, file=file)
    except ProjectError as err:
        err.file = file
        raise
    except TemplateError as err:  # the template loader's own checks (duplicate keys, depth …)
        hint = err.hint
        if "unknown tag" in err.message and hint is None:
            from formwright import plugins
            from formwright.model.resolvers import BUILTIN

            known = ["!ref", *(f"!{name}" for name in (*BUILTIN, *plugins.names(plugins.RESOLVERS)))]
            hint = "formwright.yaml's tags: " + ", ".join(known)
        raise ProjectError(err.message, file=file, line=err.line, hint=hint) from None


def check_references(project: Project) -> None:
    """Every depends_on and !ref names a stack of the project, and there is no cycle."""
    names = list(project.stacks)
    for stack in project.stacks.values():
        for dep in stack.depends_on:
            if dep not in project.stacks:
                raise ProjectError(
                    f"stack '{stack.name}' depends on unknown stack '{dep}'",
                    file=project.file,
                    line=stack.depends_lines.get(dep),
                    hint=did_you_mean(dep, names),
                )
        for ref in stack.references():
            if ref.base not in project.stacks:
                raise ProjectError(
                    f"{ref} names unknown stack '{ref.base}'",
                    file=project.file,
                    line=ref.line,
                    hint=did_you_mean(ref.base, names),
                )
            region = ref.stack.partition("@")[2]
            if region and region not in (project.stacks[ref.base].regions or []):
                raise ProjectError(f"{ref}: stack '{ref.base}' is not deployed to {region}",
                                   file=project.file,
                                   line=ref.line, hint="its regions: "
                                   + ", ".join(project.stacks[ref.base].regions or ["(one, not per region)"]))
            if ref.base == stack.name:
                raise ProjectError(f"stack '{stack.name}' refers to its own output", file=project.file,
                                   line=ref.line, hint="a stack cannot take its own outputs as parameters")
    _check_unique_stack_names(project)
    graph = {name: stack.dependencies() for name, stack in project.stacks.items()}
    try:
        graphlib.TopologicalSorter(graph).prepare()
    except graphlib.CycleError as err:
        cycle = list(err.args[1])
        first = project.stacks[cycle[0]]
        raise ProjectError("dependency cycle: " + " -> ".join(cycle), file=project.file, line=first.line,
                           hint="remove one depends_on or !ref to break it") from None


def _check_unique_stack_names(project: Project) -> None:
    """Two stacks of a project may not be the same CloudFormation stack (same name and region)."""
    seen: dict[tuple[str | None, str], StackConfig] = {}
    for stack in project.stacks.values():
        if "(known after apply)" in stack.stack_name:
            continue
        key = (getattr(stack, "region", None) or project.region, stack.stack_name)
        first = seen.setdefault(key, stack)
        if first is not stack:
            raise ProjectError(
                f"stacks '{first.name}' and '{stack.name}' are both the CloudFormation stack "
                f"'{stack.stack_name}'", file=project.file, line=stack.line,
                hint="give one of them another stack_name",
            )
