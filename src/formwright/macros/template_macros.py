"""`AWS::CloudFormation::Macro` resources whose Lambda function's code is local.

The function is an `AWS::Lambda::Function` with inline `Code.ZipFile` (deployed as `index.py`), or
with `Code` given as a local file or folder as `aws cloudformation package` takes it (likewise
`AWS::Serverless::Function` with `InlineCode` or a local `CodeUri`). `FunctionName` may be
`!GetAtt Fn.Arn`, `!Ref Fn`, `!Sub ${Fn.Arn}` or the function's literal FunctionName.
"""

from __future__ import annotations

import hashlib
import tempfile
import zipfile
from pathlib import Path
from typing import Any

from formwright.macros.base import Macro
from formwright.macros.runners import InlineCodeMacro, PythonFileMacro, UnavailableMacro

_FUNCTION_TYPES = ("AWS::Lambda::Function", "AWS::Serverless::Function")


def _function_id(function_name: Any, resources: dict) -> str | None:
    """The logical id of the local function `FunctionName` points at, if any."""
    if isinstance(function_name, dict) and len(function_name) == 1:
        (kind, args), = function_name.items()
        if kind == "Fn::GetAtt" and isinstance(args, list) and args:
            return str(args[0])
        if kind == "Fn::GetAtt" and isinstance(args, str):
            return args.split(".", 1)[0]
        if kind == "Ref" and isinstance(args, str):
            return args
        if kind == "Fn::Sub" and isinstance(args, str) and args.startswith("${") and args.endswith("}"):
            return args[2:-1].split(".", 1)[0]
    if isinstance(function_name, str):
        for logical_id, resource in resources.items():
            properties = resource.get("Properties") if isinstance(resource, dict) else None
            if isinstance(properties, dict) and properties.get("FunctionName") == function_name:
                return logical_id
    return None


def _unpacked(archive: Path) -> Path:
    """A zip file unpacked once into a cache folder named by its content."""
    digest = hashlib.sha256(archive.read_bytes()).hexdigest()[:16]
    target = Path(tempfile.gettempdir()) / f"formwright-macro-{digest}"
    if not target.is_dir():
        with zipfile.ZipFile(archive) as zipped:
            zipped.extractall(target)
    return target


def _macro_for(name: str, logical_id: str, function: dict, base_dir: Path) -> Macro | None:
    properties = function.get("Properties") or {}
    runtime = properties.get("Runtime", "")
    handler = properties.get("Handler", "index.handler")
    if not isinstance(handler, str) or "." not in handler:
        return None
    module, function_name = handler.rsplit(".", 1)
    origin = f"{logical_id} ({function.get('Type')})"
    if isinstance(runtime, str) and runtime and not runtime.startswith("python"):
        return UnavailableMacro(name, origin, f"the runtime {runtime} of {logical_id} can't run locally "
                                "(only Python); deploy with --macros remote")
    settings = _function_settings(properties)
    code = properties.get("Code") if function.get("Type") == "AWS::Lambda::Function" else None
    inline = code.get("ZipFile") if isinstance(code, dict) else properties.get("InlineCode")
    if isinstance(inline, str):
        return InlineCodeMacro(name, inline, f"{logical_id}.Code.ZipFile", function_name, **settings)
    location = code if isinstance(code, str) else properties.get("CodeUri")
    if not isinstance(location, str) or "://" in location:
        return None  # code in S3: the macro exists only in the cloud
    path = Path(location)
    path = path if path.is_absolute() else base_dir / path
    if path.is_file() and path.suffix == ".zip":
        path = _unpacked(path)
    if path.is_file():
        return PythonFileMacro(name, path, function_name, **settings)
    if path.is_dir():
        return PythonFileMacro(name, path / (module.replace(".", "/") + ".py"), function_name, root=path,
                               **settings)
    return None


def _function_settings(properties: dict) -> dict[str, Any]:
    """The function's Timeout and Environment.Variables (those written as plain values; a variable
    given by an intrinsic function is known only in the cloud and left out)."""
    settings: dict[str, Any] = {}
    timeout = properties.get("Timeout")
    if isinstance(timeout, (int, float)) and not isinstance(timeout, bool) and timeout > 0:
        settings["timeout"] = float(timeout)
    environment = properties.get("Environment")
    variables = environment.get("Variables") if isinstance(environment, dict) else None
    if isinstance(variables, dict):
        settings["environment"] = {str(k): str(v) for k, v in variables.items()
                                   if isinstance(v, (str, int, float)) and not isinstance(v, bool)}
    return settings


def macros_in_template(template: dict, base_dir: Path) -> list[Macro]:
    """The runnable macros the template defines."""
    resources = template.get("Resources") if isinstance(template, dict) else None
    if not isinstance(resources, dict):
        return []
    found: list[Macro] = []
    for resource in resources.values():
        if not isinstance(resource, dict) or resource.get("Type") != "AWS::CloudFormation::Macro":
            continue
        properties = resource.get("Properties") or {}
        name = properties.get("Name")
        if not isinstance(name, str) or name.startswith("AWS::"):
            continue
        logical_id = _function_id(properties.get("FunctionName"), resources)
        function = resources.get(logical_id) if logical_id else None
        if not isinstance(function, dict) or function.get("Type") not in _FUNCTION_TYPES:
            continue
        macro = _macro_for(name, logical_id, function, base_dir)  # type: ignore[arg-type]
        if macro is not None:
            found.append(macro)
    return found
