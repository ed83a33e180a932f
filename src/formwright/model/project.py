"""`formwright.yaml` loaded into a Project tree: stacks, parameters, references, dependencies.

A parameter written `!ref <stack>.outputs.<Key>` becomes an `OutputRef`, resolved at deploy time
from that stack's outputs, and adds the dependency. String values are Jinja2 templates rendered
with StrictUndefined (`{{ env.NAME }}`), so a missing variable is an error, not an empty string.
"""

from __future__ import annotations

import difflib
import functools
import graphlib
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2
import jinja2.sandbox
import yaml

from formwright import sandbox
from formwright.cloud.regions import is_region
from formwright.errors import ProjectError, TemplateError
from formwright.model.tree import Node
from formwright.template.document import Mapping, Sequence, TemplateLoader, load_yaml_text

PROJECT_FILE = "formwright.yaml"

# Deploy options a stack takes and the project sets for all of its stacks.
STACK_OPTIONS = {
    "on_failure": "rollback | delete | do_nothing: what CloudFormation does when a create fails",
    "service_role": "ARN of the IAM role CloudFormation uses for the stack's operations (RoleARN)",
    "notification_arns": "SNS topic ARNs that receive the stack's events",
    "termination_protection": "true to protect the stack from deletion; false to switch it off "
                              "(unset: left as it is)",
    "artifact_bucket": "S3 bucket for large templates and artifacts (default: formwright's managed one)",
}
ON_FAILURE = ("rollback", "delete", "do_nothing")

PROJECT_KEYS = {
    "name": "the project's name; stack names default to <name>-<stack>",
    "region": "the AWS region (default: the target's)",
    "tags": "tags every stack gets",
    "stacks": "the stacks, by name",
    "macros": "user macros: {Name: path} or {Name: {path, environment, timeout}}",
    "version": "the project's version",
    "inputs": "instance inputs",
    "policies": "instance policies",
    "triggers": "actions on events",
    "operations": "custom day-2 operations",
    "description": "free text",
    **{key: help + " (default for every stack)" for key, help in STACK_OPTIONS.items()},
    "local_cloud": "local-cloud settings: {stub: [TYPE, ...]} types the local cloud may stub",
}
STACK_KEYS = {
    "template": "path of the CloudFormation template",
    "tosca": "path of a TOSCA service template or CSAR to transform",
    "inputs": "TOSCA inputs for a `tosca:` stack",
    "stack_name": "the CloudFormation stack name (default <project>-<stack>)",
    "parameters": "template parameters; `!ref stack.outputs.Key` for another stack's output",
    "tags": "tags for this stack (merged over the project's)",
    "depends_on": "stacks that must be deployed first",
    "capabilities": "CAPABILITY_IAM, CAPABILITY_NAMED_IAM, CAPABILITY_AUTO_EXPAND",
    **STACK_OPTIONS,
    "triggers": "actions on this stack's events",
    "immutable": "replace instead of update on upgrade",
    "description": "free text",
    "regions": "regions of a per-region stack",
    "shared": "one stack for every instance of a multi-instance project (made with the first, removed "
              "with the last)",
}
CAPABILITIES = {"CAPABILITY_IAM", "CAPABILITY_NAMED_IAM", "CAPABILITY_AUTO_EXPAND"}
STACK_NAME = re.compile(r"[A-Za-z][-A-Za-z0-9]{0,127}")


@dataclass(frozen=True)
class OutputRef:
    """`!ref stack.outputs.Key`: the value of another stack's output."""

    stack: str
    output: str
    file: str | None = None
    line: int | None = None

    def __str__(self) -> str:
        return f"!ref {self.stack}.outputs.{self.output}"


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


class StackConfig(Node):
    """One stack of the project as written in formwright.yaml."""

    def __init__(self, name: str, parent: Project, line: int | None) -> None:
        super().__init__(name, parent, line=line, group="stacks")
        self.template: Path | None = None
        self.tosca: Path | None = None
        self.inputs: dict[str, str] = {}
        self.stack_name: str = ""
        self.parameters: dict[str, Any] = {}
        self.parameter_lines: dict[str, int] = {}
        self.tags: dict[str, str] = {}
        self.depends_on: list[str] = []
        self.depends_lines: dict[str, int] = {}
        self.capabilities: list[str] = []
        self.termination_protection: bool | None = None  # None: keep what the stack has
        self.on_failure: str | None = None  # rollback | delete | do_nothing; None: CloudFormation's default
        self.service_role: str | None = None
        self.notification_arns: list[str] = []
        self.artifact_bucket: str | None = None
        self.immutable = False
        self.extra: dict[str, Any] = {}

    @property
    def project(self) -> Project:
        """The project this stack belongs to."""
        assert isinstance(self.parent, Project)
        return self.parent

    def references(self) -> list[OutputRef]:
        """Every `!ref` in this stack's parameters (list values included)."""
        found: list[OutputRef] = []
        for value in self.parameters.values():
            items = value if isinstance(value, list) else [value]
            found.extend(v for v in items if isinstance(v, OutputRef))
        return found

    def dependencies(self) -> set[str]:
        """Stacks that must be deployed before this one: depends_on plus referenced stacks."""
        return set(self.depends_on) | {ref.stack for ref in self.references()}


