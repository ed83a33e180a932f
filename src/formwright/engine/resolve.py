"""Resolvers fetched at plan/deploy time, all at once and before any write: every `!ssm`, `!secret`,
`!stack_output`, `!file`, `!cmd` and plugin tag of the stacks about to be planned or deployed.

Batched: GetParameters takes up to 10 names per call (per account and region), each external stack is
described once, the same source written twice is fetched once. A missing parameter, secret, stack or key
is one ProjectError at the formwright.yaml line of the tag (exit 2), raised before the stacks run.
A value from a secret, a decrypted SSM parameter or a plugin that says `secret = True` makes its
parameter secret: masked as a NoEcho parameter's is (engine/values.py), in errors and in records.
"""

from __future__ import annotations

import base64
import contextvars
import json
import logging
import subprocess
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from botocore.exceptions import BotoCoreError, ClientError

from formwright import plugins, sandbox
from formwright.cloud.errors import error_code, error_message
from formwright.errors import FormwrightError, ProjectError
from formwright.model.resolvers import CMD_TIMEOUT, ValueSource, sources_in
from formwright.model.targets import TARGET_KEYS, TargetSpec

if TYPE_CHECKING:
    from formwright.engine.stack import Stack
    from formwright.model.tree import Project, StackConfig

log = logging.getLogger("formwright")

SSM_BATCH = 10  # GetParameters takes at most 10 names
MAX_WORKERS = 8
# `!cmd` under a sandbox (--sandbox, sync) only where the operator allowed it (a sync object's opt-in)
commands_allowed: contextvars.ContextVar[bool] = contextvars.ContextVar("formwright_commands", default=False)


@dataclass
class Wanted:
    """One source to fetch for the stacks of one target (the same `!ssm` in two regions is two values)."""

    source: ValueSource
    target: Any
    spec: TargetSpec

    @property
    def key(self) -> tuple[ValueSource, int]:
        """The source and its stacks' target."""
        return self.source, id(self.target)


@dataclass
class Fetched:
    """What resolving gave: each source's value, and which are secret."""

    values: dict[tuple[ValueSource, int], str] = field(default_factory=dict)
    secret: set[tuple[ValueSource, int]] = field(default_factory=set)


def fetch_values(project: Project, configs: list[StackConfig], target_of_stack: Callable[[StackConfig], Any],
                 target_of: Callable[[TargetSpec], Any]) -> Callable[[Stack], None]:
    """Fetch every resolver of the stacks `configs` (before anything of theirs is prepared or uploaded)
    and return what hands each prepared Stack its values (`Stack.resolved`), the names of its secret
    parameters, and its tags with their values. `target_of_stack(config)` is the stack's Target,
    `target_of(spec)` the Target of another place (a `!stack_output` elsewhere)."""
    wanted: dict[tuple[ValueSource, int], Wanted] = {}
    places: dict[str, int] = {}
    for config in configs:
        target = target_of_stack(config)
        places[config.name] = id(target)
        for source in _sources(config):
            wanted.setdefault((source, id(target)), Wanted(source, target, config.target))
    fetched = Fetched()
    items = list(wanted.values())
    _ssm([w for w in items if w.source.kind == "ssm"], fetched)
    _in_parallel([w for w in items if w.source.kind == "secret"], lambda w: _secret(w, fetched))
    _stack_outputs([w for w in items if w.source.kind == "stack_output"], target_of, fetched)
    local: dict[ValueSource, str] = {}  # a file or a command is the same for every target: read/run once
    for item in items:
        if item.source.kind in ("file", "cmd"):
            if item.source not in local:
                read = _file if item.source.kind == "file" else _command
                local[item.source] = read(project, item.source)
            fetched.values[item.key] = local[item.source]
        elif not item.source.builtin:
            _plugin(project, item, fetched)
    return lambda stack: _hand_over(stack, fetched, places[stack.name])


