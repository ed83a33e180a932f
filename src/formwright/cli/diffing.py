"""`formwright diff`: the local processed template, parameters and tags against the deployed ones, as a
unified diff in the template's own format (YAML for a YAML template)."""

from __future__ import annotations

import difflib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.text import Text

from formwright.cli.common import console
from formwright.cli.project import deployed, make_group
from formwright.engine.values import as_list_text

if TYPE_CHECKING:
    from formwright.cloud.session import Targets
    from formwright.engine.stack import Stack
    from formwright.model.project import Project

MASK = "****"


def stack_diffs(project: Project, targets: Targets, only: list[str] | None) -> dict[str, str]:
    """A unified diff per stack (empty: no differences), in dependency order."""
    group = make_group(project, targets, only, 8, lambda e: None)
    infos = deployed(project, targets)
    deployed_outputs = {name: info.outputs for name, info in infos.items() if info is not None}
    diffs: dict[str, str] = {}
    for name in [n for n in project.order() if n in group.stacks]:
        stack = group.stacks[name]
        parameters = stack.resolve_parameters(deployed_outputs, partial=True)
        local_template, _ = stack.processed(parameters, region=stack.target.region)
        fmt = template_format(stack)
        secrets = stack.secret_parameters(local_template)
        local_text = render(local_template, fmt) + values_block(
            effective_parameters(stack, local_template, parameters), stack.config.tags, secrets)
        remote_text = ""
        info = infos.get(name)
        if info is not None:
            body = group.runner_for(stack).cfn.call("get_template", StackName=stack.stack_name,
                                  TemplateStage="Processed")["TemplateBody"]
            remote_params = {k: as_list_text(v) for k, v in info.parameters.items()}
            remote_text = render(body, fmt) + values_block(remote_params, info.tags, secrets)
        # a NoEcho value that macros put into the template (Fn::ToJsonString …) is never shown
        for secret in secrets:
            if len(parameters.get(secret, "")) >= 4:
                remote_text = remote_text.replace(parameters[secret], MASK)
                local_text = local_text.replace(parameters[secret], MASK)
        diffs[name] = "".join(difflib.unified_diff(
            remote_text.splitlines(keepends=True), local_text.splitlines(keepends=True),
            fromfile=f"deployed/{stack.stack_name}", tofile=f"local/{name}"))
    return diffs


def template_format(stack: Stack) -> str:
    """yaml for a YAML source (and for TOSCA, whose output is YAML), else json."""
    if stack.config.tosca is not None:
        return "yaml"
    return "json" if Path(stack.source).suffix.lower() == ".json" else "yaml"


def render(template: Any, fmt: str) -> str:
    """The template as text in `fmt`, in its own key order."""
    from formwright.template import dump, loads, plain

    if isinstance(template, str):
        template = loads(template)
    text = dump(plain(template), fmt)
    return text if text.endswith("\n") else text + "\n"


def effective_parameters(stack: Stack, template: dict[str, Any], given: dict[str, str]) -> dict[str, str]:
    """Every parameter's value as CloudFormation would record it: given ones, else the default."""
    values = {key: str(decl["Default"]) for key, decl in stack.declared_parameters(template).items()
              if isinstance(decl, dict) and "Default" in decl}
    values.update(given)
    return values


def values_block(parameters: dict[str, str], tags: dict[str, str], secrets: set[str]) -> str:
    """Stack parameters and tags as a trailing YAML-like block, so that the diff covers them too."""
    lines = ["# stack parameters\n"]
    lines += [f"  {k}: {MASK if k in secrets else v}\n" for k, v in sorted(parameters.items())]
    lines.append("# stack tags\n")
    lines += [f"  {k}: {v}\n" for k, v in sorted(tags.items())]
    return "".join(lines)


def print_diff(text: str) -> None:
    """A unified diff, coloured on a terminal (+ green, - red, @@ cyan), as is off one."""
    if not console.is_terminal:
        console.file.write(text)
        return
    for line in text.splitlines():
        style = ("bold" if line.startswith(("+++", "---")) else "green" if line.startswith("+")
                 else "red" if line.startswith("-") else "cyan" if line.startswith("@@") else "")
        console.print(Text(line, style=style), soft_wrap=True)


def lone_diff(cfn: Any, stack_name: str, template: Path | None) -> str:
    """`diff --stack-name NAME --template FILE`: a stack in no project, its deployed template (as written)
    against a local file, as `rain diff FILE STACK` compares them."""
    from formwright.cli.stacks_cmds import require_stack
    from formwright.errors import InputError
    from formwright.template import load

    if template is None:
        raise InputError("diff --stack-name needs the local template to compare",
                         hint=f"formwright diff --stack-name {stack_name} --template FILE")
    require_stack(cfn, stack_name)
    fmt = "json" if template.suffix.lower() == ".json" else "yaml"
    local_text = render(load(template), fmt)
    body = cfn.call("get_template", StackName=stack_name, TemplateStage="Original")["TemplateBody"]
    remote_text = render(body, fmt)
    return "".join(difflib.unified_diff(remote_text.splitlines(keepends=True),
                                        local_text.splitlines(keepends=True),
                                        fromfile=f"deployed/{stack_name}", tofile=f"local/{template.name}"))
