"""Check model: every node and relationship type must be one the plugin supports (or derive from one)."""

from __future__ import annotations

from formwright.errors import InputError
from formwright.tosca.diagnostics import Problem, ToscaErrors
from formwright.tosca.model import EffectiveModel, Location
from formwright.transform.cloudformation.kinds import SUPPORTED_NODES, SUPPORTED_RELATIONSHIPS


def check_supported(model: EffectiveModel) -> None:
    """Fail listing every unsupported node and relationship type with its `file:line`."""
    problems: list[tuple[str, Location | None]] = []
    for node in model.nodes.values():
        if not any(t in SUPPORTED_NODES for t in node.types):
            problems.append((f"node '{node.name}' of type '{node.type}'", node.location))
        for rel in node.requirements:
            if not any(t in SUPPORTED_RELATIONSHIPS for t in rel.types):
                problems.append((f"relationship '{rel.requirement}' of '{node.name}' of type '{rel.type}'",
                                 rel.location))
    if problems:
        listed = "; ".join(f"{where}: {what}" for what, where in problems)
        first = problems[0][1]
        raise InputError(f"unsupported by the CloudFormation plugin: {listed}",
                         file=first.file if first else None, line=first.line if first else None,
                         hint="supported: " + ", ".join(t.split(".", 2)[-1] for t in SUPPORTED_NODES))


def check_directives(model: EffectiveModel) -> None:
    """A policy or workflow the plugin does not apply is a warning naming it (an error with --strict): the
    template would deploy without it (one instance per Compute, operations in their own order)."""
    for section, name, kind, where in model.directives:
        what = "policy" if section == "policies" else "workflow"
        problem = Problem(f"{what} '{name}' ({kind}) is not applied: the CloudFormation plugin makes one "
                          "instance per Compute and runs each node's create, configure and start in order",
                          where.file, where.line, "remove it, or do what it asks after the deploy")
        if model.strict:
            raise ToscaErrors([problem])
        model.warnings.append(problem)
