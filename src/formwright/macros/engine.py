"""CloudFormation's order and scope for macros, run locally.

Order: every `Fn::Transform` from the most deeply nested outward (a post-order walk, siblings in
document order), then the `Transform` section in listed order. Scope: a `Fn::Transform` gets its
parent mapping without the `Fn::Transform` key, and what it returns replaces that whole mapping; a
section macro gets the whole template without `Transform`. A macro's output is never searched for
further macros ("we don't process macros iteratively").
"""

from __future__ import annotations

import gc
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from formwright.macros.base import MacroEnv, MalformedResponse
from formwright.macros.errors import MacroError, MacroFailed, TransformationDataLimitExceeded
from formwright.macros.request import build_request, template_parameter_values, transform_id
from formwright.template import check_size, line_of

if TYPE_CHECKING:
    from formwright.macros.registry import MacroRegistry

FN_TRANSFORM = "Fn::Transform"
TRANSFORM = "Transform"
#: AWS transforms that only work on the whole template, never as an embedded `Fn::Transform`.
SECTION_ONLY = ("AWS::LanguageExtensions", "AWS::Serverless-2016-10-31")
#: AWS transforms that may see `Fn::ImportValue` in their scope (the restriction is on other macros).
IMPORT_VALUE_ALLOWED = ("AWS::LanguageExtensions", "AWS::Serverless-2016-10-31")
#: Sections whose entries must stay mappings whatever a macro returns for them.
_MAPPING_SECTIONS = ("Resources", "Outputs", "Parameters", "Mappings", "Conditions", "Rules")
_MAX_DEPTH = 400


@dataclass
class Expansion:
    """The processed template and the macros that produced it, in the order they ran."""

    template: dict
    macros_run: list[dict[str, Any]] = field(default_factory=list)
    size: int | None = None


@dataclass
class _Spec:
    name: str
    params: Any
    line: int | None


def has_macros(template: Any) -> bool:
    """True when the template has a Transform section or any Fn::Transform."""
    if isinstance(template, dict) and TRANSFORM in template:
        return True
    return _find_key(template, FN_TRANSFORM) is not None


def _find_key(node: Any, key: str) -> dict | None:
    """The first mapping under `node` that has `key`, else None."""
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if key in item:
                return item
            stack.extend(v for v in item.values() if isinstance(v, (dict, list)))
        elif isinstance(item, list):
            stack.extend(v for v in item if isinstance(v, (dict, list)))
    return None


def _parameter_refs_resolved(params: Any, values: dict[str, Any]) -> Any:
    """A transform's Parameters with every `{Ref: Parameter}` replaced by the parameter's value, as
    CloudFormation passes them (its AWS::Include example: `Location: !Ref InputValue`); other intrinsic
    functions pass as written, and so does a Ref to a parameter without a value here."""
    if isinstance(params, list):
        items = [_parameter_refs_resolved(item, values) for item in params]
        return params if all(a is b for a, b in zip(items, params, strict=True)) else items
    if not isinstance(params, dict):
        return params
    if len(params) == 1 and isinstance(params.get("Ref"), str) and params["Ref"] in values:
        return values[params["Ref"]]
    resolved = {key: _parameter_refs_resolved(value, values) for key, value in params.items()}
    return params if all(resolved[k] is params[k] for k in params) else resolved