class Project(Node):
    """The whole project: its settings and its stacks."""

    def __init__(self, name: str, file: str, directory: Path) -> None:
        super().__init__(name, None, file=file, line=1)
        self.directory = directory
        self.region: str | None = None
        self.tags: dict[str, str] = {}
        self.stacks: dict[str, StackConfig] = {}
        self.macros: dict[str, Any] = {}
        self.version: str | None = None
        self.local_cloud_stub: list[str] = []
        self.raw: Mapping = Mapping()
        self.options: dict[str, Any] = {}  # STACK_OPTIONS set at the project level

    @property
    def state_dir(self) -> Path:
        """The work folder `.formwright/` next to formwright.yaml."""
        return self.directory / ".formwright"

    def order(self) -> list[str]:
        """Stack names in a dependency order (dependencies first)."""
        sorter = graphlib.TopologicalSorter({n: s.dependencies() for n, s in self.stacks.items()})
        return list(sorter.static_order())

    def dependents(self) -> dict[str, set[str]]:
        """For each stack, the stacks that depend on it directly."""
        result: dict[str, set[str]] = {name: set() for name in self.stacks}
        for name, stack in self.stacks.items():
            for dep in stack.dependencies():
                result.setdefault(dep, set()).add(name)
        return result


def find_project_file(path: str | Path | None) -> Path:
    """The formwright.yaml for a DIR or file argument (default: the current folder)."""
    p = Path(path or ".")
    candidate = p / PROJECT_FILE if p.is_dir() else p
    if not candidate.is_file():
        raise ProjectError(
            f"no {PROJECT_FILE} here", file=str(candidate),
            hint="pass the project folder, or create one with `formwright init`",
        )
    return candidate


def _did_you_mean(word: str, choices: list[str]) -> str:
    close = difflib.get_close_matches(word, choices, n=1)
    return f"did you mean '{close[0]}'?" if close else f"known keys: {', '.join(sorted(choices))}"


def _check_keys(mapping: Mapping, known: dict[str, str], file: str, what: str) -> None:
    for key in mapping:
        if key not in known:
            raise ProjectError(
                f"unknown key '{key}' in {what}", file=file, line=mapping.line_of(key),
                hint=_did_you_mean(key, list(known)),
            )


# Sandboxed: `{{ cycler.__init__.__globals__.os.popen(...) }}` in a project file must not run code.
_JINJA = jinja2.sandbox.SandboxedEnvironment(undefined=jinja2.StrictUndefined, autoescape=False,
                                             keep_trailing_newline=True)


@functools.lru_cache(maxsize=4096)
def _compiled(text: str) -> jinja2.Template:
    """The compiled template of one value (a project is loaded several times per operation)."""
    return _JINJA.from_string(text)


class _Renderer:
    """Renders `{{ … }}` in string values with StrictUndefined; errors carry the value's line."""

    def __init__(self, context: dict[str, Any], file: str) -> None:
        self.context = context
        self.file = file

    def render(self, value: Any, line: int | None) -> Any:
        if isinstance(value, str) and ("{{" in value or "{%" in value):
            try:
                return _compiled(value).render(self.context)
            except jinja2.UndefinedError as err:
                raise ProjectError(
                    f"undefined in '{value}': {err.message}",
                    file=self.file,
                    line=line,
                    hint="set the variable or give a default: {{ env.NAME | default('x') }}",
                ) from None
            except jinja2.TemplateError as err:
                raise ProjectError(f"bad expression '{value}': {err}", file=self.file, line=line) from None
            except Exception as err:  # noqa: BLE001 - {{ 1/0 }}, {{ 'a' + 1 }}: the expression failed
                raise ProjectError(f"expression '{value}' failed: {type(err).__name__}: {err}",
                                   file=self.file, line=line) from None
        if isinstance(value, Mapping):
            return _with_lines(value, {k: self.render(v, value.line_of(k)) for k, v in value.items()})
        if isinstance(value, list):
            out = Sequence(self.render(v, getattr(value, "line", line)) for v in value)
            out.line = getattr(value, "line", line)
            return out
        return value


