"""`formwright diff`: the local processed template against the deployed one."""

from __future__ import annotations

import difflib
import json
from typing import TYPE_CHECKING, Any

from formwright.cli.project import deployed, make_group

if TYPE_CHECKING:
    from formwright.cloud.session import Target
    from formwright.model.project import Project


def stack_diffs(project: Project, tgt: Target, only: list[str] | None) -> dict[str, str]:
    """A unified diff per stack (empty: no differences), in dependency order."""
    group = make_group(project, tgt, only, 8, lambda e: None)
    deployed_outputs = {
        name: info.outputs for name, info in deployed(project, tgt).items() if info is not None
    }
    diffs: dict[str, str] = {}
    for name in [n for n in project.order() if n in group.stacks]:
        local_stack = group.stacks[name]
        parameters = local_stack.resolve_parameters(deployed_outputs, partial=True)
        local_template, _ = local_stack.processed(parameters, region=tgt.region)
        remote_text = ""
        if name in deployed_outputs:
            body = group.cfn.call("get_template", StackName=local_stack.stack_name,
                                  TemplateStage="Processed")["TemplateBody"]
            remote_text = normalised(body)
        local_text = normalised(local_template)
        # a NoEcho value that macros put into the template (Fn::ToJsonString …) is never shown
        for secret in local_stack.secret_parameters(local_template):
            if len(parameters.get(secret, "")) >= 4:
                remote_text = remote_text.replace(parameters[secret], "****")
                local_text = local_text.replace(parameters[secret], "****")
        diffs[name] = "".join(difflib.unified_diff(
            remote_text.splitlines(keepends=True), local_text.splitlines(keepends=True),
            fromfile=f"deployed/{local_stack.stack_name}", tofile=f"local/{name}"))
    return diffs


def normalised(template: Any) -> str:
    """A template as sorted, indented JSON, so two copies diff only where they differ."""
    from formwright.template import loads, plain

    if isinstance(template, str):
        template = loads(template)
    return json.dumps(plain(template), indent=2, sort_keys=True, default=str) + "\n"
