"""Software lifecycle operations as `AWS::CloudFormation::Init` configs.

Per node: one config with its files (artifacts and operation scripts from the artifact bucket, each
under its content's key, so nodes shipping the same file share one object; where it goes on the
instance, `/opt/formwright/<node>/<path in the source>`, is the node's own, in the metadata),
then one per operation in create → configure → start order, each running the script through the
`formwright-run` wrapper with the operation's inputs as environment variables (from the script's own
folder; `start` as a systemd unit, see the wrapper). Start inputs are the node's environment even when
`start` has no script. An output another host reads is sent right after its operation ran, by a config
of its own (`add_publications`, see `outputs`).
"""

from __future__ import annotations

import functools
import posixpath
import re
import shlex
import urllib.parse
from importlib import resources
from pathlib import PurePosixPath

from troposphere import Ref

from formwright.errors import InputError
from formwright.tosca.functions import Context
from formwright.tosca.model import Location, Node, Operation
from formwright.transform.cloudformation.context import Build
from formwright.transform.cloudformation.names import camel
from formwright.transform.cloudformation.values import Renderer

DEPLOY_OPERATIONS = ("create", "configure", "start")
BASE = "/opt/formwright"
RUNNER = f"{BASE}/bin/formwright-run"
AUTH = "ArtifactAccess"
WAIT_TIMEOUT = "1800"  # seconds a WaitCondition waits for outputs: the instances' CreationPolicy's PT30M
_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@functools.cache
def runner_script() -> str:
    """The text of the `formwright-run` wrapper installed on every instance (read once per process)."""
    return (
        resources.files("formwright.transform.cloudformation") / "scripts" / "formwright-run.sh.j2"
    ).read_text(encoding="utf-8")


RUNNER_NAME = "formwright-run"


def runtime_config(build: Build) -> dict:
    """The first init config of an instance that runs operations: the wrapper, from the artifact bucket."""
    key = build.generate(RUNNER_NAME, runner_script())
    return {"files": {RUNNER: {"source": s3_url(build, key), "mode": "000755", "owner": "root",
                               "group": "root", "authentication": AUTH}}}


def s3_url(build: Build, key: str) -> dict:
    """The HTTPS URL of an uploaded file in the artifact bucket."""
    quoted = urllib.parse.quote(key)
    return {"Fn::Sub": "https://${" + build.bucket() + "}.s3.${AWS::Region}.amazonaws.com/" + quoted}


def source_file(build: Build, relative: str, where: Location | None, what: str) -> str:
    """`relative` (relative to the service template's folder, as tosca-parser resolves artifacts in a
    CSAR) as a path relative to the source root; it must stay inside the source and exist."""
    path = PurePosixPath(relative.replace("\\", "/"))
    joined = posixpath.normpath((PurePosixPath(build.model.base) / path).as_posix())
    if path.is_absolute() or joined == ".." or joined.startswith("../"):
        raise InputError(f"{what} '{relative}' must be a path inside the template's folder or archive",
                         file=where.file if where else None, line=where.line if where else None)
    if not build.is_source_file(joined):
        raise InputError(f"{what} '{relative}' not found", file=where.file if where else None,
                         line=where.line if where else None,
                         hint="paths are relative to the folder of the service template")
    return joined


def file_entry(build: Build, node: Node, relative: str, mode: str) -> tuple[str, dict]:
    key = build.upload(relative)
    return f"{BASE}/{node.name}/{relative}", {"source": s3_url(build, key), "mode": mode, "owner": "root",
                                              "group": "root", "authentication": AUTH}


def add_operations(build: Build, node: Node, compute: str) -> None:
    """Add the file config and the create/configure/start configs of `node` to the instance of `compute`."""
    renderer = Renderer(build, run_host=compute)
    files: dict[str, dict] = {}
    for artifact in node.artifacts.values():
        relative = source_file(build, artifact.file, node.location, f"artifact '{artifact.name}'")
        path, entry = file_entry(build, node, relative, "000644")
        files[path] = entry
    operations: list[tuple[Operation, str | None]] = []
    for name in DEPLOY_OPERATIONS:
        op = node.operations.get(name)
        if op is not None and not op.implementation and name == "start" and op.inputs:
            operations.append((op, None))  # the inputs still become the node's environment
        if op is None or not op.implementation:
            continue
        script = source_file(
            build, op.implementation, op.location, f"implementation of '{node.name}.{name}'"
        )
        dependencies = [source_file(build, d, op.location, "operation file") for d in op.dependencies]
        for relative in [script, *dependencies]:
            path, entry = file_entry(build, node, relative, "000755" if relative == script else "000644")
            files[path] = entry
        operations.append((op, script))
    if files:
        build.instance_roles.add(compute)
        build.add_config(compute, f"{camel(node.name)}Files", {"files": files})
    if operations:
        build.operation_hosts.add(compute)
    for op, run_script in operations:
        env: dict[str, object] = {}
        for key, raw in op.inputs.items():
            if not _IDENTIFIER.match(key):
                raise InputError(
                    f"operation input '{key}' of '{node.name}.{op.name}' is not a valid environment "
                    "variable name",
                    file=op.location.file if op.location else None,
                    line=op.location.line if op.location else None,
                )
            env[key] = renderer.text(renderer.value(raw, Context(node, location=op.location)))
        env["FW_INPUTS"] = " ".join(op.inputs)
        command = {
            "command": " ".join(shlex.quote(p) for p in (RUNNER, node.name, op.name, run_script) if p),
            "env": env,
            "cwd": BASE,
        }
        config: dict = {"files": renderer.signal_files} if renderer.signal_files else {}
        config["commands"] = {"run": command}  # cfn-init writes the files (outputs of other hosts) first
        renderer.signal_files = {}
        build.add_config(compute, f"{camel(node.name)}{camel(op.name)}", config)


def add_publications(build: Build) -> None:
    """For each operation whose outputs other hosts read: its WaitCondition (with its handle), and on its
    host, right after the operation's config, the config that sends them (see `outputs`)."""
    from troposphere.cloudformation import WaitCondition, WaitConditionHandle

    for published in build.published.values():
        args = [RUNNER, "--publish", published.node, published.operation, *published.names]
        config = {"commands": {"publish": {"command": " ".join(shlex.quote(a) for a in args),
                                           "env": {"FW_SIGNAL_URL": {"Ref": published.handle}}, "cwd": BASE}}}
        configs = build.init_configs[published.host]
        after = f"{camel(published.node)}{camel(published.operation)}"
        index = next(i for i, (name, _) in enumerate(configs) if name == after)
        configs.insert(index + 1, (f"{after}Outputs", config))
        build.template.add_resource(WaitConditionHandle(published.handle))
        # what the producing instance waits for, so that the timeout starts when the instance is created
        depends = sorted(build.depends_on.get(build.plan.instances[published.host], ()))
        build.template.add_resource(WaitCondition(
            published.wait, Handle=Ref(published.handle), Timeout=WAIT_TIMEOUT, Count=len(published.names),
            **({"DependsOn": depends} if depends else {})))
