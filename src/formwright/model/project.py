"""`formwright.yaml` loaded into a Project tree: stacks, parameters, references, dependencies.

A parameter written `!ref <stack>.outputs.<Key>` becomes an `OutputRef`, resolved at deploy time
from that stack's outputs, and adds the dependency. String values are Jinja2 templates rendered
with StrictUndefined (`{{ env.NAME }}`, `{{ var.K }}`), so a missing variable is an error, not an empty
string. Stacks sit at the top level or in `groups:`; an environment (`--env`) overlays the whole file.

The parts: `keys` (what the file may hold), `references` (`!ref` and the dependency checks), `stacks`
(each stack's body), `tree` (Project and StackConfig), `targets`, `environments`, `render`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from formwright import sandbox
from formwright.errors import FormwrightError, Problems, ProjectError
from formwright.model.environments import (
    check_variables,
    default_environment,
    merge,
    overlay_of,
    read_var_file,
)
from formwright.model.keys import OVERLAY_KEYS, PROJECT_KEYS, check_keys, did_you_mean
from formwright.model.references import OutputRef, check_references, load_yaml
from formwright.model.render import Renderer, default_context
from formwright.model.resolvers import check_sources
from formwright.model.stacks import load_stack, stack_bodies, stack_options, string_map
from formwright.model.targets import TargetSpec, read_spec
from formwright.model.tree import Project, StackConfig
from formwright.template.document import Mapping

__all__ = ["PROJECT_FILE", "OutputRef", "Project", "StackConfig", "find_project_file", "load_project",
           "read_project_file"]

PROJECT_FILE = "formwright.yaml"


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
    problems = Problems()  # independent mistakes are reported together (up to 20), each at its line
    problems.attempt(check_keys, raw, PROJECT_KEYS, file, "the project")
    environment = environment or default_environment(raw, file_path.parent, file)
    if environment:
        overlay = overlay_of(raw, environment, file_path.parent, file, load_yaml)
        _check_overlay(raw, overlay, environment, file)
        raw = merge(raw, overlay)
    ctx = default_context()
    ctx.update(context or {})
    ctx["environment"] = environment or ""
    ctx["var"] = _variables(raw, var_files, variables, file, ctx)
    renderer = Renderer(ctx, file)

    name = raw.get("name")
    if not isinstance(name, str) or not name:
        problems.add(ProjectError("the project needs a `name`", file=file, line=raw.line_of("name") or 1,
                                  hint="add `name: my-project` at the top"))
        name = "project"
    project = Project(problems.attempt(renderer.render, name, raw.line_of("name"), default="project"), file,
                      file_path.parent.resolve())
    project.raw = raw
    project.environment = environment or None
    project.variables = ctx["var"]
    ctx.setdefault("project", {"name": project.name})
    flags = {k: v for k, v in (("region", region), ("profile", profile)) if v}
    project.target = TargetSpec(**flags).over(problems.attempt(read_spec, raw, renderer.render, file,
                                                               default=TargetSpec()))
    project.region = project.target.region
    project.tags = problems.attempt(lambda: string_map(renderer.render(raw.get("tags") or Mapping(),
                                                                       raw.line_of("tags")),
                                                       file, raw.line_of("tags"), "tags", renderer.render),
                                    default={})
    project.version = None if raw.get("version") is None else str(raw.get("version"))
    project.macros = problems.attempt(_macros, raw, file, file_path.parent, problems, default={})
    project.options = problems.attempt(stack_options, raw, renderer, file, default={})
    project.local_cloud_stub = problems.attempt(_local_cloud_stub, raw, file, default=[])
    project.local_cloud_instances = problems.attempt(_local_cloud_instances, raw, file, default="stub")

    for stack_name, (body, line, group) in (problems.attempt(stack_bodies, raw, file) or {}).items():
        stack = problems.attempt(load_stack, project, stack_name, body, line, renderer)
        if stack is None:
            continue
        stack.group_name = group
        project.stacks[stack_name] = stack
        if group is not None:
            project.groups.setdefault(group, []).append(stack_name)
    set_obsolete_apart(project)
    problems.check()  # references between stacks are checked once every stack loaded
    check_references(project)
    check_sources(project)
    return project


def set_obsolete_apart(project: Project) -> None:
    """Move `obsolete: true` stacks out of the stacks to deploy (into `project.obsolete`); a stack that
    still reads one (`!ref`, `depends_on`) is refused at that line."""
    obsolete = {name for name, stack in project.stacks.items() if stack.obsolete}
    for stack in project.stacks.values():
        if stack.name in obsolete:
            continue
        for ref in stack.references():
            if ref.base in obsolete:
                raise ProjectError(f"{ref} reads stack '{ref.base}', which is `obsolete: true` "
                                   "(to be removed)", file=project.file, line=ref.line,
                                   hint=f"stop reading it first, or drop `obsolete` from '{ref.base}'")
        for dep in stack.depends_on:
            if dep in obsolete:
                raise ProjectError(f"stack '{stack.name}' depends on stack '{dep}', which is "
                                   "`obsolete: true` (to be removed)", file=project.file,
                                   line=stack.depends_lines.get(dep),
                                   hint=f"remove it from depends_on, or drop `obsolete` from '{dep}'")
    for name in obsolete:
        project.obsolete[name] = project.stacks.pop(name)
    for group, members in project.groups.items():
        project.groups[group] = [m for m in members if m not in obsolete]


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
    return load_yaml(text, file)


def _macros(raw: Mapping, file: str, folder: Path, problems: Problems) -> dict[str, Any]:
    """`macros:` (`Name: path` or `Name: {path, environment, timeout}`), each checked now at its line, used
    by a template or not: a name CloudFormation reserves, a path that is no text, a file that is missing or
    not executable would otherwise pass `validate` and fail the first deploy that uses it."""
    macros = raw.get("macros")
    if not macros:
        return {}
    if not isinstance(macros, Mapping):
        raise ProjectError("`macros` must map a macro name to a path", file=file, line=raw.line_of("macros"),
                           hint="macros: {Count: macros/count.py}")
    from formwright.macros.registry import DEFAULT_TIMEOUT, macro_from_path, project_entry

    found: dict[str, Any] = {}
    for name, entry in macros.items():
        line = macros.line_of(name)
        if str(name).startswith("AWS::"):
            problems.add(ProjectError(f"macro name '{name}': names starting with AWS:: are CloudFormation's",
                                      file=file, line=line, hint="name it without the AWS:: prefix"))
            continue
        if not isinstance(entry, (str, Mapping)):
            problems.add(ProjectError(f"macro {name}: {entry!r} is not a path", file=file, line=line,
                                      hint=f"macros: {{{name}: macros/{str(name).lower()}.py}}"))
            continue
        try:
            path, _, _ = project_entry(name, dict(entry) if isinstance(entry, Mapping) else entry,
                                       DEFAULT_TIMEOUT)
            macro_from_path(str(name), folder / path, where=None)
        except FormwrightError as err:
            problems.add(ProjectError(err.message, file=file, line=line, hint=err.hint))
            continue
        found[str(name)] = dict(entry) if isinstance(entry, Mapping) else str(entry)
    return found


LOCAL_CLOUD_KEYS = {"stub": "resource types the local cloud may stub",
                    "instances": "`boot` to boot EC2 instances for real, `stub` (the default) not to"}


def _local_cloud_instances(raw: Mapping, file: str) -> str:
    """`local_cloud: {instances: boot|stub}`: whether EC2 instances boot (docs/local-cloud.md)."""
    body = raw.get("local_cloud")
    if not isinstance(body, Mapping) or body.get("instances") is None:
        return "stub"
    value = body.get("instances")
    if value not in ("boot", "stub"):
        raise ProjectError(f"`local_cloud.instances` must be `boot` or `stub`, not {value!r}", file=file,
                           line=body.line_of("instances") or raw.line_of("local_cloud"),
                           hint="local_cloud: {instances: boot}")
    return str(value)


def _local_cloud_stub(raw: Mapping, file: str) -> list[str]:
    """`local_cloud: {stub: [TYPE, ...]}`: resource types the local cloud may stub (docs/local-cloud.md)."""
    body = raw.get("local_cloud")
    if body is None:
        return []
    line = raw.line_of("local_cloud")
    if not isinstance(body, Mapping):
        raise ProjectError("`local_cloud` must be a mapping", file=file, line=line,
                           hint="local_cloud: {stub: [AWS::CloudFormation::WaitCondition]}")
    check_keys(body, LOCAL_CLOUD_KEYS, file, "local_cloud")
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
        values.update(read_var_file(Path(var_file), load_yaml))
    values.update(variables or {})
    return values


def _check_overlay(raw: Mapping, overlay: Mapping, environment: str, file: str) -> None:
    """An overlay sets known keys of known stacks and groups (a typo is an error, not a new stack)."""
    where = overlay.file or file
    check_keys(overlay, OVERLAY_KEYS, where, f"environment '{environment}'")
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
                                   file=where, line=part.line_of(name),
                                   hint=_overlay_hint(raw, key, name, list(known)))
            if key == "groups":
                _check_group_overlay(known[name], part[name], name, environment, where)


def _check_group_overlay(group: Any, overlay: Any, name: str, environment: str, file: str) -> None:
    """The stacks an overlay sets in group `name` are stacks of that group."""
    members = overlay.get("stacks") if isinstance(overlay, Mapping) else None
    known = group.get("stacks") if isinstance(group, Mapping) else None
    if not isinstance(members, Mapping) or not isinstance(known, Mapping):
        return
    for stack in members:
        if stack not in known:
            raise ProjectError(f"environment '{environment}' sets unknown stack '{stack}' in group '{name}'",
                               file=file, line=members.line_of(stack), hint=did_you_mean(stack, list(known)))


def _overlay_hint(raw: Mapping, key: str, name: str, known: list[str]) -> str:
    """How to set `name` in an overlay: a stack written in a group is set under that group."""
    groups = raw.get("groups")
    for group, body in (groups.items() if key == "stacks" and isinstance(groups, Mapping) else ()):
        members = body.get("stacks") if isinstance(body, Mapping) else None
        if isinstance(members, Mapping) and name in members:
            return f"stack '{name}' is in group '{group}': set it under groups: {{{group}: {{stacks: " \
                   f"{{{name}: ...}}}}}}"
    return did_you_mean(name, known) if known else f"the project has no {key}"
