"""The lifecycle part of formwright.yaml: version, inputs, policies, triggers, operations, regions.

`model/project.py` keeps these keys raw (`project.raw`, per stack `stack.extra`); this module parses
and checks them, with `file:line` errors, and renders projects for an instance: `{{ instance.name }}`,
`{{ input('x') }}` and `{{ property('stack.Key') }}` in any string value of formwright.yaml.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jinja2

from formwright.engine.stack import UNKNOWN
from formwright.errors import FormwrightError, ProjectError
from formwright.lifecycle.inputs import InputDef, check_input_value
from formwright.lifecycle.inputs import close_hint as _hint
from formwright.model.project import Project, load_project
from formwright.template.document import Mapping

BUILTIN_OPERATIONS = ("Create", "Update", "Upgrade", "Delete", "Scope")
# A rollback fires the upgrade's events (PostUpgrade first … PreUpgrade last) with `operation: rollback`,
# as the add-on lifecycle document has it: an action on PreUpgrade / PostUpgrade sees every rollback.
RETIRED_EVENTS = {"PreRollback": "PreUpgrade", "PostRollback": "PostUpgrade"}
MAX_TIMEOUT = 24 * 3600.0
INPUT_TYPES = ("string", "number", "integer", "boolean")
INPUT_KEYS = {"name", "title", "description", "type", "required", "secure", "default", "validation", "values"}
TRIGGER_KEYS = {"event", "action", "timeout", "cache_key"}
OPERATION_KEYS = {"title", "description", "inputs", "action", "timeout"}
DEFAULT_TIMEOUT = 300.0
PYTHON_HOOK = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$")


@dataclass
class Trigger:
    """An action to run on an event, at the project level (element "") or for one stack."""

    event: str
    action: str | list[str]
    timeout: float = DEFAULT_TIMEOUT
    cache_key: str | None = None
    element: str = ""
    line: int | None = None

    @property
    def is_python(self) -> bool:
        """True for a `module:function` hook."""
        return isinstance(self.action, str) and bool(PYTHON_HOOK.match(self.action.strip()))


@dataclass
class OperationDef:
    """A custom day-2 operation: its inputs and its action."""

    name: str
    event: str  # the CamelCase event suffix: Pre<event> / Post<event>
    action: str | list[str] | None
    inputs: dict[str, InputDef] = field(default_factory=dict)
    timeout: float = DEFAULT_TIMEOUT
    title: str = ""
    line: int | None = None


@dataclass
class Manifest:
    """Everything the lifecycle needs from formwright.yaml besides the stacks."""

    file: str
    version: str | None
    inputs: dict[str, InputDef]
    multiple_instances: bool
    triggers: list[Trigger]
    stack_triggers: dict[str, list[Trigger]]
    operations: dict[str, OperationDef]
    regional: dict[str, list[str] | None]  # stack -> allowed regions (None: every region in scope)
    shared: set[str] = field(default_factory=set)  # stacks shared by every instance (multi-instance)

    def events(self) -> set[str]:
        """Every event a trigger may name."""
        names = {f"{p}{op}" for op in BUILTIN_OPERATIONS for p in ("Pre", "Post")} | {"OnError"}
        names |= {f"{p}{op.event}" for op in self.operations.values() for p in ("Pre", "Post")}
        return names

    def triggers_for(self, element: str, event: str) -> list[Trigger]:
        """The triggers of a stack (or of the project when element is "") for an event, in file order."""
        pool = self.triggers if not element else self.stack_triggers.get(stack_of(element), [])
        return [t for t in pool if t.event == event]


def stack_of(element: str) -> str:
    """The project stack of an element id: `app@eu-west-1` → app;
    `app#op-…` (left by a failed operation) → app."""
    return element.split("#")[0].split("@")[0]


def camel(name: str) -> str:
    """`backup-db` → `BackupDb`: a custom operation's event suffix."""
    return "".join(part[:1].upper() + part[1:] for part in re.split(r"[-_\s]+", name) if part)


