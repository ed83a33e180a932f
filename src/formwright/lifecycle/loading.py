"""Loading the project an instance operation runs: its source snapshotted (a package installed first),
its inputs resolved against the manifest's definitions, the project rendered for the instance.

An error names the user's file, not our snapshot of it, and never shows a secret value.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from formwright.errors import FormwrightError
from formwright.lifecycle.actions import Redactor
from formwright.lifecycle.inputs import resolve_inputs
from formwright.lifecycle.manifest import Manifest, parse_manifest
from formwright.lifecycle.package import install_package, is_package
from formwright.lifecycle.rendering import LenientInputs, check_secure_names, load_for_instance
from formwright.lifecycle.sources import snapshot
from formwright.lifecycle.workspace import refuse_stack_targets
from formwright.model.project import Project, find_project_file

MASK = "****"  # a secure input's value as the journal keeps it


@dataclass
class Loaded:
    """The project of one operation and what it was loaded from."""

    project: Project
    manifest: Manifest
    source: Path  # the snapshot
    inputs: dict[str, Any]
    secure: list[str]
    origin: Path = Path(".")  # the folder the snapshot was taken of
    package: dict[str, Any] | None = None  # {name, version, digest, files} when installed from an archive


def load(state: Path, name: str, source: Path, given: dict[str, str], previous: dict[str, Any] | None,
         properties: dict[str, str], options: dict[str, Any]) -> Loaded:
    """Snapshot `source` into the home's `state`, resolve the inputs (`given` over `previous`) and render
    the project for instance `name`; `options` are load_project's (region, profile, environment)."""
    package: dict[str, Any] | None = None
    if is_package(source):
        source, info = install_package(source, state)
        package = info.to_json()
    src = snapshot(source, state)
    try:
        rough = load_for_instance(src, name, LenientInputs(previous or {}, given), **options)
        manifest = parse_manifest(rough)
        if any(d.secure for d in manifest.inputs.values()):
            check_secure_names(src)
        inputs = resolve_inputs(manifest.inputs, given, previous=previous, file=rough.file)
        project = load_for_instance(src, name, inputs, properties, version=rough.version, **options)
        manifest = parse_manifest(project)
        refuse_stack_targets(project)
    except FormwrightError as err:  # name the user's file, not our snapshot of it; never a secret
        secrets = Redactor(v for k, v in {**(previous or {}), **given}.items() if k in _secure_names(src))
        err.message = secrets.text(err.message)
        err.args = (err.message,)
        if err.file and str(err.file).startswith(str(src)):
            original = find_project_file(source).parent.resolve()
            if not original.is_relative_to(state.resolve()):
                err.file = str(original) + str(err.file)[len(str(src)):]
        raise
    secure = sorted(n for n, d in manifest.inputs.items() if d.secure)
    return Loaded(project, manifest, src, inputs, secure, source, package)


def unmasked(journaled: dict[str, Any], kept: dict[str, Any]) -> dict[str, Any]:
    """Journaled inputs with each masked secure value restored from what its operation `kept`."""
    return {k: kept.get(k, v) if v == MASK else v for k, v in journaled.items()}


def _secure_names(source: Path) -> set[str]:
    """The names of the secure inputs of the project at `source` (none when it cannot be read)."""
    try:
        rough = load_for_instance(source, "x", LenientInputs({}, {}))
        return {n for n, d in parse_manifest(rough).inputs.items() if d.secure}
    except FormwrightError:
        return set()