def _sources(config: StackConfig) -> list[ValueSource]:
    found = [s for value in config.parameters.values() for s in sources_in(value)]
    return found + [v for v in config.tags.values() if isinstance(v, ValueSource)]


def _hand_over(stack: Stack, fetched: Fetched, target: int) -> None:
    """Give `stack` (its Target's id `target`) what its resolvers gave."""
    config = stack.config
    stack.resolved = {s: fetched.values[(s, target)] for s in _sources(config)}
    secret = {s for s in stack.resolved if (s, target) in fetched.secret}
    stack.secret_keys = {key for key, value in config.parameters.items()
                         if any(s in secret for s in sources_in(value))}
    for key, value in list(config.tags.items()):
        if isinstance(value, ValueSource):
            if value in secret:
                raise ProjectError(f"tag '{key}': {value} is a secret, and tags are shown in clear by AWS",
                                   file=value.file, line=value.line, hint="pass it as a NoEcho parameter")
            config.tags[key], config.tag_sources[key] = stack.resolved[value], value
    stack.secret_values = {stack.resolved[s] for s in secret}
    declared = stack.declared_parameters(stack.original)
    for key in sorted(stack.secret_keys):
        decl = declared.get(key)
        if isinstance(decl, dict) and str(decl.get("NoEcho", "")).lower() != "true":
            log.warning("warning: stack '%s': parameter %s takes a secret but is not NoEcho: CloudFormation "
                        "shows its value to anyone who can describe the stack (add NoEcho: true)", stack.name,
                        key)


def _in_parallel(items: list[Wanted], work: Callable[[Wanted], None]) -> None:
    if len(items) <= 1:
        for item in items:
            work(item)
        return
    with ThreadPoolExecutor(max_workers=min(MAX_WORKERS, len(items))) as pool:
        list(pool.map(work, items))  # the first error is raised here


def _error(source: ValueSource, message: str, hint: str | None = None) -> ProjectError:
    return ProjectError(f"{source}: {message}", file=source.file, line=source.line, hint=hint)


def _cloud_error(source: ValueSource, err: Exception, target: Any) -> ProjectError:
    text = error_message(err) if isinstance(err, ClientError) else str(err)
    return _error(source, f"{error_code(err) if isinstance(err, ClientError) else 'error'}: {text} "
                          f"({_where(target)})")


def _where(target: Any) -> str:
    try:
        return target.where()
    except Exception:  # noqa: BLE001 - only for a message
        return str(getattr(target, "region", "?"))


# ---- SSM ---------------------------------------------------------------------------------------
def _ssm(items: list[Wanted], fetched: Fetched) -> None:
    by_target: dict[int, list[Wanted]] = {}
    for item in items:
        by_target.setdefault(id(item.target), []).append(item)
    batches = []
    for group in by_target.values():
        names = sorted({str(w.source.option("name")) for w in group})
        for start in range(0, len(names), SSM_BATCH):
            chunk = set(names[start:start + SSM_BATCH])
            batches.append([w for w in group if w.source.option("name") in chunk])
    results: list[tuple[list[Wanted], dict[str, dict[str, Any]]]] = []

    def fetch(batch: list[Wanted]) -> None:
        target = batch[0].target
        names = sorted({str(w.source.option("name")) for w in batch})
        decrypt = any(w.source.option("decrypt") is True for w in batch)
        try:
            reply = target.client("ssm").get_parameters(Names=names, WithDecryption=decrypt)
        except (ClientError, BotoCoreError) as err:
            raise _cloud_error(batch[0].source, err, target) from None
        found = {p["Name"]: p for p in reply.get("Parameters", [])}
        for parameter in reply.get("Parameters", []):  # a `name:version` or `name:label` selector
            if parameter.get("Selector"):
                found[parameter["Name"] + parameter["Selector"]] = parameter
        results.append((batch, found))
        for item in batch:
            name = str(item.source.option("name"))
            if name not in found:
                raise _error(item.source, f"no such SSM parameter in {_where(target)}",
                             hint="create it (aws ssm put-parameter) or fix the name")

    _in_parallel_batches(batches, fetch)
    for batch, found in results:
        for item in batch:
            parameter = found[str(item.source.option("name"))]
            if parameter.get("Type") == "SecureString" and item.source.option("decrypt") is not True:
                raise _error(item.source, "is a SecureString", hint=f"write !ssm {{name: "
                             f"{item.source.option('name')}, decrypt: true}} (it is then a secret)")
            fetched.values[item.key] = str(parameter.get("Value", ""))
            if item.source.secret:
                fetched.secret.add(item.key)