def parse_manifest(project: Project) -> Manifest:
    """Parse and check the lifecycle keys of a loaded project."""
    raw, file = project.raw, project.file or "formwright.yaml"
    inputs = _parse_inputs(raw.get("inputs"), file, raw.line_of("inputs"), "inputs")
    policies = raw.get("policies") or Mapping()
    if not isinstance(policies, dict):
        raise ProjectError("`policies` must be a mapping", file=file, line=raw.line_of("policies"))
    for key in policies:
        if key != "multiple_instances":
            raise ProjectError(f"unknown policy '{key}'", file=file, line=_line(policies, key),
                               hint="known: multiple_instances")
    multiple = policies.get("multiple_instances", False)
    if not isinstance(multiple, bool):
        raise ProjectError("`multiple_instances` must be true or false", file=file,
                           line=_line(policies, "multiple_instances"))
    operations = _parse_operations(raw.get("operations"), file, raw.line_of("operations"))
    manifest = Manifest(file, project.version, inputs, multiple, [], {}, operations, {})
    events = sorted(manifest.events())
    manifest.triggers = _parse_triggers(raw.get("triggers"), "", file, raw.line_of("triggers"), events)
    for name, stack in project.stacks.items():
        manifest.stack_triggers[name] = _parse_triggers(
            stack.extra.get("triggers"), name, file, stack.line, events
        )
        if "regions" in stack.extra:
            manifest.regional[name] = _parse_regions(stack.extra["regions"], file, stack.line, name)
        if stack.extra.get("shared", False) is not False:
            if stack.extra["shared"] is not True:
                raise ProjectError(f"`shared` of stack '{name}' must be true or false", file=file,
                                   line=stack.line)
            if not multiple:
                raise ProjectError(f"stack '{name}' is shared but the project allows a single instance",
                                   file=file, line=stack.line,
                                   hint="set policies: {multiple_instances: true}")
            if name in manifest.regional:
                raise ProjectError(f"stack '{name}' cannot be both shared and per-region", file=file,
                                   line=stack.line)
            manifest.shared.add(name)
    _check_programs(manifest, raw, Path(project.directory), file)
    _check_property_stacks(project, file)
    return manifest


PROPERTY_CALL = re.compile(r"""property\(\s*['"]([^'"]+)['"]\s*\)""")


def _check_property_stacks(project: Project, file: str) -> None:
    """Every `property('STACK.Key')` of formwright.yaml names a stack of the project: one that names no
    stack never gets a value, and the operation would find it only when it renders that value."""
    try:
        text = Path(file).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return
    stacks = {name.split("@")[0] for name in project.stacks}
    for number, line in enumerate(text.splitlines(), start=1):
        for key in PROPERTY_CALL.findall(line):
            stack = key.split(".")[0].split("@")[0] if "." in key else None
            if stack is not None and stack not in stacks:
                raise ProjectError(f"property('{key}'): the project has no stack '{stack}'", file=file,
                                   line=number, hint=_hint(stack, sorted(stacks)))


def _check_programs(manifest: Manifest, raw: Any, folder: Path, file: str) -> None:
    """Every action's program exists and can run: found by `validate` and before an operation writes
    anything, not when the operation reaches it (exit 1, an operation recorded)."""
    actions = [(t.action, t.line) for t in manifest.triggers]
    actions += [(t.action, t.line) for triggers in manifest.stack_triggers.values() for t in triggers]
    bodies = raw.get("operations") if isinstance(raw.get("operations"), dict) else {}
    actions += [(op.action, _line(bodies.get(name), "action") or _line(bodies, name))
                for name, op in manifest.operations.items() if op.action is not None]
    for action, line in actions:
        problem = program_problem(action, folder)
        if problem is not None:
            raise ProjectError(problem[0], file=file, line=line, hint=problem[1])


