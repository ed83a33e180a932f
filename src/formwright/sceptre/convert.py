"""A sceptre project converted into a formwright project: one formwright stack per sceptre stack config, named
after its path (`dev/net/vpc` -> `dev-net-vpc`), with the CloudFormation stack name sceptre gives it
(`<project_code>-<path with dashes>`, or its `stack_name`) so existing stacks are taken over, not recreated.
Templates are copied; Jinja templates (`.j2`) are rendered with the stack's `sceptre_user_data` as sceptre
renders them. What cannot be mapped is listed with its file:line and the rest is still written."""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jinja2
import yaml

from formwright.errors import InputError
from formwright.sceptre.reader import StackConfig, Tagged, read_project
from formwright.sceptre.values import Tag, Unmapped, ValueMapper, holds

# sceptre's hook points and the formwright hook that runs at the same moment of a deploy or delete.
HOOK_POINTS = {
    "before_create": "before_deploy", "before_update": "before_deploy", "before_launch": "before_deploy",
    "after_create": "after_deploy", "after_update": "after_deploy", "after_launch": "after_deploy",
    "before_delete": "before_delete", "after_delete": "after_delete",
}
# Keys read here on purpose with no formwright key of their own (what they do is noted, or is built in).
NOTED = {"required_version", "j2_environment", "sceptre_user_data", "project_code", "template_key_prefix",
         "stack_group_config", "ignore"}
SERVICE_ROLE_KEYS = ("cloudformation_service_role", "role_arn")  # sceptre 4's name, then sceptre 2-3's
ASSUMED_ROLE_KEYS = ("sceptre_role", "iam_role")


@dataclass
class Conversion:
    """What was converted: the project written, the stacks (formwright name -> CloudFormation name), notes
    and what could not be mapped."""

    project: dict[str, Any]
    stacks: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    unmapped: list[Unmapped] = field(default_factory=list)


def stack_key(path: str) -> str:
    """The formwright stack a sceptre stack path becomes (`dev/net/vpc.yaml` -> `dev-net-vpc`)."""
    return path.removesuffix(".yaml").strip("/").replace("/", "-").replace("_", "-")


def convert(root: Path, out: Path) -> Conversion:
    """Read the sceptre project at `root` and write the formwright project to `out` (formwright.yaml,
    templates/ and the files resolvers read)."""
    configs = read_project(root)
    if not configs:
        raise InputError("the sceptre project has no stack configs under config/", file=str(root / "config"))
    top = configs[0].config
    for config in configs:  # the project's settings: those of the root config.yaml (every stack has them)
        top = {k: v for k, v in top.items() if config.config.get(k) == v}
    conversion = Conversion(project={"name": str(configs[0].config.get("project_code") or root.name)})
    for key, ours in (("region", "region"), ("profile", "profile"),
                      ("template_bucket_name", "artifact_bucket")):
        if isinstance(top.get(key), str):
            conversion.project[ours] = top[key]
    if top.get("required_version"):
        conversion.notes.append(f"required_version {top['required_version']} is sceptre's own version pin; "
                                "left out")
    templates: dict[str, str] = {}  # sceptre path -> the template written; a stack without one is left out
    for config in configs:
        if config.config.get("ignore") is True:
            conversion.notes.append(f"{config.file}: ignore: true - sceptre never launches it; left out")
            continue
        template = _template(config, root, out, stack_key(config.path), conversion)
        if template:
            templates[config.path] = template
        else:
            conversion.notes.append(f"{config.file}: left out: its template is not mapped")
    stacks: dict[str, Any] = {}
    for config in configs:
        if config.path not in templates:
            continue
        try:
            name, body = _stack(config, root, out, templates, conversion)
        except (AttributeError, TypeError, ValueError) as err:  # a key of the wrong shape (a list for a dict)
            raise InputError(f"a key of this stack config has a value sceptre would not take either ({err})",
                             file=config.file, hint="see sceptre's Stack Config reference for each key's "
                             "type") from None
        stacks[name] = body
        conversion.stacks[name] = body["stack_name"]
    conversion.project["stacks"] = stacks
    out.mkdir(parents=True, exist_ok=True)
    (out / "formwright.yaml").write_text(dump(conversion.project))
    return conversion


