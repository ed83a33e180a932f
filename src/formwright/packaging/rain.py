"""rain's directives, processed before macros as `rain pkg` / `rain deploy` process them.

From rain's documentation (`rain pkg`) and its code (cft/pkg/rain.go, module.go): `Rain::Embed <path>` is
the file's text (trimmed); `Rain::Include <path>` the file read as YAML or JSON (its own directives
processed); `Rain::Env <name>` an environment variable; `Rain::S3Http <path>` and `Rain::S3 <path>` upload the
file or folder (zipped) and give its HTTPS URL or `s3://` URI; `Rain::S3 {Path, Zip, BucketProperty,
KeyProperty, Format}` gives the bucket and key under the names asked for, or the URI / URL. A resource whose
`Type` is `!Rain::Module <path>` is replaced by the module's resources, each named `<resource><name>`, with
`Ref`s to module parameters replaced by the resource's `Properties` (or the parameter's `Default`), `Ref` /
`GetAtt` / `${}` of module resources renamed, the resource's `Overrides` merged in (lists appended), and
its `DependsOn`, `Condition` and policies given to every module resource that has none. Paths are relative
to the file that names them. Modules from URLs and rain's package aliases are not read (an error says so).
"""

from __future__ import annotations

import copy
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

from formwright import sandbox
from formwright.cloud.regions import dns_suffix
from formwright.errors import InputError
from formwright.template import line_of, load, loads

if TYPE_CHECKING:
    from formwright.packaging.packager import Packager

PREFIX = "Rain::"
MODULE = "Rain::Module"
INHERITED = ("DependsOn", "Condition", "DeletionPolicy", "UpdateReplacePolicy")
SUB_NAME = re.compile(r"\$\{([A-Za-z0-9_]+)((?:\.[A-Za-z0-9_]+)?)\}")


def uses_rain(node: Any) -> bool:
    """True when any mapping under `node` is a rain directive."""
    if isinstance(node, dict):
        return any(str(k).startswith(PREFIX) for k in node) or any(uses_rain(v) for v in node.values())
    if isinstance(node, list):
        return any(uses_rain(v) for v in node)
    return False


def apply(template: dict[str, Any], file: Path, packager: Packager) -> None:
    """Process every rain directive of `template` (from `file`) in place."""
    if not uses_rain(template):
        return
    resources = template.get("Resources")
    if isinstance(resources, dict):
        _modules(template, resources, file, packager, [file])
    for key in list(template):
        template[key] = _directives(template[key], file, packager)


def _directive(node: Any) -> tuple[str, Any] | None:
    if isinstance(node, dict) and len(node) == 1:
        key = next(iter(node))
        if isinstance(key, str) and key.startswith(PREFIX):
            return key, node[key]
    return None


def _directives(node: Any, file: Path, packager: Packager) -> Any:
    found = _directive(node)
    if found is not None:
        name, arg = found
        return _run(name, arg, line_of(node) or line_of(node, name), file, packager)
    if isinstance(node, dict):
        for key in list(node):
            node[key] = _directives(node[key], file, packager)
    elif isinstance(node, list):
        for index, value in enumerate(node):
            node[index] = _directives(value, file, packager)
    return node


def _path(arg: Any, name: str, file: Path, line: int | None) -> str:
    if not isinstance(arg, str) or not arg:
        raise InputError(f"{name} takes a path", file=str(file), line=line, hint=f"write !{name} ./file")
    return arg.removeprefix("file://")


