"""`formwright.yaml` loaded into a Project tree: stacks, parameters, references, dependencies.

A parameter written `!ref <stack>.outputs.<Key>` becomes an `OutputRef`, resolved at deploy time
from that stack's outputs, and adds the dependency. String values are Jinja2 templates rendered
with StrictUndefined (`{{ env.NAME }}`, `{{ var.K }}`), so a missing variable is an error, not an empty
string. Stacks sit at the top level or in `groups:`; an environment (`--env`) overlays the whole file.
"""

from __future__ import annotations

import difflib
import graphlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from formwright import sandbox
from formwright.cloud.regions import is_region
from formwright.errors import ProjectError, TemplateError
from formwright.model.environments import check_variables, merge, overlay_of, read_var_file
from formwright.model.render import Renderer, default_context
from formwright.model.targets import TARGET_KEYS, TargetSpec, read_spec
from formwright.model.tree import Node
from formwright.template.document import Mapping, TemplateLoader, load_yaml_text

PROJECT_FILE = "formwright.yaml"

# Deploy options a stack takes and the project sets for all of its stacks.
STACK_OPTIONS = {
    "on_failure": "rollback | delete | do_nothing: what CloudFormation does when a create fails",
    "service_role": "ARN of the IAM role CloudFormation uses for the stack's operations (RoleARN)",
    "notification_arns": "SNS topic ARNs that receive the stack's events",
    "termination_protection": "true to protect the stack from deletion; false to switch it off "
                              "(unset: left as it is)",
    "artifact_bucket": "S3 bucket for large templates and artifacts (default: formwright's managed one)",
    "stack_timeout": "minutes to wait for the stack's deploy or delete before reporting it timed out "
                     "(as sceptre's; 0 or unset: no limit)",
}
ON_FAILURE = ("rollback", "delete", "do_nothing")

PROJECT_KEYS = {
    "name": "the project's name; stack names default to <name>-<stack> (<name>-<env>-<stack> with --env)",
    **TARGET_KEYS,
    "tags": "tags every stack gets",
    "stacks": "the stacks, by name",
    "groups": "groups of stacks: {name: {region, account, profile, role_arn, regions, tags, stacks}}",
    "environments": "per-environment overlays of this file: {dev: {...}, prod: {...}}",
    "vars": "default values of {{ var.K }} (an environment, --var-file and --var override them)",
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
    "regions": "regions of a per-region stack: one stack per region",
    "shared": "one stack for every instance of a multi-instance project (made with the first, removed "
              "with the last)",
    **TARGET_KEYS,
}
GROUP_KEYS = {
    "stacks": "the group's stacks, by name",
    "tags": "tags for the group's stacks (merged over the project's)",
    "regions": "regions for each of the group's stacks",
    "description": "free text",
    **TARGET_KEYS,
    **{key: help + " (default for the group's stacks)" for key, help in STACK_OPTIONS.items()},
}
OVERLAY_KEYS = {k: v for k, v in PROJECT_KEYS.items() if k not in ("name", "environments")}
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
        self.stack_timeout: int | None = None  # minutes; None: wait as long as CloudFormation works
        self.immutable = False
        self.extra: dict[str, Any] = {}
        self.target = TargetSpec()  # region, account, credentials (flowed down project -> group -> stack)
        self.group_name: str | None = None  # the group it was written in
        self.regions: list[str] | None = None  # `regions: [...]`: one stack per region
        self.definition = name  # the name written in the file (`app` for its copy `app@eu-west-1`)
        self.named = False  # True when `stack_name` was written (not the default)

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
        stacks = self.project.stacks
        refs = {ref.stack if ref.stack in stacks else ref.base for ref in self.references()}
        return set(self.depends_on) | refs


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
        self.environment: str | None = None  # --env
        self.variables: dict[str, Any] = {}  # what {{ var.K }} sees
        self.target = TargetSpec()  # the project-level target keys
        self.groups: dict[str, list[str]] = {}  # group name -> its stacks

    @property
    def build_dir(self) -> Path:
        """Where processed templates go: `.formwright/build/` (`…/build/<env>/` for an environment)."""
        base = self.state_dir / "build"
        return base / self.environment if self.environment else base

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