def program_problem(action: str | list[str], folder: Path) -> tuple[str, str] | None:
    """(what is wrong, how to fix it) with an action's program, or None. A Python hook's module must be
    in the project folder or importable; a program with a path must be an executable file (relative to
    the project folder); a bare name must be on PATH. An action rendered per instance ({{ … }}) is checked
    when it runs."""
    import importlib.util
    import os
    import shlex
    import shutil

    text = action if isinstance(action, str) else " ".join(action)
    if "{{" in text or "{%" in text:
        return None
    if isinstance(action, str) and PYTHON_HOOK.match(action.strip()):
        module = action.strip().split(":")[0]
        top = module.split(".")[0]
        if (folder / f"{top}.py").is_file() or (folder / top).is_dir() or importlib.util.find_spec(top):
            return None
        return (f"Python hook module '{module}' not found",
                f"put {top}.py in the project folder, or install the package that has it")
    try:
        argv = shlex.split(action) if isinstance(action, str) else list(action)
    except ValueError as err:
        return f"action '{action}': {err}", "quote the command as a shell would"
    program = argv[0]
    if "/" not in program:
        return None if shutil.which(program) else (f"action program '{program}' is not on PATH",
                                                   "install it, or give its path")
    path = Path(program) if os.path.isabs(program) else folder / program
    if not path.exists():
        return f"action program '{program}' not found", f"looked for {path}"
    if path.is_dir():
        return f"action program '{program}' is a folder", "name the executable file in it"
    if not os.access(path, os.X_OK):
        return f"action program '{program}' is not executable", f"chmod +x {path}"
    return None


def _line(mapping: Any, key: str | None = None) -> int | None:
    if isinstance(mapping, Mapping):
        return mapping.line_of(key) if key else mapping.line
    return getattr(mapping, "line", None)


def _parse_inputs(value: Any, file: str, line: int | None, what: str) -> dict[str, InputDef]:
    if value is None:
        return {}
    if not isinstance(value, list):
        raise ProjectError(f"`{what}` must be a list of inputs, each with a `name`", file=file, line=line,
                           hint="- {name: region, type: string, required: true}")
    result: dict[str, InputDef] = {}
    for item in value:
        iline = _line(item) or line
        if not isinstance(item, dict) or not isinstance(item.get("name"), str) or not item.get("name"):
            raise ProjectError(f"each of `{what}` needs a `name`", file=file, line=iline)
        for key in item:
            if key not in INPUT_KEYS:
                raise ProjectError(f"unknown key '{key}' in input '{item['name']}'", file=file,
                                   line=_line(item, key), hint=_hint(str(key), sorted(INPUT_KEYS)))
        name = str(item["name"])
        if name in result:
            raise ProjectError(f"input '{name}' is defined twice", file=file, line=iline)
        kind = str(item.get("type", "string"))
        if kind not in INPUT_TYPES:
            raise ProjectError(
                f"input '{name}' has unknown type '{kind}'",
                file=file,
                line=_line(item, "type"),
                hint=_hint(kind, list(INPUT_TYPES)),
            )
        values = item.get("values")
        if values is not None and not isinstance(values, list):
            raise ProjectError(
                f"`values` of input '{name}' must be a list", file=file, line=_line(item, "values")
            )
        validation = item.get("validation")
        if validation is not None:
            try:
                re.compile(str(validation))
            except re.error as err:
                raise ProjectError(f"bad `validation` regex of input '{name}': {err}", file=file,
                                   line=_line(item, "validation")) from None
        definition = InputDef(name, kind, str(item.get("title", "")), bool(item.get("required", False)),
                              bool(item.get("secure", False)), item.get("default"),
                              None if validation is None else str(validation), values, iline)
        if definition.default is not None:
            check_input_value(definition, definition.default, file)
        result[name] = definition
    return result


def _parse_timeout(value: Any, file: str, line: int | None) -> float:
    if value is None:
        return DEFAULT_TIMEOUT
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
            or not 0 < value <= MAX_TIMEOUT:
        raise ProjectError(f"`timeout` must be a positive number of seconds (at most {MAX_TIMEOUT:g}), "
                           f"got {value!r}", file=file, line=line, hint="timeout: 300")
    return float(value)


