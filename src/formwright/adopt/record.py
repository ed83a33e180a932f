"""Mark each adopted stack as applied with the inputs adopt wrote (the applied cache deploy and plan read),
so that the first `plan` shows no change and `deploy` makes no call that writes. A stack is marked only when
its own description confirms the written parameters and tags (the same check a deploy makes before it
records one). A stack that cannot be prepared (a NoEcho value not in the environment) or whose template uses
macros (formwright expands them itself, so what it sends is not the Original template) is left unmarked and
said: its first plan and deploy ask CloudFormation with a change set."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from formwright.adopt.live import LiveStack
from formwright.errors import FormwrightError


def mark_applied(folder: Path, stacks: dict[str, LiveStack], targets: Any) -> dict[str, str]:
    """Record each stack of the project in `folder` as applied; the stacks left unmarked, with why."""
    from formwright.engine.group import StackGroup
    from formwright.engine.stack import prepare_stacks
    from formwright.model.project import load_project

    try:
        project = load_project(folder)
        prepared = prepare_stacks(project, targets=targets)
        group = StackGroup(project, prepared, targets.get(project.target), targets=targets)
    except FormwrightError as err:
        return dict.fromkeys(stacks, str(err))
    outputs = {name: live.info.outputs for name, live in stacks.items()}
    unmarked = {}
    for name, stack in prepared.items():
        if stack.uses_macros():
            # formwright would send the template expanded here, not the Original CloudFormation expanded:
            # the same stack in the end, perhaps, but not "the same inputs", so CloudFormation is asked
            unmarked[name] = "its template uses macros (Transform), expanded here before deploy"
            continue
        runner = group.runner_for(stack)
        try:
            runner.remember(stack, stacks[name].info, runner.prepare(stack, outputs))
        except FormwrightError as err:
            unmarked[name] = str(err)
    return unmarked
