"""A stack's `template: {type: NAME, ...}`: a template produced by a handler, as sceptre's template handlers
do. Built in: `http` (`{type: http, url: https://..., timeout: 30}`) and `s3` (`{type: s3, path:
bucket/key.yaml}` or `{type: s3, url: s3://bucket/key.yaml}`, read with the stack's own credentials).
Others come from the `formwright.template_handlers` entry-point group: a class with
`handle(arguments, context) -> str` returning the template's text.

The text is written to `.formwright/build/<stack>/fetched/template.<ext>` and loaded from there, so
plan, deploy and validate treat it as any template file (its lines in messages included).
"""

from __future__ import annotations

import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

from formwright import plugins
from formwright.errors import FormwrightError, ProjectError
from formwright.state.applied import write_atomic

BUILTIN = ("http", "s3")
HTTP_TIMEOUT = 30.0
MAX_BYTES = 1024 * 1024  # CloudFormation takes templates up to 1 MB (from S3)


class HttpHandler:
    """GET `url` (http or https)."""

    def handle(self, arguments: dict[str, Any], context: dict[str, Any]) -> str:
        """The body at `url`."""
        url = str(arguments.get("url") or "")
        timeout = float(arguments.get("timeout") or HTTP_TIMEOUT)
        try:
            with urllib.request.urlopen(url, timeout=timeout) as reply:  # noqa: S310 - http(s) checked on load
                data = reply.read(MAX_BYTES + 1)
        except urllib.error.HTTPError as err:
            raise FormwrightError(f"GET {url}: HTTP {err.code} {err.reason}") from None
        except (urllib.error.URLError, OSError) as err:
            reason = getattr(err, "reason", err)
            raise FormwrightError(f"GET {url}: {reason}") from None
        return _text(data, url)


class S3Handler:
    """GetObject of `path` (bucket/key) or `url` (s3://bucket/key), with the stack's credentials."""

    def handle(self, arguments: dict[str, Any], context: dict[str, Any]) -> str:
        """The object's body."""
        bucket, key = s3_location(arguments)
        from botocore.exceptions import ClientError

        try:
            reply = context["client"]("s3").get_object(Bucket=bucket, Key=key)
            data = reply["Body"].read(MAX_BYTES + 1)
        except ClientError as err:
            code = err.response.get("Error", {}).get("Code", err)
            raise FormwrightError(f"s3://{bucket}/{key}: {code}") from None
        return _text(data, f"s3://{bucket}/{key}")


def s3_location(arguments: dict[str, Any]) -> tuple[str, str]:
    """(bucket, key) of an s3 handler's `path` or `url`."""
    if arguments.get("url"):
        parsed = urllib.parse.urlparse(str(arguments["url"]))
        return parsed.netloc, parsed.path.lstrip("/")
    bucket, _, key = str(arguments.get("path") or "").lstrip("/").partition("/")
    return bucket, key


def _text(data: bytes, where: str) -> str:
    if len(data) > MAX_BYTES:
        raise FormwrightError(f"{where}: larger than CloudFormation's 1 MB template limit")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise FormwrightError(f"{where}: not UTF-8 text") from None


def check_source(arguments: dict[str, Any], file: str, line: int | None) -> None:
    """The form of `template: {type: ...}` (offline): a known type and what a built-in needs."""
    kind = arguments.get("type")
    known = [*BUILTIN, *plugins.names(plugins.TEMPLATE_HANDLERS)]
    if not isinstance(kind, str) or kind not in known:
        raise ProjectError(f"unknown template handler type '{kind}'", file=file, line=line,
                           hint=f"known: {', '.join(known)} (plugins add more: formwright.template_handlers)")
    if kind == "http":
        scheme = urllib.parse.urlparse(str(arguments.get("url") or "")).scheme
        if scheme not in ("http", "https"):
            raise ProjectError("template: {type: http} needs an http(s) `url`", file=file, line=line,
                               hint="template: {type: http, url: https://example.com/vpc.yaml}")
    if kind == "s3":
        bucket, key = s3_location(arguments)
        if not bucket or not key:
            raise ProjectError("template: {type: s3} needs `path: bucket/key` or `url: s3://bucket/key`",
                               file=file, line=line, hint="template: {type: s3, path: my-bucket/vpc.yaml}")


def fetch(config: Any, target: Any, build_dir: Path) -> Path:
    """Produce the stack's template with its handler; the path of the file it was written to."""
    arguments = dict(config.template_source)
    kind = arguments["type"]
    where = f"template of stack '{config.name}' ({kind})"
    if kind == "http":
        handler: Any = HttpHandler()
    elif kind == "s3":
        handler = S3Handler()
    else:
        try:
            handler = plugins.load(plugins.TEMPLATE_HANDLERS, kind)
        except plugins.PluginError as err:
            raise ProjectError(f"{where}: {err.message}", file=config.project.file,
                               line=config.template_line, hint=err.hint) from None
    context = {"project": config.project.name, "directory": str(config.project.directory),
               "stack": config.name, "region": getattr(target, "region", None),
               "client": target.client if target is not None else _no_client}
    try:
        text = handler.handle(arguments, context)
    except FormwrightError as err:
        raise ProjectError(f"{where}: {err.message}", file=config.project.file, line=config.template_line,
                           hint=err.hint) from None
    except Exception as err:  # noqa: BLE001 - a plugin failed: one line naming it
        raise ProjectError(f"{where}: {type(err).__name__}: {err}", file=config.project.file,
                           line=config.template_line) from None
    if not isinstance(text, str):
        raise ProjectError(f"{where}: the handler returned {type(text).__name__}, not the template's text",
                           file=config.project.file, line=config.template_line)
    name = str(arguments.get("url") or arguments.get("path") or "")
    suffix = Path(urllib.parse.urlparse(name).path).suffix
    path = build_dir / "fetched" / f"template{suffix if suffix in ('.json', '.yaml', '.yml') else '.yaml'}"
    write_atomic(path, text)
    return path


def _no_client(service: str) -> Any:
    """Without a target (validate offline with an s3 template) the default credentials' client."""
    from formwright.cloud.session import Targets
    from formwright.model.targets import TargetSpec

    return Targets(None).get(TargetSpec()).client(service)