def load_project(
    path: str | Path | None = None,
    *,
    context: dict[str, Any] | None = None,
    environment: str | None = None,
    variables: dict[str, Any] | None = None,
    var_files: list[Path] | None = None,
    region: str | None = None,
    profile: str | None = None,
) -> Project:
    """Load and check formwright.yaml (a file or its folder) into a Project.

    `environment` overlays its values (unknown: an error); `var_files` then `variables` override the
    values of `{{ var.K }}`; `region` and `profile` (the --region/--profile flags) replace the project's.
    """
    file_path = find_project_file(path)
    file = str(file_path)
    sandbox.anchor(file_path.parent)
    raw = read_project_file(file_path)
    if not isinstance(raw, Mapping):
        raise ProjectError("formwright.yaml must be a mapping with `name` and `stacks`", file=file, line=1)
    _check_keys(raw, PROJECT_KEYS, file, "the project")
    if environment:
        overlay = overlay_of(raw, environment, file_path.parent, file, _load_yaml)
        _check_overlay(raw, overlay, environment, file)
        raw = merge(raw, overlay)
    ctx = default_context()
    ctx.update(context or {})
    ctx["environment"] = environment or ""
    ctx["var"] = _variables(raw, var_files, variables, file, ctx)
    renderer = Renderer(ctx, file)

    name = raw.get("name")
    if not isinstance(name, str) or not name:
        raise ProjectError("the project needs a `name`", file=file, line=raw.line_of("name") or 1,
                           hint="add `name: my-project` at the top")
    project = Project(renderer.render(name, raw.line_of("name")), file, file_path.parent.resolve())
    project.raw = raw
    project.environment = environment or None
    project.variables = ctx["var"]
    ctx.setdefault("project", {"name": project.name})
    flags = {k: v for k, v in (("region", region), ("profile", profile)) if v}
    project.target = TargetSpec(**flags).over(read_spec(raw, renderer.render, file))
    project.region = project.target.region
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

    for stack_name, (body, line, group) in _stack_bodies(raw, file).items():
        stack = _load_stack(project, stack_name, body, line, renderer)
        stack.group_name = group
        project.stacks[stack_name] = stack
        if group is not None:
            project.groups.setdefault(group, []).append(stack_name)
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


def _variables(raw: Mapping, var_files: list[Path] | None, variables: dict[str, Any] | None, file: str,
               ctx: dict[str, Any]) -> dict[str, Any]:
    """`vars:` (with the environment's), each --var-file, then each --var; `vars:` values are rendered."""
    renderer = Renderer({k: v for k, v in ctx.items() if k != "var"}, file)
    values = check_variables(renderer.render(raw.get("vars"), raw.line_of("vars")), file, raw.line_of("vars"))
    for var_file in var_files or []:
        values.update(read_var_file(Path(var_file), _load_yaml))
    values.update(variables or {})
    return values


def _check_overlay(raw: Mapping, overlay: Mapping, environment: str, file: str) -> None:
    """An overlay sets known keys of known stacks and groups (a typo is an error, not a new stack)."""
    where = overlay.file or file
    _check_keys(overlay, OVERLAY_KEYS, where, f"environment '{environment}'")
    for key in ("stacks", "groups"):
        part = overlay.get(key)
        if part is None:
            continue
        known = raw.get(key) or {}
        if not isinstance(part, Mapping):
            raise ProjectError(f"`{key}` of environment '{environment}' must be a mapping", file=where,
                               line=overlay.line_of(key))
        for name in part:
            if name not in known:
                raise ProjectError(f"environment '{environment}' sets unknown {key[:-1]} '{name}'",
                                   file=where,
                                   line=part.line_of(name), hint=_did_you_mean(name, list(known)))


