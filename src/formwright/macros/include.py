"""`AWS::Include`: insert a YAML or JSON snippet from S3 (or, locally, a file) into the template.

From the transform's documentation: Location is an `s3://bucket/key` URI; the snippet must be a
valid key-value object in YAML or JSON; YAML short-form tags are not supported in snippets; a
snippet can't itself use `AWS::Include`. Used as `Fn::Transform`, the snippet is merged into the
parent mapping (the macro's scope); in the Transform section it is merged into the template.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import yaml

from formwright.macros.base import BuiltinMacro, MacroEnv
from formwright.macros.errors import MacroFailed
from formwright.template.limits import MAX_DEPTH

NAME = "AWS::Include"
_S3_URI = re.compile(r"^s3://(?P<bucket>[^/]+)/(?P<key>.+)$")


class _SnippetLoader(yaml.SafeLoader):
    """Plain YAML: a `!Tag` is an error, as CloudFormation does not read short forms in snippets."""


def _reject_tag(loader: yaml.Loader, suffix: str, node: yaml.Node) -> Any:
    raise MacroFailed(
        f"short-form tag !{suffix} at line {node.start_mark.line + 1} of the snippet is not supported",
        hint=f"write the long form ({{'Fn::{suffix}': ...}} or Ref) in included snippets",
    )


_SnippetLoader.add_multi_constructor("!", _reject_tag)
# Dates stay text, as in templates.
_SnippetLoader.add_constructor(
    "tag:yaml.org,2002:timestamp", lambda loader, node: loader.construct_scalar(node)
)


def parse_snippet(text: str, location: str) -> dict:
    """The snippet as a mapping; CloudFormation's complaints otherwise."""
    try:
        data = yaml.load(text, Loader=_SnippetLoader)  # noqa: S506 - a SafeLoader subclass
    except MacroFailed:
        raise
    except RecursionError:
        raise MacroFailed(f"the snippet at {location} is nested more than {MAX_DEPTH} levels deep",
                          hint="flatten the structure") from None
    except ValueError:  # int(): a number past Python's 4,300 digits
        raise MacroFailed(f"the snippet at {location} holds a number too long to read (over 4,300 digits)",
                          hint="quote it to make it text") from None
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        at = f" at line {mark.line + 1}" if mark else ""
        raise MacroFailed(f"the snippet at {location} is not valid YAML or JSON{at}") from None
    if _depth(data) > MAX_DEPTH:
        raise MacroFailed(f"the snippet at {location} is nested more than {MAX_DEPTH} levels deep",
                          hint="flatten the structure")
    if not isinstance(data, dict):
        raise MacroFailed(f"the snippet at {location} must be a key-value object",
                          hint='a snippet looks like "KeyName": value')
    if _uses_include(data):
        raise MacroFailed(f"the snippet at {location} uses AWS::Include; a snippet can't include another",
                          hint="inline the inner snippet")
    return data


def _depth(node: Any) -> int:
    """How deep a loaded snippet nests (iteratively: a deep one must not exhaust the stack counting)."""
    deepest, todo = 0, [(node, 1)]
    while todo:
        value, level = todo.pop()
        if isinstance(value, (dict, list)):
            deepest = max(deepest, level)
            if level <= MAX_DEPTH:
                children = value.values() if isinstance(value, dict) else value
                todo.extend((child, level + 1) for child in children)
    return deepest


def _uses_include(node: Any) -> bool:
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            for key, value in item.items():
                if key in ("Fn::Transform", "Transform") and NAME in json.dumps(value, default=str):
                    return True
                if isinstance(value, (dict, list)):
                    stack.append(value)
        elif isinstance(item, list):
            stack.extend(item)
    return False


def read_location(location: str, env: MacroEnv) -> str:
    """The snippet's text from S3 (the target's client) or a local file relative to the template."""
    match = _S3_URI.match(location)
    if match:
        if env.s3_client is None:
            raise MacroFailed(f"{location} needs S3, and no S3 client was given",
                              hint="run against a target (the local cloud or AWS), or use a local path")
        try:
            reply = env.s3_client.get_object(Bucket=match["bucket"], Key=match["key"])
            body = reply["Body"].read()
        except Exception as err:  # noqa: BLE001 - botocore's errors vary; all mean "not readable"
            code = getattr(err, "response", {}).get("Error", {}).get("Code") or type(err).__name__
            raise MacroFailed(
                f"could not read {location} ({code})",
                hint="check the bucket and key exist on the target and you may read them",
            ) from None
    else:
        if "://" in location:
            raise MacroFailed(f"Location {location} is not an S3 URI",
                              hint="use s3://bucket/key (or, locally, a path relative to the template)")
        path = Path(location)
        path = path if path.is_absolute() else env.base_dir / path
        if env.sandbox is not None and not env.sandbox.contains(path):
            raise MacroFailed(f"Location {location} is outside the checkout (refused by the sandbox)",
                              hint="include a file inside the repository, or from s3://")
        try:
            body = path.read_bytes()
        except OSError as err:
            raise MacroFailed(f"could not read {location} ({err.strerror or err})",
                              hint=f"the path is relative to the template's folder {env.base_dir}") from None
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError:
        raise MacroFailed(f"the snippet at {location} is not UTF-8 text") from None


class IncludeMacro(BuiltinMacro):
    """The `AWS::Include` transform."""

    def __init__(self) -> None:
        super().__init__(NAME)

    def apply(self, fragment: Any, params: dict[str, Any], env: MacroEnv) -> Any:
        """Merge the snippet named by Parameters.Location into the fragment."""
        location = params.get("Location") if isinstance(params, dict) else None
        if not isinstance(location, str) or not location:
            raise MacroFailed("the Location parameter is missing or not a string",
                              hint="Parameters: {Location: s3://bucket/key}")
        snippet = parse_snippet(read_location(location, env), location)
        if not isinstance(fragment, dict):
            return snippet
        merged = dict(fragment)
        merged.update(snippet)
        return merged
