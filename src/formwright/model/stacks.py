"""Each stack of formwright.yaml read into a StackConfig: its body (a group's keys are defaults it inherits),
template, name, parameters, tags, dependencies, capabilities, deploy options, target and regions."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from formwright import sandbox
from formwright.cloud.regions import is_region, nearest_regions
from formwright.errors import ProjectError
from formwright.model.environments import merge
from formwright.model.keys import (
    CAPABILITIES,
    GROUP_KEYS,
    GUARDS,
    ON_FAILURE,
    STACK_KEYS,
    STACK_NAME,
    check_keys,
    did_you_mean,
)
from formwright.model.owners import stack_tags
from formwright.model.references import OutputRef
from formwright.model.render import Renderer
from formwright.model.resolvers import ValueSource, with_place
from formwright.model.targets import read_spec
from formwright.model.tree import Project, StackConfig
from formwright.template.document import Mapping


def stack_bodies(raw: Mapping, file: str) -> dict[str, tuple[Mapping, int | None, str | None]]:
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
        check_keys(gbody, GROUP_KEYS, file, f"group '{group}'")
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


def string_map(value: Any, file: str, line: int | None, what: str, render: Any = None) -> dict[str, Any]:
    """A mapping of names to text (`tags`, `inputs`); a `!ref` or a collection as a value is an error. A tag
    may be a resolver (a ValueSource, its argument rendered with `render`), resolved at plan/deploy time."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ProjectError(f"`{what}` must be a mapping of names to values", file=file, line=line)
    for key, item in value.items():
        if isinstance(item, ValueSource) and what == "tags":
            continue  # resolved at plan/deploy time (engine/resolve.py); a secret is refused there
        if isinstance(item, (OutputRef, dict, list)):
            where = value.line_of(key) if isinstance(value, Mapping) else line
            kind = "!ref" if isinstance(item, OutputRef) else "a collection"
            raise ProjectError(
                f"`{what}` value '{key}' must be text, not {kind}",
                file=file, line=where or line,
                hint="!ref is read only in `parameters`; pass the output as a parameter instead",
            )
    return {str(k): with_place(v, file, value.line_of(k) if isinstance(value, Mapping) else line, render)
            if isinstance(v, ValueSource) else "" if v is None else str(v) for k, v in value.items()}


def load_stack(
    project: Project, name: str, body: Mapping, line: int | None, renderer: Renderer
) -> StackConfig:
    """The stack `name` of `project` from its body (group defaults merged in), rendered and checked."""
    file = project.file or ""
    check_keys(body, STACK_KEYS, file, f"stack '{name}'")
    stack = StackConfig(name, project, line)
    if "template" in body and "tosca" in body:
        raise ProjectError(f"stack '{name}' has both `template` and `tosca`", file=file, line=line,
                           hint="keep one")
    if isinstance(body.get("template"), Mapping):  # {type: http|s3|<plugin>, ...}: engine/template_handlers
        from formwright.engine.template_handlers import check_source

        source = renderer.render(body["template"], body.line_of("template"))
        check_source(source, file, body.line_of("template"))
        stack.template_source, stack.template_line = dict(source), body.line_of("template")
    for key in ("template", "tosca"):
        if key in body and stack.template_source is None:
            rel = renderer.render(body[key], body.line_of(key))
            setattr(stack, key, _source_path(project, name, key, str(rel), file, body.line_of(key)))
    if stack.template is None and stack.tosca is None and stack.template_source is None:
        raise ProjectError(f"stack '{name}' has no `template`", file=file, line=line,
                           hint="add template: templates/<file>.yaml")
    stack.inputs = string_map(renderer.render(body.get("inputs"), body.line_of("inputs")), file,
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
                               hint=did_you_mean(str(cap), sorted(CAPABILITIES)))
    stack.capabilities = [str(c) for c in caps]
    own = stack_options(body, renderer, file)
    options = {**project.options, **own}
    # a stack's (or its group's) guards add to the project's: a stack cannot lift the project's guard
    options["deny"] = merged_guards(project.options.get("deny") or {}, own.get("deny") or {})
    for key, value in options.items():
        setattr(stack, key, value)
    owned = stack_tags(project.name, name, project.environment) if stack.ownership_tags else {}
    stack.tags = {**project.tags, **string_map(renderer.render(body.get("tags"), body.line_of("tags")),
                                                file, body.line_of("tags"), "tags", renderer.render),
                  **owned}  # ownership: never overridden
    stack.immutable = _flag(body, "immutable", renderer, file)
    stack.obsolete = _flag(body, "obsolete", renderer, file)
    stack.import_existing = _flag(body, "import_existing", renderer, file)
    stack.imports = _imports(body, renderer, file)
    stack.extra = {k: body[k] for k in ("triggers", "regions", "description", "shared") if k in body}
    stack.target = read_spec(body, renderer.render, file).over(project.target)
    if "hooks" in body or "hooks" in project.raw:
        from formwright.model.hooks import stack_hooks

        stack.hooks = stack_hooks(project.raw.get("hooks"), body.get("hooks"), file,
                                  body.line_of("hooks") or line)
    stack.regions = _regions(renderer.render(body.get("regions"), body.line_of("regions")), file,
                             body.line_of("regions"))
    return stack


