"""TOSCA inputs as template Parameters, TOSCA outputs as template Outputs."""

from __future__ import annotations

import re
from typing import Any

from troposphere import Output

from formwright.tosca.functions import Context
from formwright.tosca.model import Input
from formwright.transform.cloudformation.context import Build
from formwright.transform.cloudformation.values import Renderer, expression

_SECRET = re.compile(r"password|secret|passphrase|token|private_key", re.IGNORECASE)
_NUMBER_TYPES = {"integer", "float"}


def _constraints(item: Input) -> dict[str, Any]:
    out: dict[str, Any] = {}
    numeric = item.type in _NUMBER_TYPES
    for raw in item.constraints:
        if not isinstance(raw, dict) or len(raw) != 1:
            continue
        ((name, value),) = raw.items()
        if name == "valid_values" and isinstance(value, list):
            out["AllowedValues"] = [str(v) for v in value]
        elif name == "min_length":
            out["MinLength"] = int(value)
        elif name == "max_length":
            out["MaxLength"] = int(value)
        elif name == "pattern":
            out["AllowedPattern"] = str(value)
        elif numeric and name == "in_range" and isinstance(value, list) and len(value) == 2:
            out["MinValue"], out["MaxValue"] = value
        elif numeric and name == "greater_or_equal":
            out["MinValue"] = value
        elif numeric and name == "less_or_equal":
            out["MaxValue"] = value
    return out


def is_secret(name: str) -> bool:
    """True for an input whose name says it holds a secret: it becomes a NoEcho parameter."""
    return bool(_SECRET.search(name))


def add_input_parameters(build: Build) -> None:
    """One Parameter per TOSCA input; secrets are NoEcho and their values passed at deploy, not defaulted."""
    for item in build.model.inputs.values():
        kwargs: dict[str, Any] = {"Type": "Number" if item.type in _NUMBER_TYPES else "String"}
        if item.description:
            kwargs["Description"] = str(item.description).strip()
        kwargs.update(_constraints(item))
        logical = build.plan.namer.name(item.name)
        if is_secret(item.name):
            kwargs["NoEcho"] = True
            if item.value is not None:
                build.parameter_values[logical] = str(item.value)
        elif item.value is not None:
            value = item.value
            kwargs["Default"] = ("true" if value else "false") if isinstance(value, bool) else str(value)
        build.template.where = (f"input '{item.name}'", item.location)
        build.input_parameters[item.name] = build.add_parameter(logical, **kwargs)
    build.template.where = None


def add_outputs(build: Build) -> None:
    """One Output per TOSCA output, its value rendered as a string expression."""
    renderer = Renderer(build)
    for output in build.model.outputs.values():
        value = renderer.text(renderer.value(output.value, Context(location=output.location)))
        kwargs: dict[str, Any] = {"Value": expression(value)}
        build.template.where = (f"output '{output.name}'", output.location)
        if output.description:
            kwargs["Description"] = str(output.description).strip()
        build.template.add_output(Output(build.plan.namer.name(output.name), **kwargs))
    build.template.where = None