def _in_parallel_batches(batches: list[list[Wanted]], work: Callable[[list[Wanted]], None]) -> None:
    if len(batches) <= 1:
        for batch in batches:
            work(batch)
        return
    with ThreadPoolExecutor(max_workers=min(MAX_WORKERS, len(batches))) as pool:
        list(pool.map(work, batches))


# ---- Secrets Manager ------------------------------------------------------------------------------
def _secret(item: Wanted, fetched: Fetched) -> None:
    source = item.source
    request: dict[str, str] = {"SecretId": str(source.option("id"))}
    if source.option("version_stage"):
        request["VersionStage"] = str(source.option("version_stage"))
    if source.option("version_id"):
        request["VersionId"] = str(source.option("version_id"))
    try:
        reply = item.target.client("secretsmanager").get_secret_value(**request)
    except ClientError as err:
        if error_code(err) == "ResourceNotFoundException":
            raise _error(source, f"no such secret (or version) in {_where(item.target)}",
                         hint="create it (aws secretsmanager create-secret) or fix the id") from None
        raise _cloud_error(source, err, item.target) from None
    except BotoCoreError as err:
        raise _cloud_error(source, err, item.target) from None
    if "SecretString" in reply:
        value = str(reply["SecretString"])
    else:
        value = base64.b64encode(reply.get("SecretBinary", b"")).decode("ascii")
    key = source.option("key")
    if key:
        try:
            document = json.loads(value)
        except ValueError:
            document = None
        if not isinstance(document, dict):
            raise _error(source, "the secret is not a JSON object, so it has no keys",
                         hint=f"write !secret {source.option('id')} for the whole value")
        if key not in document:
            raise _error(source, f"the secret has no key '{key}'",
                         hint=f"its keys: {', '.join(sorted(map(str, document))) or 'none'}")
        item_value = document[key]
        value = item_value if isinstance(item_value, str) else json.dumps(item_value)
    fetched.values[item.key] = value
    fetched.secret.add(item.key)


# ---- outputs of stacks outside the project --------------------------------------------------------
def _stack_outputs(items: list[Wanted], target_of: Callable[[TargetSpec], Any], fetched: Fetched) -> None:
    from formwright.engine.cfn import CloudFormation

    places: dict[tuple[int, str], list[Wanted]] = {}
    own: dict[int, Any] = {}
    for item in items:
        extra = {k: str(v) for k, v in item.source.argument.items() if k in TARGET_KEYS} \
            if isinstance(item.source.argument, dict) else {}
        target = target_of(TargetSpec(**extra).over(item.spec)) if extra else item.target
        if extra.get("account"):  # pinned: the credentials must be that account's, as a group's are
            try:
                target.check_account(str(item.source))
            except FormwrightError as err:
                raise _error(item.source, err.message, hint=err.hint) from None
        own[id(item)] = target
        places.setdefault((id(target), item.source.stack_and_output()[0]), []).append(item)

    described: dict[tuple[int, str], Any] = {}

    def describe(key: tuple[int, str]) -> None:
        first = places[key][0]
        target = own[id(first)]
        try:
            described[key] = CloudFormation(target.client("cloudformation")).describe(key[1])
        except (ClientError, BotoCoreError) as err:
            raise _cloud_error(first.source, err, target) from None

    keys = list(places)
    if len(keys) > 1:
        with ThreadPoolExecutor(max_workers=min(MAX_WORKERS, len(keys))) as pool:
            list(pool.map(describe, keys))
    for key in keys:
        if len(keys) == 1:
            describe(key)
        info = described[key]
        for item in places[key]:
            stack, output = item.source.stack_and_output()
            where = _where(own[id(item)])
            if info is None or info.status == "DELETE_COMPLETE":
                raise _error(item.source, f"no stack '{stack}' in {where}",
                             hint="deploy it first, or give its region/account/role_arn")
            if output not in info.outputs:
                raise _error(item.source, f"stack '{stack}' has no output '{output}'",
                             hint=f"its outputs: {', '.join(sorted(info.outputs)) or 'none'}")
            fetched.values[item.key] = info.outputs[output]