def _stack(config: StackConfig, root: Path, out: Path, templates: dict[str, str],
           conversion: Conversion) -> tuple[str, dict[str, Any]]:
    """One stack's formwright body (`templates`: the template written for each stack converted)."""
    values = config.config
    name = stack_key(config.path)

    def known(path: str) -> str | None:
        path = path.removesuffix(".yaml")
        return stack_key(path) if path in templates else None

    def copy_file(arg: str, tagged: Tagged) -> str | None:
        source = (root / arg).resolve()
        if not source.is_file():
            conversion.unmapped.append(Unmapped(tagged.where(), f"{tagged.tag} {arg}: no such file"))
            return None
        inside = source.relative_to(root.resolve()) if source.is_relative_to(root.resolve()) else \
            Path("files") / source.name
        (out / inside).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, out / inside)
        return inside.as_posix()

    mapper = ValueMapper(known, copy_file, conversion.unmapped)
    body: dict[str, Any] = {"template": templates[config.path]}
    project_code = values.get("project_code") or conversion.project["name"]
    body["stack_name"] = str(values.get("stack_name") or f"{project_code}-{config.path.replace('/', '-')}")
    for key, ours in (("region", "region"), ("profile", "profile")):
        if values.get(key) and values.get(key) != conversion.project.get(ours):
            body[ours] = values[key]
    if values.get("parameters"):
        body["parameters"] = {k: _parameter(v) for k, v in mapper.map(values["parameters"]).items()
                              if not holds(v, type(None))}  # a value with an unmapped part is left out
    if values.get("stack_tags"):
        body["tags"] = {k: v for k, v in mapper.map(values["stack_tags"]).items() if v is not None}
    depends: list[str] = []
    for dependency in values.get("dependencies") or []:
        if stack := known(str(dependency)):
            depends.append(stack)
        else:
            _missing(config, dependency, conversion)
    refs = set(mapper.references)
    body["depends_on"] = sorted({d for d in depends if d and d not in refs})  # a !ref already orders them
    if not body["depends_on"]:
        del body["depends_on"]
    _options(config, body, mapper, conversion)
    if values.get("hooks"):
        hooks = _hooks(config, conversion)
        if hooks:
            body["hooks"] = hooks
    for key in values:
        if key not in _READ and key not in NOTED and not key.endswith("_inheritance"):
            conversion.unmapped.append(Unmapped(config.where(key), f"key '{key}': not a sceptre key "
                                                "formwright "
                                                "knows; left out"))
    return name, body


def _parameter(value: Any) -> Any:
    """A parameter as sceptre passes it: a list of values joined with commas."""
    if isinstance(value, list) and not any(isinstance(v, Tag) for v in value):
        return ",".join(str(v) for v in value)
    return value


def _missing(config: StackConfig, dependency: Any, conversion: Conversion) -> None:
    conversion.unmapped.append(Unmapped(config.where("dependencies"),
                                        f"dependency {dependency}: no such stack config (or ignored, "
                                        "or left out)"))


def _options(config: StackConfig, body: dict[str, Any], mapper: ValueMapper, conversion: Conversion) -> None:
    """The deploy options: protection, roles, timeout, on_failure, notifications, obsolete."""
    values = config.config
    if values.get("protect") is True:
        body["termination_protection"] = True
        conversion.notes.append(f"{config.where('protect')}: protect: true -> termination_protection: true; "
                                "sceptre's protect also refused updates, formwright's guards deletion only")
    for key in SERVICE_ROLE_KEYS:
        if values.get(key):
            body["service_role"] = mapper.map(values[key])
            break
    for key in ASSUMED_ROLE_KEYS:
        if values.get(key):
            body["role_arn"] = mapper.map(values[key])
            break
    if values.get("stack_timeout"):
        body["stack_timeout"] = int(values["stack_timeout"])
    if values.get("on_failure"):
        body["on_failure"] = str(values["on_failure"]).lower()
    if values.get("notifications"):
        body["notification_arns"] = mapper.map(values["notifications"])
    for key in ("sceptre_role_session_duration", "iam_role_session_duration"):
        if values.get(key):
            body["session_duration"] = int(values[key])
            break
    if values.get("obsolete") is True:
        body["obsolete"] = True


def _hooks(config: StackConfig, conversion: Conversion) -> dict[str, list[Any]]:
    """sceptre's `!cmd` hooks as formwright hooks (run through `sh -c`, as sceptre runs them in a shell)."""
    hooks: dict[str, list[Any]] = {}
    for point, actions in (config.config.get("hooks") or {}).items():
        ours = HOOK_POINTS.get(point)
        for action in actions or []:
            if ours and isinstance(action, Tagged) and action.tag == "!cmd" and isinstance(action.value, str):
                hooks.setdefault(ours, []).append(["sh", "-c", action.value])
            else:
                what = action.tag if isinstance(action, Tagged) else repr(action)
                conversion.unmapped.append(Unmapped(
                    action.where() if isinstance(action, Tagged) else config.where("hooks"),
                    f"hook {what} at {point}: no formwright counterpart "
                    "(a custom hook needs sceptre's runtime)"))
    return hooks