class Expander:
    """One expansion of one template: walks it, runs macros, records what ran."""

    def __init__(self, registry: MacroRegistry, env: MacroEnv) -> None:
        self.registry = registry
        self.env = env
        self.macros_run: list[dict[str, Any]] = []

    # -- errors ---------------------------------------------------------------------------------
    def error(self, message: str, line: int | None, hint: str | None = None) -> MacroError:
        """A MacroError at `line` of the template being expanded."""
        return MacroError(message, file=self.env.file, line=line, hint=hint)

    # -- the two kinds of sites -------------------------------------------------------------------
    def section_specs(self, value: Any, line: int | None) -> list[_Spec]:
        """The Transform section as a list of (Name, Parameters): a name, a list, or {Name, Parameters}."""
        items = value if isinstance(value, list) else [value]
        if isinstance(value, list) and not value:
            raise self.error("Template format error: the Transform section is an empty list", line,
                             "name at least one macro, or remove the Transform section")
        return [self.spec(item, line_of(item) or line, TRANSFORM) for item in items]

    def spec(self, item: Any, line: int | None, where: str) -> _Spec:
        """One transform declaration: a literal name or {Name, Parameters}."""
        if isinstance(item, str):
            if not item:
                raise self.error(f"Template format error: {where} names an empty macro", line)
            return _Spec(item, {}, line)
        if isinstance(item, dict):
            if "Name" not in item:
                raise self.error(f"Template format error: {where} must have a Name", line,
                                 "write {Name: MacroName, Parameters: {...}}")
            name = item["Name"]
            if not isinstance(name, str) or not name:
                raise self.error("Key Name of transform definition must be a string.", line,
                                 "a macro's Name is a literal string; Ref and other functions can't name it")
            unknown = sorted(set(item) - {"Name", "Parameters"})
            if unknown:
                raise self.error(f"Template format error: unknown key {unknown[0]} in transform {name}", line,
                                 "a transform declaration has only Name and Parameters")
            params = item.get("Parameters", {})
            if not isinstance(params, dict):
                raise self.error(f"Template format error: Parameters of transform {name} must be an object",
                                 line)
            return _Spec(name, params, line)
        raise self.error(f"Template format error: {where} must be a macro name or {{Name, Parameters}}", line)

    def run_section(self, template: dict) -> dict:
        """Run the Transform section's macros, in listed order, over the template minus Transform."""
        line = line_of(template, TRANSFORM)
        specs = self.section_specs(template[TRANSFORM], line)
        self.env.section_names = [spec.name for spec in specs]
        fragment: Any = {k: v for k, v in template.items() if k != TRANSFORM}
        for spec in specs:
            fragment = self.call(spec, fragment, TRANSFORM)
            if not isinstance(fragment, dict):
                raise self.error(
                    "Template format error: unsupported structure.",
                    spec.line,
                    f"the macro {spec.name} in the Transform section must return a whole template",
                )
            fragment.pop(TRANSFORM, None)
        return fragment

    def run_site(self, original: dict, current: dict, depth: int, section: str | None) -> Any:
        """Apply one Fn::Transform: its macros in order over the parent mapping minus the key."""
        line = line_of(original, FN_TRANSFORM)
        value = current[FN_TRANSFORM]
        items = value if isinstance(value, list) else [value]
        specs = [self.spec(item, line_of(item) or line, FN_TRANSFORM) for item in items]
        fragment: Any = {k: v for k, v in current.items() if k != FN_TRANSFORM}
        for spec in specs:
            if spec.name in SECTION_ONLY:
                raise self.error(
                    f"Template format error: {spec.name} can only be used in the Transform section",
                    spec.line,
                    f"write `Transform: {spec.name}` at the top of the template",
                )
            fragment = self.call(spec, fragment, FN_TRANSFORM)
        needs_mapping = depth <= 1 or (depth == 2 and section in _MAPPING_SECTIONS)
        if needs_mapping and not isinstance(fragment, dict):
            raise self.error(
                "Template format error: unsupported structure.",
                line,
                "here the macro must return a mapping; a plain value fits only where a value goes",
            )
        return fragment

    # -- calling a macro --------------------------------------------------------------------------
    def call(self, spec: _Spec, fragment: Any, where: str) -> Any:
        """Invoke one macro on `fragment`; return the fragment it gives back."""
        env = self.env
        tid = transform_id(spec.name, env.account_id)
        macro = self.registry.get(spec.name)
        if macro is None:
            raise self.error(f"No transform named {tid} found.", spec.line,
                             self.registry.unknown_hint(spec.name))
        if spec.name not in IMPORT_VALUE_ALLOWED:
            found = _find_key(fragment, "Fn::ImportValue")
            if found is not None:
                at = line_of(found, "Fn::ImportValue")
                raise self.error(
                    f"Template format error: Fn::ImportValue is not supported in the scope of transform {tid}"
                    + (f" (at line {at})" if at else ""),
                    spec.line, "macros can't process Fn::ImportValue; move it out of the macro's scope "
                    "or pass the value in as a parameter")
        params = _parameter_refs_resolved(spec.params, env.parameter_values)
        request = build_request(name=spec.name, fragment=fragment, params=params, region=env.region,
                                account_id=env.account_id, parameter_values=env.parameter_values)
        try:
            response = macro.invoke(request, env)
        except MalformedResponse as err:
            raise self.error(
                f"Received malformed response from transform {tid}", spec.line, str(err)
            ) from None
        except MacroFailed as err:
            raise self.error(f"Transform {tid} failed with: {err.message}", spec.line, err.hint) from None
        except TransformationDataLimitExceeded as err:
            err.file, err.line = env.file, spec.line
            raise
        except MacroError as err:  # a built-in reporting an error of the template with its own line
            err.file = err.file or env.file
            err.line = err.line or spec.line
            raise
        result = self.parse_response(response, request["requestId"], tid, spec.line)
        self.macros_run.append({**macro.describe(), "transformId": tid, "where": where, "line": spec.line})
        return result

    def parse_response(self, response: Any, request_id: str, tid: str, line: int | None) -> Any:
        """The fragment of a well-formed success response; CloudFormation's errors otherwise."""
        if not isinstance(response, dict):
            raise self.error(f"Received malformed response from transform {tid}", line,
                             "the response must be an object with requestId, status and fragment")
        if response.get("requestId") != request_id:
            raise self.error(f"Received malformed response from transform {tid}", line,
                             "the response's requestId must be the request's requestId")
        status = response.get("status")
        if not isinstance(status, str):
            raise self.error(f"Received malformed response from transform {tid}", line,
                             "the response needs a status, `success` or a failure")
        if status.lower() != "success":
            message = response.get("errorMessage")
            if message:
                raise self.error(f"Transform {tid} failed with: {message}", line)
            raise self.error(f"Transform {tid} failed without an error message", line,
                             "the macro returned a failure status and no errorMessage")
        if "fragment" not in response:
            raise self.error(f"Received malformed response from transform {tid}", line,
                             "a success response must carry the processed fragment")
        return response["fragment"]

    # -- the walk ---------------------------------------------------------------------------------
    def walk(self, node: Any, depth: int, section: str | None) -> Any:
        """Post-order walk: expand Fn::Transform sites, copying only the mappings that change."""
        if depth > _MAX_DEPTH:
            raise self.error(f"Template format error: the template nests deeper than {_MAX_DEPTH} levels",
                             line_of(node), "flatten the template")
        if isinstance(node, dict):
            changed: dict | None = None
            for key, value in node.items():
                if depth == 0 and key == TRANSFORM:
                    continue  # the section's own declaration is not searched
                if isinstance(value, (dict, list)):
                    new = self.walk(value, depth + 1, key if depth == 0 else section)
                    if new is not value:
                        if changed is None:
                            changed = dict(node)
                        changed[key] = new
            current = node if changed is None else changed
            if FN_TRANSFORM in node:
                return self.run_site(node, current, depth, section)
            return current
        if isinstance(node, list):
            changed_list: list | None = None
            for index, value in enumerate(node):
                if isinstance(value, (dict, list)):
                    new = self.walk(value, depth + 1, section)
                    if new is not value:
                        if changed_list is None:
                            changed_list = list(node)
                        changed_list[index] = new
            return node if changed_list is None else changed_list
        return node