def _stack_bodies(raw: Mapping, file: str) -> dict[str, tuple[Mapping, int | None, str | None]]:
    """Each stack's body, line and group; a group's keys are defaults its stacks inherit and override."""
    bodies: dict[str, tuple[Mapping, int | None, str | None]] = {}
    stacks = raw.get("stacks") or Mapping()
    groups = raw.get("groups") or Mapping()
    if not isinstance(stacks, Mapping) or not isinstance(groups, Mapping) or not (stacks or groups):
        bad = "groups" if not isinstance(groups, Mapping) else "stacks"
        raise ProjectError("the project has no `stacks`" if bad == "stacks" and not stacks else
                           f"`{bad}` must be a mapping", file=file, line=raw.line_of(bad) or 1,
                           hint="add stacks: {name: {template: path}}")
    for name, body in stacks.items():
        bodies[name] = (_stack_body(body, name, file, stacks.line_of(name)), stacks.line_of(name), None)
    for group, gbody in groups.items():
        gline = groups.line_of(group)
        members = gbody.get("stacks") if isinstance(gbody, Mapping) else None
        if not isinstance(members, Mapping) or not members:
            raise ProjectError(f"group '{group}' must be a mapping with `stacks`", file=file, line=gline,
                               hint="give it stacks: {<name>: {template: <path>}}")
        _check_keys(gbody, GROUP_KEYS, file, f"group '{group}'")
        if group in stacks:
            raise ProjectError(f"group '{group}' has the name of a stack", file=file, line=gline,
                               hint="scopes name groups and stacks alike: rename one")
        defaults = Mapping({k: v for k, v in gbody.items() if k not in ("stacks", "description")})
        defaults.key_lines, defaults.line, defaults.file = gbody.key_lines, gbody.line, gbody.file
        for name, body in gbody["stacks"].items():
            line = gbody["stacks"].line_of(name)
            if name in bodies:
                raise ProjectError(f"stack '{name}' is defined twice", file=file, line=line,
                                   hint="stack names are unique across the project's groups")
            bodies[name] = (merge(defaults, _stack_body(body, name, file, line)), line, group)
    return bodies


def _stack_body(body: Any, name: str, file: str, line: int | None) -> Mapping:
    if not isinstance(body, Mapping):
        raise ProjectError(f"stack '{name}' must be a mapping", file=file, line=line)
    return body


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
    project: Project, name: str, body: Mapping, line: int | None, renderer: Renderer
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
    default_name = "-".join(p for p in (project.name, project.environment, name) if p)
    stack.stack_name = str(renderer.render(body.get("stack_name") or default_name,
                                           body.line_of("stack_name")))
    stack.named = bool(body.get("stack_name"))
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
    stack.target = read_spec(body, renderer.render, file).over(project.target)
    stack.regions = _regions(renderer.render(body.get("regions"), body.line_of("regions")), file,
                             body.line_of("regions"))
    return stack


def _regions(value: Any, file: str, line: int | None) -> list[str] | None:
    """`regions: [...]` as a list of checked regions (`true`, the instances' "every region", is None)."""
    if value is None or value is True:
        return None
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not items:
        raise ProjectError("`regions` must be a list of regions", file=file, line=line,
                           hint="regions: [us-east-1, eu-west-1]")
    for region in items:
        if not isinstance(region, str) or not is_region(region):
            raise ProjectError(f"'{region}' is not an AWS region", file=file, line=line,
                               hint="regions: [us-east-1, eu-west-1]")
    if len(set(items)) != len(items):
        raise ProjectError("`regions` names a region twice", file=file, line=line)
    return [str(r) for r in items]


def _stack_options(body: Mapping, renderer: Renderer, file: str) -> dict[str, Any]:
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
    if "stack_timeout" in body:
        options["stack_timeout"] = _minutes(body, "stack_timeout", renderer, file)
    return options


def _minutes(body: Mapping, key: str, renderer: Renderer, file: str) -> int | None:
    """A whole number of minutes (0: no limit, as sceptre's `stack_timeout`)."""
    value = renderer.render(body.get(key), body.line_of(key))
    text = str(value).strip()
    if isinstance(value, bool) or not text.isdigit():
        raise ProjectError(f"`{key}` must be a whole number of minutes, not '{value}'", file=file,
                           line=body.line_of(key), hint=f"{key}: 30  (0 for no limit)")
    return int(text) or None


def _flag(body: Mapping, key: str, renderer: Renderer, file: str) -> bool:
    """A true/false setting; a templated one is rendered first. Anything else is an error, not a guess."""
    value = renderer.render(body.get(key, False), body.line_of(key))
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("true", "false"):
        return text == "true"
    raise ProjectError(f"`{key}` must be true or false, not '{value}'", file=file, line=body.line_of(key))


def _parameter_value(value: Any, renderer: Renderer, file: str, line: int | None) -> Any:
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
            if ref.base not in project.stacks:
                raise ProjectError(
                    f"{ref} names unknown stack '{ref.base}'",
                    file=project.file,
                    line=ref.line,
                    hint=_did_you_mean(ref.base, names),
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