def _source_path(project: Project, name: str, key: str, rel: str, file: str, line: int | None) -> Path:
    """The stack's `template` or `tosca` file: confined, resolved and found, once per path in the project
    (a thousand stacks sharing one template resolve it once)."""
    known = project.source_paths.get((key, rel))
    if known is not None:
        return known
    path = sandbox.confine(rel, what=f"{key} of stack '{name}'", base=project.directory, file=file, line=line)
    try:
        path = path.resolve()
    except (OSError, RuntimeError) as err:  # a symlink loop
        raise ProjectError(f"{key} '{rel}' of stack '{name}' cannot be resolved: {err}", file=file,
                           line=line) from None
    if not path.exists():
        raise ProjectError(f"{key} '{rel}' of stack '{name}' not found", file=file, line=line,
                           hint=f"looked for {path}")
    project.source_paths[(key, rel)] = path
    return path


def _imports(body: Mapping, renderer: Renderer, file: str) -> dict[str, dict[str, str]]:
    """`import: {LogicalId: {IdentifierProperty: value}}`, each value text."""
    value = body.get("import")
    if value is None:
        return {}
    line = body.line_of("import")
    hint = "import: {Bucket: {BucketName: my-existing-bucket}}"
    if not isinstance(value, Mapping) or not value:
        raise ProjectError("`import` must map logical ids to their identifiers", file=file, line=line,
                           hint=hint)
    found = {}
    for logical, identifiers in value.items():
        where = value.line_of(logical) or line
        if not isinstance(identifiers, Mapping) or not identifiers:
            raise ProjectError(f"`import` of {logical} must map identifier properties to values", file=file,
                               line=where, hint=hint)
        found[str(logical)] = string_map(renderer.render(identifiers, where), file, where,
                                         f"import.{logical}")
    return found


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
            raise ProjectError(f"unknown region '{region}' in `regions`", file=file, line=line,
                               hint=nearest_regions(str(region)))
    if len(set(items)) != len(items):
        raise ProjectError("`regions` names a region twice", file=file, line=line)
    return [str(r) for r in items]


def stack_options(body: Mapping, renderer: Renderer, file: str) -> dict[str, Any]:
    """The STACK_OPTIONS set in `body` (a stack or the project), checked."""
    options: dict[str, Any] = {}
    if "termination_protection" in body:
        options["termination_protection"] = _flag(body, "termination_protection", renderer, file)
    if "ownership_tags" in body:
        options["ownership_tags"] = _flag(body, "ownership_tags", renderer, file)
    if "on_failure" in body:
        value = str(renderer.render(body["on_failure"], body.line_of("on_failure"))).strip().lower()
        if value not in ON_FAILURE:
            raise ProjectError(f"`on_failure` must be one of {', '.join(ON_FAILURE)}, not '{value}'",
                               file=file,
                               line=body.line_of("on_failure"), hint=did_you_mean(value, list(ON_FAILURE)))
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
    if "deny" in body:
        options["deny"] = _guards(body, renderer, file)
    return options


def _guards(body: Mapping, renderer: Renderer, file: str) -> dict[str, list[str]]:
    """`deny: {replacement: [...], removal: [...]}`: resource type patterns per guard."""
    line = body.line_of("deny")
    value = renderer.render(body.get("deny"), line)
    example = 'deny: {replacement: ["AWS::RDS::*", "AWS::DynamoDB::Table"], removal: ["AWS::S3::Bucket"]}'
    if not isinstance(value, dict):
        raise ProjectError("`deny` must be a mapping of guards to resource types", file=file, line=line,
                           hint=example)
    guards: dict[str, list[str]] = {}
    for key, patterns in value.items():
        where = value.line_of(key) if isinstance(value, Mapping) else line
        if key not in GUARDS:
            raise ProjectError(f"unknown guard '{key}' in `deny`", file=file, line=where or line,
                               hint=did_you_mean(str(key), list(GUARDS)))
        patterns = [patterns] if isinstance(patterns, str) else patterns
        if not isinstance(patterns, list) or not all(isinstance(p, str) and "::" in p for p in patterns):
            raise ProjectError(f"`deny.{key}` must be a list of resource types such as AWS::RDS::*",
                               file=file, line=where or line, hint=example)
        guards[str(key)] = [str(p) for p in patterns]
    return guards


def merged_guards(*layers: dict[str, list[str]]) -> dict[str, list[str]]:
    """Every layer's patterns, per guard."""
    merged: dict[str, list[str]] = {}
    for layer in layers:
        for key, patterns in layer.items():
            merged.setdefault(key, [])
            merged[key] += [p for p in patterns if p not in merged[key]]
    return merged


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
    if isinstance(value, ValueSource):
        return with_place(value, file, line, renderer.render)
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