def run(
    template: dict,
    *,
    registry: MacroRegistry,
    parameter_values: dict[str, str] | None = None,
    region: str = "us-east-1",
    account_id: str = "123456789012",
    s3_client: Any = None,
    file: str | None = None,
    base_dir: Path | None = None,
) -> Expansion:
    """Expand every macro in `template`; return the processed template and what ran."""
    if not isinstance(template, dict):
        raise MacroError("a template must be a mapping", file=file, line=1)
    if not has_macros(template):
        return Expansion(template)
    file = file or getattr(template, "file", None)
    if base_dir is None:
        base_dir = Path(file).parent if file else Path.cwd()
    env = MacroEnv(region=region, account_id=account_id,
                   parameter_values=template_parameter_values(template, parameter_values),
                   base_dir=base_dir, file=file, s3_client=s3_client, sandbox=registry.sandbox)
    expander = Expander(registry, env)
    # Expansion allocates many small containers and no cycles; the cyclic collector's full passes
    # over a growing heap would make large expansions superlinear.
    collecting = gc.isenabled()
    gc.disable()
    try:
        processed = expander.walk(template, 0, None)
        if not isinstance(processed, dict):
            raise MacroError("Template format error: unsupported structure.", file=file, line=1)
        if TRANSFORM in processed:
            processed = expander.run_section(processed)
    finally:
        if collecting:
            gc.enable()
    size = check_size(
        json.dumps(processed, separators=(",", ":"), ensure_ascii=False, default=str), file=file
    )
    return Expansion(processed, expander.macros_run, size)