def _with_lines(original: Mapping, items: dict) -> Mapping:
    result = Mapping(items)
    result.line, result.key_lines, result.file = original.line, original.key_lines, original.file
    return result


def default_context() -> dict[str, Any]:
    """What `{{ … }}` sees in every project: `env` (the process environment; empty under the sandbox)."""
    return {"env": {} if sandbox.active() is not None else dict(os.environ)}


def load_project(path: str | Path | None = None, *, context: dict[str, Any] | None = None) -> Project:
    """Load and check formwright.yaml (a file or its folder) into a Project."""
    file_path = find_project_file(path)
    file = str(file_path)
    sandbox.anchor(file_path.parent)
    raw = read_project_file(file_path)
    if not isinstance(raw, Mapping):
        raise ProjectError("formwright.yaml must be a mapping with `name` and `stacks`", file=file, line=1)
    _check_keys(raw, PROJECT_KEYS, file, "the project")
    ctx = default_context()
    ctx.update(context or {})
    renderer = _Renderer(ctx, file)

    name = raw.get("name")
    if not isinstance(name, str) or not name:
        raise ProjectError("the project needs a `name`", file=file, line=raw.line_of("name") or 1,
                           hint="add `name: my-project` at the top")
    project = Project(renderer.render(name, raw.line_of("name")), file, file_path.parent.resolve())
    project.raw = raw
    ctx.setdefault("project", {"name": project.name})
    project.region = renderer.render(raw.get("region"), raw.line_of("region"))
    if project.region is not None and (not isinstance(project.region, str) or not is_region(project.region)):
        raise ProjectError(f"'{project.region}' is not an AWS region", file=file, line=raw.line_of("region"),
                           hint="e.g. region: eu-west-1")
    project.tags = _string_map(renderer.render(raw.get("tags") or Mapping(), raw.line_of("tags")), file,
                               raw.line_of("tags"), "tags")
    project.version = None if raw.get("version") is None else str(raw.get("version"))
    macros = raw.get("macros") or {}
    if not isinstance(macros, dict):
        raise ProjectError("`macros` must map a macro name to a path", file=file, line=raw.line_of("macros"))
    # `Name: path` or `Name: {path, environment, timeout}` (checked when the macros are registered)
    project.macros = {str(k): (dict(v) if isinstance(v, dict) else str(v)) for k, v in macros.items()}
    project.options = _stack_options(raw, renderer, file)
    project.local_cloud_stub = _local_cloud_stub(raw, file)

    stacks = raw.get("stacks")
    if not isinstance(stacks, Mapping) or not stacks:
        raise ProjectError("the project has no `stacks`", file=file, line=raw.line_of("stacks") or 1,
                           hint="add stacks: {name: {template: path}}")
    for stack_name, body in stacks.items():
        line = stacks.line_of(stack_name)
        if not isinstance(body, Mapping):
            raise ProjectError(f"stack '{stack_name}' must be a mapping", file=file, line=line)
        project.stacks[stack_name] = _load_stack(project, stack_name, body, line, renderer)
    check_references(project)
    return project


