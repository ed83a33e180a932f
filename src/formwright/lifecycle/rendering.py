"""Rendering formwright.yaml for an instance: `{{ instance.name }}`, `{{ input('x') }}` and
`{{ property('stack.Key') }}` in any string value, and the checks made on a project rendered so (stack
names that keep instances apart, secure inputs kept out of names).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import jinja2

from formwright.engine.stack import UNKNOWN
from formwright.errors import FormwrightError, ProjectError
from formwright.lifecycle.manifest import parse_manifest
from formwright.model.project import Project, load_project


def instance_context(name: str, version: str | None, inputs: dict[str, Any], properties: dict[str, str], *,
                     strict: bool = False) -> dict[str, Any]:
    """The Jinja2 context of an instance: `instance`, `input()` and `property()`.

    Not strict, a property not known yet renders as "(known after apply)" (planning); strict, it is
    an error (realizing a stack whose inputs must be complete).
    """

    def input_fn(key: str) -> Any:
        if key not in inputs:
            raise jinja2.UndefinedError(f"no input '{key}' (inputs: {', '.join(sorted(inputs)) or 'none'})")
        return inputs[key]

    def property_fn(key: str) -> Any:
        if key in properties:
            return properties[key]
        if strict:
            raise jinja2.UndefinedError(
                f"property '{key}' is not known yet (set by an earlier stack or action; add depends_on)"
            )
        return UNKNOWN

    return {"instance": {"name": name, "version": version}, "input": input_fn, "property": property_fn}


class LenientInputs(dict):
    """Inputs for a first look at a project: given values, then previous ones; anything else renders empty."""

    def __init__(self, previous: dict[str, Any], given: dict[str, str]) -> None:
        super().__init__({**previous, **given})

    def __contains__(self, key: object) -> bool:
        return True

    def __getitem__(self, key: Any) -> Any:
        return dict.get(self, key, "")


def load_for_validation(source: Path, **options: Any) -> Project:
    """The project as `validate` sees it: rendered for a probe instance with lenient inputs, its manifest
    parsed and, in a multi-instance project, every stack name checked to contain the instance name.
    `options` (environment, variables …) go to load_project."""
    try:
        project = load_for_instance(source, PROBES[0], LenientInputs({}, {}), **options)
        manifest = parse_manifest(project)
    except FormwrightError:
        check_secure_names(source)  # a secure input rendered into a name is what to say first
        raise
    if any(definition.secure for definition in manifest.inputs.values()):  # else no second load
        check_secure_names(source)
    check_instance_names(project)
    return project


SECURE_PROBE = "fwsecureprobe"


class ProbeInputs(dict):
    """Every input renders as a recognisable probe: `fwsecureprobe<name>`."""

    def __contains__(self, key: object) -> bool:
        return True

    def __getitem__(self, key: Any) -> Any:
        return SECURE_PROBE + re.sub(r"[^A-Za-z0-9]", "", str(key))


def check_secure_names(source: Path) -> None:
    """A secure input may not be rendered into a stack name (names are printed, tagged and listed).

    Loads the project with every input set to a probe value and refuses (file:line) a stack whose name
    shows a secure input's probe; a real value is never rendered into a message. A project that does
    not load this way is left to the ordinary load to report.
    """
    try:
        probed = load_for_instance(source, PROBES[0], ProbeInputs())
        manifest = parse_manifest(probed)
    except FormwrightError:
        return
    probes = ProbeInputs()
    for stack in probed.stacks.values():
        for name, definition in manifest.inputs.items():
            if definition.secure and probes[name] in stack.stack_name:
                raise ProjectError(f"stack '{stack.name}' renders the secure input '{name}' into its name",
                                   file=probed.file, line=stack.line,
                                   hint="a stack name is printed, tagged and listed: use a plain input")


def load_for_instance(
    source: Path,
    name: str,
    inputs: dict[str, Any],
    properties: dict[str, str] | None = None,
    *,
    strict: bool = False,
    version: str | None = None,
    **options: Any,
) -> Project:
    """Load the project at `source` rendered for instance `name` (`options` go to load_project)."""
    context = instance_context(name, version, inputs, properties or {}, strict=strict)
    project = load_project(source, context=context, **options)
    if version is None and project.version is not None:
        context["instance"]["version"] = project.version
    return project


def uses_properties(project: Project, stack: str) -> bool:
    """True when the stack's raw definition calls `property(…)` (so it is rendered again before it runs)."""
    body = (project.raw.get("stacks") or {}).get(stack)
    return "property(" in repr(body)


def render_value(
    value: Any, context: dict[str, Any], file: str | None = None, line: int | None = None
) -> Any:
    """Render `{{ … }}` in a string (or each string of a list) with the instance context."""
    if isinstance(value, list):
        return [render_value(v, context, file, line) for v in value]
    if not isinstance(value, str) or ("{{" not in value and "{%" not in value):
        return value
    env = jinja2.Environment(undefined=jinja2.StrictUndefined, autoescape=False)
    try:
        return env.from_string(value).render(context)
    except jinja2.TemplateError as err:
        raise ProjectError(f"bad expression '{value}': {err}", file=file, line=line) from None


PROBES = ("fwprobeone", "fwprobetwo")


def check_instance_names(project: Project) -> None:
    """In a multi-instance project every stack name must contain the instance name (or two would collide).

    Loads the project twice with two probe instance names; raises ProjectError (file:line) for a stack
    whose CloudFormation name does not contain the instance name.
    """
    manifest = parse_manifest(project)
    if not manifest.multiple_instances or project.file is None:
        return
    probe_inputs = {n: (d.default if d.default is not None else (d.values or ["x"])[0])
                    for n, d in manifest.inputs.items()}
    loaded = [load_for_instance(Path(project.file), probe, probe_inputs) for probe in PROBES]
    for name, stack in loaded[0].stacks.items():
        other = loaded[1].stacks[name]
        if name in manifest.shared:
            if stack.stack_name != other.stack_name:
                raise ProjectError(f"shared stack '{name}' must have one name for every instance",
                                   file=project.file, line=stack.line,
                                   hint="leave {{ instance.name }} out of its stack_name")
            continue
        if PROBES[0] not in stack.stack_name or stack.stack_name == other.stack_name:
            raise ProjectError(
                f"stack '{name}' is named '{stack.stack_name.replace(PROBES[0], '<instance>')}' "
                "whatever the instance: two instances would collide",
                file=project.file,
                line=stack.line,
                hint=f'set stack_name: "{{{{ instance.name }}}}-{name}" (multiple_instances is on)',
            )


def manifest_snapshot(project: Project) -> dict[str, Any]:
    """The manifest as plain data, for actions' context."""
    from formwright.template import plain

    data = plain(project.raw)
    return data if isinstance(data, dict) else {}