def _parse_action(
    value: Any, file: str, line: int | None, *, optional: bool = False
) -> str | list[str] | None:
    if value is None and optional:
        return None
    if isinstance(value, str) and value.strip():
        return value
    if isinstance(value, list) and value and all(isinstance(v, (str, int, float)) for v in value):
        return [str(v) for v in value]
    raise ProjectError(
        "`action` must be a command (string or list) or `module:function`",
        file=file,
        line=line,
        hint="action: hooks/notify.sh, or action: [python3, hooks/seed.py], or mypkg.hooks:seed",
    )


def _parse_triggers(
    value: Any, element: str, file: str, line: int | None, events: list[str]
) -> list[Trigger]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise ProjectError("`triggers` must be a list of {event, action, timeout}", file=file, line=line)
    result = []
    for item in value:
        tline = _line(item) or line
        if not isinstance(item, dict):
            raise ProjectError(
                "each trigger must be a mapping {event, action, timeout}", file=file, line=tline
            )
        for key in item:
            if key not in TRIGGER_KEYS:
                raise ProjectError(f"unknown key '{key}' in a trigger", file=file, line=_line(item, key),
                                   hint=_hint(str(key), sorted(TRIGGER_KEYS)))
        event = item.get("event")
        if event in RETIRED_EVENTS:
            raise ProjectError(f"there is no event '{event}': a rollback fires {RETIRED_EVENTS[event]} with "
                               "`operation: rollback` in the action's context", file=file,
                               line=_line(item, "event"), hint=f"event: {RETIRED_EVENTS[event]}")
        if event not in events:
            raise ProjectError(f"unknown event '{event}'", file=file, line=_line(item, "event"),
                               hint=_hint(str(event), events))
        action = _parse_action(item.get("action"), file, _line(item, "action"))
        assert action is not None
        cache_key = item.get("cache_key")
        result.append(
            Trigger(
                str(event),
                action,
                _parse_timeout(item.get("timeout"), file, _line(item, "timeout")),
                None if cache_key is None else str(cache_key),
                element,
                tline,
            )
        )
    return result


def _parse_operations(value: Any, file: str, line: int | None) -> dict[str, OperationDef]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ProjectError(
            "`operations` must map an operation's name to {inputs, action, timeout}", file=file, line=line
        )
    result: dict[str, OperationDef] = {}
    builtin = {op.lower() for op in BUILTIN_OPERATIONS}
    for name, body in value.items():
        oline = _line(value, name)
        if not isinstance(body, dict):
            raise ProjectError(f"operation '{name}' must be a mapping", file=file, line=oline)
        event = camel(str(name))
        if not event or event.lower() in builtin:
            raise ProjectError(f"operation '{name}' clashes with a built-in operation", file=file, line=oline,
                               hint="pick another name")
        for key in body:
            if key not in OPERATION_KEYS:
                raise ProjectError(
                    f"unknown key '{key}' in operation '{name}'",
                    file=file,
                    line=_line(body, key),
                    hint=_hint(str(key), sorted(OPERATION_KEYS)),
                )
        inputs = _parse_inputs(
            body.get("inputs"), file, _line(body, "inputs"), f"inputs of operation '{name}'"
        )
        result[str(name)] = OperationDef(
            str(name),
            event,
            _parse_action(body.get("action"), file, _line(body, "action"), optional=True),
            inputs,
            _parse_timeout(body.get("timeout"), file, _line(body, "timeout")),
            str(body.get("title", "")),
            oline,
        )
    return result


def _parse_regions(value: Any, file: str, line: int | None, stack: str) -> list[str] | None:
    if value is True or value == "all":
        return None
    if isinstance(value, list) and value and all(isinstance(r, str) and r for r in value):
        from formwright.lifecycle.elements import check_regions

        check_regions([str(r) for r in value], f"`regions` of stack '{stack}'", file=file, line=line)
        return [str(r) for r in value]
    raise ProjectError(
        f"`regions` of stack '{stack}' must be true (every region in scope) or a list of regions",
        file=file,
        line=line,
        hint="regions: [us-east-1, eu-west-1]",
    )


# ---- rendering for an instance ----------------------------------------------------------------
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