def read_project_file(path: Path) -> Any:
    """formwright.yaml as written (with `!ref`), not rendered or checked: for tools that need one key."""
    file = str(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as err:
        raise ProjectError(f"cannot read: {err.strerror or err}", file=file) from None
    except UnicodeDecodeError as err:
        line = path.read_bytes()[: err.start].count(b"\n") + 1
        raise ProjectError(f"not UTF-8 text (byte 0x{err.object[err.start]:02x})", file=file, line=line,
                           hint="save the file as UTF-8") from None
    return _load_yaml(text, file)


def _local_cloud_stub(raw: Mapping, file: str) -> list[str]:
    """`local_cloud: {stub: [TYPE, ...]}`: resource types the local cloud may stub (docs/local-cloud.md)."""
    body = raw.get("local_cloud")
    if body is None:
        return []
    line = raw.line_of("local_cloud")
    if not isinstance(body, Mapping):
        raise ProjectError("`local_cloud` must be a mapping", file=file, line=line,
                           hint="local_cloud: {stub: [AWS::CloudFormation::WaitCondition]}")
    _check_keys(body, {"stub": "resource types the local cloud may stub"}, file, "local_cloud")
    types = body.get("stub") or []
    if not isinstance(types, list) or not all(isinstance(t, str) and "::" in t for t in types):
        raise ProjectError("`local_cloud.stub` must be a list of resource types", file=file,
                           line=body.line_of("stub") or line,
                           hint="stub: [AWS::CloudFormation::WaitCondition, Custom::Seed]")
    return sorted({str(t) for t in types})


def _load_yaml(text: str, file: str) -> Any:
    try:
        return load_yaml_text(text, ProjectLoader, file=file)
    except ProjectError as err:
        err.file = file
        raise
    except TemplateError as err:  # the template loader's own checks (duplicate keys, depth …)
        raise ProjectError(err.message, file=file, line=err.line, hint=err.hint) from None


def _string_map(value: Any, file: str, line: int | None, what: str) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ProjectError(f"`{what}` must be a mapping of names to values", file=file, line=line)
    for key, item in value.items():
        if isinstance(item, (OutputRef, dict, list)):
            where = value.line_of(key) if isinstance(value, Mapping) else line
            kind = "!ref" if isinstance(item, OutputRef) else "a collection"
            raise ProjectError(
                f"`{what}` value '{key}' must be text, not {kind}",
                file=file, line=where or line,
                hint="!ref is read only in `parameters`; pass the output as a parameter instead",
            )
    return {str(k): "" if v is None else str(v) for k, v in value.items()}


def _load_stack(
    project: Project, name: str, body: Mapping, line: int | None, renderer: _Renderer
) -> StackConfig:
    file = project.file or ""
    _check_keys(body, STACK_KEYS, file, f"stack '{name}'")
    stack = StackConfig(name, project, line)
    if "template" in body and "tosca" in body:
        raise ProjectError(f"stack '{name}' has both `template` and `tosca`", file=file, line=line,
                           hint="keep one")
    for key in ("template", "tosca"):
        if key in body:
            rel = renderer.render(body[key], body.line_of(key))
            path = sandbox.confine(str(rel), what=f"{key} of stack '{name}'", base=project.directory,
                                   file=file, line=body.line_of(key))
            try:
                path = path.resolve()
            except (OSError, RuntimeError) as err:  # a symlink loop
                raise ProjectError(f"{key} '{rel}' of stack '{name}' cannot be resolved: {err}", file=file,
                                   line=body.line_of(key)) from None
            if not path.exists():
                raise ProjectError(f"{key} '{rel}' of stack '{name}' not found", file=file,
                                   line=body.line_of(key), hint=f"looked for {path}")
            setattr(stack, key, path)
    if stack.template is None and stack.tosca is None:
        raise ProjectError(f"stack '{name}' has no `template`", file=file, line=line,
                           hint="add template: templates/<file>.yaml")
    stack.inputs = _string_map(renderer.render(body.get("inputs"), body.line_of("inputs")), file,
                               body.line_of("inputs"), "inputs")
    stack.stack_name = str(renderer.render(body.get("stack_name") or f"{project.name}-{name}",
                                           body.line_of("stack_name")))
    if not STACK_NAME.fullmatch(stack.stack_name) and "(known after apply)" not in stack.stack_name:
        raise ProjectError(f"'{stack.stack_name}' is not a valid CloudFormation stack name", file=file,
                           line=body.line_of("stack_name") or line,
                           hint="a letter, then letters, digits and hyphens, at most 128 characters")
    params = body.get("parameters") or Mapping()
    if not isinstance(params, Mapping):
        raise ProjectError(f"`parameters` of stack '{name}' must be a mapping", file=file,
                           line=body.line_of("parameters"))
    for key, value in params.items():
        pline = params.line_of(key)
        stack.parameter_lines[key] = pline or line or 1
        stack.parameters[key] = _parameter_value(value, renderer, file, pline)
    stack.tags = {**project.tags, **_string_map(renderer.render(body.get("tags"), body.line_of("tags")),
                                                file, body.line_of("tags"), "tags")}
    depends = body.get("depends_on") or []
    if isinstance(depends, str):
        depends = [depends]
    if not isinstance(depends, list):
        raise ProjectError(
            "`depends_on` must be a list of stack names", file=file, line=body.line_of("depends_on")
        )
    stack.depends_on = [str(d) for d in depends]
    stack.depends_lines = {str(d): body.line_of("depends_on") or line or 1 for d in depends}
    caps = body.get("capabilities") or []
    if isinstance(caps, str):
        caps = [caps]
    if not isinstance(caps, list) or not all(isinstance(c, str) for c in caps):
        raise ProjectError(
            "`capabilities` must be a list of names",
            file=file,
            line=body.line_of("capabilities"),
            hint="capabilities: [CAPABILITY_IAM]",
        )
    for cap in caps:
        if cap not in CAPABILITIES:
            raise ProjectError(f"unknown capability '{cap}'", file=file, line=body.line_of("capabilities"),
                               hint=_did_you_mean(str(cap), sorted(CAPABILITIES)))
    stack.capabilities = [str(c) for c in caps]
    options = {**project.options, **_stack_options(body, renderer, file)}
    for key, value in options.items():
        setattr(stack, key, value)
    stack.immutable = _flag(body, "immutable", renderer, file)
    stack.extra = {k: body[k] for k in ("triggers", "regions", "description", "shared") if k in body}
    return stack


def _stack_options(body: Mapping, renderer: _Renderer, file: str) -> dict[str, Any]:
    """The STACK_OPTIONS set in `body` (a stack or the project), checked."""
    options: dict[str, Any] = {}
    if "termination_protection" in body:
        options["termination_protection"] = _flag(body, "termination_protection", renderer, file)
    if "on_failure" in body:
        value = str(renderer.render(body["on_failure"], body.line_of("on_failure"))).strip().lower()
        if value not in ON_FAILURE:
            raise ProjectError(f"`on_failure` must be one of {', '.join(ON_FAILURE)}, not '{value}'",
                               file=file,
                               line=body.line_of("on_failure"), hint=_did_you_mean(value, list(ON_FAILURE)))
        options["on_failure"] = value
    for key in ("service_role", "artifact_bucket"):
        if body.get(key) is not None:
            value = renderer.render(body[key], body.line_of(key))
            if not isinstance(value, str) or not value.strip():
                raise ProjectError(f"`{key}` must be a string", file=file, line=body.line_of(key))
            options[key] = value.strip()
    if (service_role := options.get("service_role")) and not service_role.startswith("arn:"):
        raise ProjectError(f"`service_role` must be a role ARN, not '{service_role}'", file=file,
                           line=body.line_of("service_role"),
                           hint="service_role: arn:aws:iam::123456789012:role/cfn-deploy")
    if "notification_arns" in body:
        arns = renderer.render(body.get("notification_arns") or [], body.line_of("notification_arns"))
        if isinstance(arns, str):
            arns = [arns]
        if not isinstance(arns, list) or not all(isinstance(a, str) and a.startswith("arn:") for a in arns):
            raise ProjectError("`notification_arns` must be a list of SNS topic ARNs", file=file,
                               line=body.line_of("notification_arns"),
                               hint="notification_arns: [arn:aws:sns:eu-west-1:123456789012:deploys]")
        if len(arns) > 5:  # CloudFormation's limit on NotificationARNs
            raise ProjectError("at most 5 `notification_arns`", file=file,
                               line=body.line_of("notification_arns"))
        options["notification_arns"] = list(arns)
    return options


def _flag(body: Mapping, key: str, renderer: _Renderer, file: str) -> bool:
    """A true/false setting; a templated one is rendered first. Anything else is an error, not a guess."""
    value = renderer.render(body.get(key, False), body.line_of(key))
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("true", "false"):
        return text == "true"
    raise ProjectError(f"`{key}` must be true or false, not '{value}'", file=file, line=body.line_of(key))


def _parameter_value(value: Any, renderer: _Renderer, file: str, line: int | None) -> Any:
    if isinstance(value, OutputRef):
        return OutputRef(value.stack, value.output, file, value.line or line)
    if isinstance(value, list):
        return [_parameter_value(v, renderer, file, line) for v in value]
    if isinstance(value, dict):
        raise ProjectError(
            "a parameter value must be a string, a number, a list or !ref", file=file, line=line
        )
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return ""
    return str(renderer.render(value, line)) if isinstance(value, str) else str(value)


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
                    hint=_did_you_mean(dep, names),
                )
        for ref in stack.references():
            if ref.stack not in project.stacks:
                raise ProjectError(
                    f"{ref} names unknown stack '{ref.stack}'",
                    file=project.file,
                    line=ref.line,
                    hint=_did_you_mean(ref.stack, names),
                )
            if ref.stack == stack.name:
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
