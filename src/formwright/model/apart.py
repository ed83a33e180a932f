"""Environments kept apart in the cloud: one environment's deploy never changes another environment's stack.

Default stack names carry the environment (`<project>-<env>-<stack>`), but a written `stack_name` does not:
with dev and prod in the same account and region, `deploy --env prod` would update dev's stack in place (the
applied cache, kept per environment, cannot see it). A stack that both define identically is one shared
stack and is fine; one they define differently at the same place is refused before any cloud call.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from formwright.errors import FormwrightError, ProjectError
from formwright.model.environments import environment_names
from formwright.model.owners import TAG_ENVIRONMENT
from formwright.model.references import OutputRef
from formwright.model.tree import Project, StackConfig


def check_apart(project: Project, load: Callable[[str | None], Project]) -> None:
    """Refuse a written `stack_name` that another environment (or the project without one) deploys to the same
    account and region with another definition. `load(env)` loads the project in environment `env`."""
    if project.environment is None:
        return
    mine = {_place(stack): (name, stack) for name, stack in project.stacks.items() if stack.named}
    if not mine:
        return
    others: list[str | None] = [None, *environment_names(project.raw, project.directory)]
    for other in others:
        if other == project.environment:
            continue
        try:
            theirs = load(other)
        except FormwrightError:
            continue  # that environment's own mistakes are for `validate` and its own commands to report
        for stack in theirs.stacks.values():
            found = mine.get(_place(stack))
            if found is not None and _definition(found[1]) == _definition(stack):
                # one stack shared by the environments: no environment's ownership tag, or each deploy would
                # retag it (and prune, which reads that tag, never takes a shared stack for its own)
                found[1].tags.pop(TAG_ENVIRONMENT, None)
            elif found is not None:
                name, config = found
                where = f"environment '{other}'" if other else "the project without --env"
                raise ProjectError(
                    f"stack '{name}' is CloudFormation stack '{config.stack_name}' in {where} too, with the "
                    f"same credentials and region{_shown(config)} but another definition: deploying "
                    f"'{project.environment}' would change it", file=project.file, line=config.line,
                    hint="name it per environment, e.g. stack_name: \"{{ environment }}-" + name + "\"")


def _shown(stack: StackConfig) -> str:
    known = [part for part in (stack.target.account, stack.target.region) if part]
    return f" ({'/'.join(known)})" if known else ""


def _place(stack: StackConfig) -> tuple[Any, ...]:
    """Where a stack is in the cloud, as far as the project says (same values: same account and region)."""
    target = stack.target
    return (stack.stack_name, target.account, target.region, target.profile, target.role_arn)


def _definition(stack: StackConfig) -> tuple[Any, ...]:
    """What a deploy of the stack sends, as the project writes it."""
    # the environment's ownership tag differs by design: it does not make two definitions differ
    tags = {k: v for k, v in stack.tags.items() if k != TAG_ENVIRONMENT}
    return (stack.template, stack.tosca, sorted((k, _value(v)) for k, v in stack.parameters.items()),
            sorted(tags.items()), sorted(stack.capabilities), sorted(stack.inputs.items()))


def _value(value: Any) -> Any:
    """A parameter value as written (a `!ref` by what it names, not where it was written)."""
    if isinstance(value, list):
        return [_value(v) for v in value]
    return str(value) if isinstance(value, OutputRef) else value