_READ = {"template", "template_path", "stack_name", "region", "profile", "parameters", "stack_tags",
         "dependencies", "protect", *SERVICE_ROLE_KEYS, *ASSUMED_ROLE_KEYS, "stack_timeout", "on_failure",
         "notifications", "obsolete", "hooks", "template_bucket_name", "sceptre_role_session_duration",
         "iam_role_session_duration"}


def _template(config: StackConfig, root: Path, out: Path, name: str, conversion: Conversion) -> str | None:
    """The stack's template written into the new project: a file copied, a `.j2` rendered."""
    values = config.config
    spec = values.get("template")
    if spec is not None:
        if not isinstance(spec, dict) or spec.get("type", "file") != "file" or not spec.get("path"):
            kind = spec.get("type") if isinstance(spec, dict) else spec
            conversion.unmapped.append(Unmapped(config.where("template"),
                                                f"template handler '{kind}': only `type: file` is converted"))
            return None
        relative = str(spec["path"])
    elif values.get("template_path"):
        relative = str(values["template_path"])
    else:
        conversion.unmapped.append(Unmapped(config.file, "no template_path or template"))
        return None
    source = root / "templates" / relative
    if not source.is_file():
        source = root / relative  # sceptre 1's template_path: relative to the project folder
    where = config.where("template" if spec is not None else "template_path")
    if not source.is_file():
        conversion.unmapped.append(Unmapped(where, f"template {relative}: no such file"))
        return None
    suffix = source.suffix.lower()
    if suffix in (".py", ".jsonnet", ".libsonnet"):
        handler = "a Python template" if suffix == ".py" else "jsonnet"
        conversion.unmapped.append(Unmapped(where, f"template {relative}: {handler} needs sceptre's runtime; "
                                            "render it once (`sceptre generate`) and point `template` at it"))
        return None
    if suffix == ".j2":
        return _render_jinja(config, source, out, name, where, conversion)
    target = out / "templates" / source.name
    if source.is_relative_to(root / "templates"):
        target = out / "templates" / source.relative_to(root / "templates")
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, target)
    return target.relative_to(out).as_posix()


def _render_jinja(config: StackConfig, source: Path, out: Path, name: str, where: str,
                  conversion: Conversion) -> str | None:
    """A Jinja template rendered as sceptre renders it: loaded from its folder, `j2_environment` options,
    StrictUndefined, the stack's `sceptre_user_data` as `sceptre_user_data`."""
    user_data = config.config.get("sceptre_user_data") or {}
    if holds(user_data, Tagged):
        conversion.unmapped.append(Unmapped(config.where("sceptre_user_data"),
                                            "sceptre_user_data holds resolvers: sceptre resolves them at "
                                            "run time; the template was not rendered"))
        return None
    options = dict(config.config.get("j2_environment") or {})
    extensions = options.pop("extensions", [])
    try:
        env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(source.parent)),
                                 undefined=jinja2.StrictUndefined, extensions=extensions, **options)
        text = env.get_template(source.name).render(sceptre_user_data=user_data)
    except (jinja2.TemplateError, TypeError) as err:
        conversion.unmapped.append(Unmapped(where, f"template {source.name}: cannot render ({err})"))
        return None
    target = out / "templates" / f"{name}{Path(source.stem).suffix or '.yaml'}"
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text)
    conversion.notes.append(f"{where}: {source.name} rendered with the stack's sceptre_user_data into "
                            f"{target.relative_to(out).as_posix()}")
    return target.relative_to(out).as_posix()


class _Dumper(yaml.SafeDumper):
    """formwright.yaml as people write it: keys in their order, tags for resolvers."""


_Dumper.add_representer(Tag, lambda dumper, tag: dumper.represent_scalar(tag.tag, str(tag.value)))


def dump(project: dict[str, Any]) -> str:
    """The project as formwright.yaml text."""
    head = "# Converted from a sceptre project by `formwright import-sceptre`.\n"
    return head + yaml.dump(project, Dumper=_Dumper, sort_keys=False, default_flow_style=False, width=110)