def _run(name: str, arg: Any, line: int | None, file: Path, packager: Packager) -> Any:
    if name == "Rain::Embed":
        local = packager.resolve(_path(arg, name, file, line), file, line=line, what=name)
        return local.read_text(encoding="utf-8").strip()
    if name == "Rain::Include":
        local = packager.resolve(_path(arg, name, file, line), file, line=line, what=name)
        included = loads(local.read_text(encoding="utf-8"), file=str(local))
        return _directives(included, local, packager)
    if name == "Rain::Env":
        if sandbox.requested():
            raise InputError("Rain::Env reads this host's environment (refused by the sandbox)",
                             file=str(file), line=line)
        if not isinstance(arg, str) or arg not in os.environ:
            raise InputError(f"Rain::Env: the environment variable '{arg}' is not set", file=str(file),
                             line=line)
        return os.environ[arg]
    if name == "Rain::S3Http":
        return _s3(packager, {"Path": arg, "Format": "Http"}, file, line)
    if name == "Rain::S3":
        return _s3(packager, arg if isinstance(arg, dict) else {"Path": arg}, file, line)
    if name == MODULE:
        raise InputError("!Rain::Module is only a resource's Type", file=str(file), line=line,
                         hint="write Type: !Rain::Module ./module.yaml")
    raise InputError(f"unknown rain directive {name}", file=str(file), line=line,
                     hint="known: Rain::Embed, Rain::Include, Rain::Env, Rain::S3, Rain::S3Http, "
                          "Rain::Module")


def _s3(packager: Packager, options: dict[str, Any], file: Path, line: int | None) -> Any:
    path = _path(options.get("Path"), "Rain::S3", file, line)
    local = packager.resolve(path, file, line=line, what="Rain::S3")
    artifact = packager.artifact_for(local, zipped=bool(options.get("Zip")), where="Rain::S3", file=file,
                                     line=line)
    bucket, key = packager.bucket, artifact.key
    form = options.get("Format") or ("Object" if options.get("BucketProperty") and options.get("KeyProperty")
                                     else "Uri")
    if form == "Object":
        if not (options.get("BucketProperty") and options.get("KeyProperty")):
            raise InputError("Rain::S3 with Format Object needs BucketProperty and KeyProperty",
                             file=str(file), line=line)
        return {options["BucketProperty"]: bucket, options["KeyProperty"]: key}
    if form == "Uri":
        return f"s3://{bucket}/{key}"
    if form == "Http":
        return f"https://{bucket}.s3.{packager.region}.{dns_suffix(packager.region)}/{key}"
    raise InputError(f"Rain::S3: unknown Format '{form}'", file=str(file), line=line,
                     hint="Uri, Http or Object")


# ---- modules ----------------------------------------------------------------------------------------------
def _modules(template: dict[str, Any], resources: dict[str, Any], file: Path, packager: Packager,
             chain: list[Path]) -> None:
    for logical in list(resources):
        body = resources[logical]
        kind = body.get("Type") if isinstance(body, dict) else None
        found = _directive(kind)
        if found is None or found[0] != MODULE:
            continue
        line = line_of(body, "Type")
        local = packager.resolve(_path(found[1], MODULE, file, line), file, line=line, what=MODULE)
        if local in chain:
            raise InputError(f"rain modules form a cycle: {' -> '.join(str(p) for p in [*chain, local])}",
                             file=str(file), line=line)
        module = load(local)
        inner = module.get("Resources")
        if not isinstance(inner, dict) or not inner:
            raise InputError("a rain module needs Resources", file=str(local), line=1)
        _modules(module, inner, local, packager, [*chain, local])  # modules inside modules first
        for key in list(module):
            module[key] = _directives(module[key], local, packager)
        generated = _instantiate(logical, body, module, local, file)
        position = list(resources).index(logical)
        items = list(resources.items())
        resources.clear()
        resources.update(items[:position])
        resources.update(generated)
        resources.update(items[position + 1:])
        conditions = module.get("Conditions")
        if isinstance(conditions, dict) and conditions:
            template.setdefault("Conditions", {}).update(
                {k: v for k, v in conditions.items() if k not in template.get("Conditions", {})})