# ---- files and commands -------------------------------------------------------------------------
def _file(project: Project, source: ValueSource) -> str:
    path = sandbox.Sandbox(project.directory).confine(str(source.option("path")), what="!file",
                                                      file=source.file, line=source.line)
    try:
        data = path.read_bytes()
    except OSError as err:
        raise _error(source, f"cannot read: {err.strerror or err}", hint=f"looked for {path}") from None
    if source.option("base64") is True:
        return base64.b64encode(data).decode("ascii")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise _error(source, "not UTF-8 text", hint="read it as !file {path: ..., base64: true}") from None


def _command(project: Project, source: ValueSource) -> str:
    confinement = sandbox.active()
    if confinement is not None and not commands_allowed.get():
        raise confinement.refuse_code(f"{source}", file=source.file, line=source.line)
    argv = source.argv()
    timeout = float(source.option("timeout", CMD_TIMEOUT))
    try:
        done = subprocess.run(argv, cwd=Path(project.directory), capture_output=True, timeout=timeout,  # noqa: S603
                              stdin=subprocess.DEVNULL, check=False)
    except FileNotFoundError:
        raise _error(source, f"no program '{argv[0]}'", hint="install it or give its path") from None
    except subprocess.TimeoutExpired:
        raise _error(source, f"did not finish within {timeout:g} s",
                     hint="give it more time: !cmd {run: ..., timeout: 120}") from None
    except OSError as err:
        raise _error(source, f"cannot run {argv[0]}: {err.strerror or err}") from None
    if done.returncode != 0:
        tail = done.stderr.decode("utf-8", "replace").strip().splitlines()[-1:]
        raise _error(source, f"exited with code {done.returncode}" + (f": {tail[0][:200]}" if tail else ""))
    out = done.stdout.decode("utf-8", "replace")
    return out.strip() if source.option("strip", True) else out


# ---- plugins -----------------------------------------------------------------------------------
def _plugin(project: Project, item: Wanted, fetched: Fetched) -> None:
    source = item.source
    try:
        resolver = plugins.load(plugins.RESOLVERS, source.kind)
    except plugins.PluginError as err:
        raise ProjectError(f"!{source.kind}: {err.message}", file=source.file, line=source.line,
                           hint=err.hint) from None
    context = {"project": project.name, "directory": str(project.directory), "region": item.target.region,
               "environment": project.environment, "session": item.target.session}
    try:
        value = resolver.resolve(source.argument, context)
    except FormwrightError:
        raise
    except Exception as err:  # noqa: BLE001 - the plugin failed: one line naming it
        raise _error(source, f"failed: {type(err).__name__}: {err}") from None
    if isinstance(value, list):
        value = ",".join(str(v) for v in value)
    if not isinstance(value, str):
        raise _error(source, f"the resolver returned {type(value).__name__}, not text or a list of text")
    fetched.values[item.key] = value
    if getattr(resolver, "secret", False) is True:
        fetched.secret.add(item.key)
