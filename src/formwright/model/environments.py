"""Environments and variables: one project, deployed as dev and prod.

An environment is an overlay of the project file, written inline (`environments: {prod: {...}}`) or in
`environments/<name>.yaml` (or `.yml`) next to formwright.yaml (the file wins where both set a key).
Mappings merge key by key, anything else (lists, scalars) is replaced — as Helm merges values files.
Variables for `{{ var.K }}` come from `vars:`, the environment's `vars:`, each `--var-file`, then each
`--var K=V`, later ones winning.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from formwright import sandbox
from formwright.errors import InputError, ProjectError
from formwright.model.references import OutputRef
from formwright.model.resolvers import ValueSource
from formwright.template.document import Mapping
from formwright.template.values import SourceLine

ENVIRONMENTS_DIR = "environments"
OVERLAY_SUFFIXES = (".yaml", ".yml")


def environment_names(raw: Mapping, directory: Path) -> list[str]:
    """The environments the project defines, inline or as overlay files."""
    inline = raw.get("environments")
    names = set(inline) if isinstance(inline, dict) else set()
    folder = directory / ENVIRONMENTS_DIR
    if folder.is_dir():
        names |= {p.stem for suffix in OVERLAY_SUFFIXES for p in folder.glob(f"*{suffix}")}
    return sorted(names)


def default_environment(raw: Mapping, directory: Path, file: str) -> str | None:
    """`default_environment:`, the environment used without --env (checked: one the project defines)."""
    name = raw.get("default_environment")
    if name is None:
        return None
    line = raw.line_of("default_environment")
    known = environment_names(raw, directory)
    if not isinstance(name, str) or name not in known:
        raise ProjectError(f"default_environment '{name}' is not one of the project's environments",
                           file=file, line=line, hint=f"environments: {', '.join(known)}" if known
                           else "define it under `environments:`")
    return name


def require_environment(raw: Mapping, directory: Path, environment: str | None, file: str | None) -> None:
    """A project with environments is planned, deployed or read in one of them: without --env (and without
    `default_environment:`) it would silently be a third, unnamed set of stacks, so it is refused, as
    sceptre needs its config path."""
    known = environment_names(raw, directory)
    if environment is None and known:
        raise ProjectError(f"the project has environments ({', '.join(known)}); name one with --env",
                           file=file, line=raw.line_of("environments") or 1,
                           hint=f"--env {known[0]}, FORMWRIGHT_ENV={known[0]}, or `default_environment: "
                           f"{known[0]}` in formwright.yaml")


def _overlay_file(name: str, directory: Path) -> Path | None:
    """environments/NAME.yaml or NAME.yml (both: an error, as one would be silently ignored)."""
    found = [sandbox.confine(directory / ENVIRONMENTS_DIR / f"{name}{suffix}", what=f"environment '{name}'",
                             base=directory) for suffix in OVERLAY_SUFFIXES]
    found = [path for path in found if path.is_file()]
    if len(found) > 1:
        raise ProjectError(f"environment '{name}' has two files, {found[0].name} and {found[1].name}",
                           file=str(found[1]), hint="merge them into one")
    return found[0] if found else None


def overlay_of(raw: Mapping, name: str, directory: Path, file: str, load: Any) -> Mapping:
    """The overlay of environment `name` (inline, then its file); an unknown name is an error."""
    inline = raw.get("environments")
    if inline is not None and not isinstance(inline, Mapping):
        raise ProjectError("`environments` must map an environment name to its values", file=file,
                           line=raw.line_of("environments"))
    overlay: Mapping | None = None
    if inline and name in inline:
        body = inline[name]
        if body is not None and not isinstance(body, Mapping):
            raise ProjectError(f"environment '{name}' must be a mapping", file=file,
                               line=inline.line_of(name))
        overlay = body or Mapping()
    path = _overlay_file(name, directory)
    if path is not None:
        try:
            loaded = load(path.read_text(encoding="utf-8"), str(path))
        except UnicodeDecodeError as err:
            raise ProjectError(f"not UTF-8 text: {err.reason}", file=str(path)) from None
        if loaded is not None and not isinstance(loaded, Mapping):
            raise ProjectError(f"environment '{name}' must be a mapping", file=str(path), line=1)
        if loaded is not None:
            _set_file(loaded, str(path))
        overlay = merge(overlay or Mapping(), loaded or Mapping())
    if overlay is None:
        known = environment_names(raw, directory)
        raise ProjectError(
            f"unknown environment '{name}'", file=file, line=raw.line_of("environments") or 1,
            hint=f"environments: {', '.join(known)}" if known
            else f"add environments: {{{name}: {{...}}}} or {ENVIRONMENTS_DIR}/{name}.yaml",
        )
    return overlay


def _set_file(value: Any, file: str) -> None:
    """Mark every line of an overlay file with that file: merged into formwright.yaml, its values still
    report errors at environments/<name>.yaml:LINE."""
    if isinstance(value, Mapping):
        value.file = file
        if value.line is not None:
            value.line = SourceLine(value.line, file)
        value.key_lines = {key: SourceLine(line, file) for key, line in value.key_lines.items()}
        for key, item in value.items():
            if isinstance(item, (OutputRef, ValueSource)) and item.line is not None:
                value[key] = replace(item, file=file, line=SourceLine(item.line, file))
            else:
                _set_file(item, file)
    elif isinstance(value, list):
        if getattr(value, "line", None) is not None:
            value.line = SourceLine(value.line, file)  # type: ignore[attr-defined]
        for index, item in enumerate(value):
            if isinstance(item, (OutputRef, ValueSource)) and item.line is not None:
                value[index] = replace(item, file=file, line=SourceLine(item.line, file))
            else:
                _set_file(item, file)


def merge(base: Any, overlay: Any) -> Any:
    """`overlay` over `base`: mappings key by key (keeping each key's line), anything else replaced."""
    if not (isinstance(base, Mapping) and isinstance(overlay, Mapping)):
        return overlay
    result = Mapping(base)
    result.line, result.file = base.line, base.file
    result.key_lines = dict(base.key_lines)
    for key, value in overlay.items():
        result[key] = merge(base[key], value) if key in base else value
        if key in overlay.key_lines:
            result.key_lines[key] = overlay.key_lines[key]
    return result


def parse_var_flags(items: list[str] | None) -> dict[str, str]:
    """`--var K=V` flags as a mapping; a flag without `=` is an error."""
    result: dict[str, str] = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise InputError(f"--var '{item}' is not K=V", hint="e.g. --var size=large")
        result[key.strip()] = value
    return result


def read_var_file(path: Path, load: Any) -> dict[str, Any]:
    """The variables of one `--var-file` (a YAML mapping)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise InputError(f"--var-file {path}: no such file") from None
    except (OSError, UnicodeDecodeError) as err:
        raise InputError(f"--var-file {path}: cannot read: {err}") from None
    data = load(text, str(path))
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ProjectError("a var file must be a mapping of names to values", file=str(path), line=1)
    return dict(data)


def check_variables(value: Any, file: str, line: int | None) -> dict[str, Any]:
    """A `vars:` mapping as a plain dict (names must be strings)."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ProjectError("`vars` must map names to values", file=file, line=line,
                           hint="vars: {size: small}")
    return {str(k): v for k, v in value.items()}