def _instantiate(logical: str, body: dict[str, Any], module: dict[str, Any], module_file: Path,
                 file: Path) -> dict[str, Any]:
    params = module.get("Parameters") or {}
    props = body.get("Properties") or {}
    overrides = body.get("Overrides") or {}
    names = set(module["Resources"])
    values: dict[str, Any] = {}
    for name, decl in params.items():
        if name in props:
            values[name] = props[name]
        elif isinstance(decl, dict) and "Default" in decl:
            values[name] = decl["Default"]
    out: dict[str, Any] = {}
    for name, resource in module["Resources"].items():
        made = _rewrite(copy.deepcopy(resource), logical, names, params, values, module_file)
        if name in overrides:
            made = _merge(made, copy.deepcopy(overrides[name]))
        for attribute in INHERITED:
            if attribute in body and attribute not in made:
                made[attribute] = copy.deepcopy(body[attribute])
        out[f"{logical}{name}"] = made
    unknown = set(overrides) - names
    if unknown:
        raise InputError(f"Overrides name {', '.join(sorted(unknown))}, not resources of the module",
                         file=str(file), line=line_of(body, "Overrides"),
                         hint=f"the module's resources: {', '.join(sorted(names))}")
    return out


def _rewrite(node: Any, prefix: str, names: set[str], params: dict[str, Any], values: dict[str, Any],
             module_file: Path) -> Any:
    if isinstance(node, dict):
        if len(node) == 1 and "Ref" in node and isinstance(node["Ref"], str):
            target = node["Ref"]
            if target in params:
                if target not in values:
                    raise InputError(f"the module parameter '{target}' has no value", file=str(module_file),
                                     line=line_of(node),
                                     hint="set it in the resource's Properties or give it a Default")
                return copy.deepcopy(values[target])
            if target in names:
                return {"Ref": f"{prefix}{target}"}
            return node
        if len(node) == 1 and "Fn::GetAtt" in node:
            target = node["Fn::GetAtt"]
            if isinstance(target, list) and target and target[0] in names:
                return {"Fn::GetAtt": [f"{prefix}{target[0]}", *target[1:]]}
            return node
        if len(node) == 1 and "Fn::Sub" in node:
            sub = node["Fn::Sub"]
            if isinstance(sub, str):
                return {"Fn::Sub": _sub(sub, prefix, names, params, values, module_file)}
            if isinstance(sub, list) and sub and isinstance(sub[0], str):
                rest = [_rewrite(v, prefix, names, params, values, module_file) for v in sub[1:]]
                return {"Fn::Sub": [_sub(sub[0], prefix, names, params, values, module_file), *rest]}
        if "DependsOn" in node:
            depends = node["DependsOn"]
            node["DependsOn"] = (f"{prefix}{depends}" if depends in names else depends) \
                if isinstance(depends, str) else [f"{prefix}{d}" if d in names else d for d in depends]
        for key in list(node):
            if key != "DependsOn":
                node[key] = _rewrite(node[key], prefix, names, params, values, module_file)
        return node
    if isinstance(node, list):
        return [_rewrite(v, prefix, names, params, values, module_file) for v in node]
    return node


def _sub(text: str, prefix: str, names: set[str], params: dict[str, Any], values: dict[str, Any],
         module_file: Path) -> str:
    def replace(match: re.Match[str]) -> str:
        name, attribute = match.group(1), match.group(2)
        if name in params and not attribute and name in values:
            value = values[name]
            if isinstance(value, str | int | float):
                return str(value)
            if isinstance(value, dict) and set(value) == {"Ref"}:
                return "${" + str(value["Ref"]) + "}"
            if isinstance(value, dict) and set(value) == {"Fn::GetAtt"}:
                return "${" + ".".join(map(str, value["Fn::GetAtt"])) + "}"
            raise InputError(f"the module parameter '{name}' is used in a Sub but its value is not text",
                             file=str(module_file))
        if name in names:
            return "${" + prefix + name + attribute + "}"
        return match.group(0)

    return SUB_NAME.sub(replace, text)


def _merge(base: Any, override: Any) -> Any:
    if isinstance(base, dict) and isinstance(override, dict):
        for key, value in override.items():
            base[key] = _merge(base[key], value) if key in base else value
        return base
    if isinstance(base, list) and isinstance(override, list):
        return [*base, *override]
    return override
