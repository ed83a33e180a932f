"""A sceptre project read as sceptre reads it: each stack's config is every `config.yaml` from `config/` down
to the stack's folder, then the stack's own file, merged key by key with sceptre's strategies; each file is a
Jinja template first (sceptre renders config files with `environment_variable`, `stack_group_config` and
`var`), then YAML whose resolver and hook tags (`!stack_output`, `!cmd`, ...) are kept as `Tagged` values
with their file and line."""

from __future__ import annotations

import copy
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jinja2
import yaml

from formwright.errors import InputError

# How sceptre (4.x, sceptre/config/reader.py) merges a key of a folder's config into its children's: lists of
# dependencies are joined; `parameters`, `stack_tags`, `sceptre_user_data` (dicts) and `hooks`,
# `notifications` (lists) are replaced unless `<key>_inheritance: merge` (the child's setting, else the
# parent's) asks to merge them; every other key is replaced by the child's value.
MERGEABLE = ("dependencies", "hooks", "notifications", "parameters", "sceptre_user_data", "stack_tags")


@dataclass
class Tagged:
    """A YAML tag sceptre resolves at run time (`!stack_output net/vpc.yaml::VpcId`) and where it stands."""

    tag: str
    value: Any
    file: str
    line: int

    def where(self) -> str:
        """`file:line` of the tag."""
        return f"{self.file}:{self.line}"


@dataclass
class StackConfig:
    """One sceptre stack: its path (`dev/net/vpc`, the config file without `.yaml`), its merged config and
    the file and line of each of its keys."""

    path: str
    file: str
    config: dict[str, Any]
    lines: dict[str, str] = field(default_factory=dict)

    def where(self, key: str) -> str:
        """`file:line` of a key, as written (in a config.yaml when inherited)."""
        return self.lines.get(key, self.file)


def _loader_for(file: str) -> type[yaml.SafeLoader]:
    """A safe loader that keeps any `!tag` as a Tagged value with `file` and its line."""

    class Loader(yaml.SafeLoader):
        pass

    def tagged(loader: yaml.SafeLoader, suffix: str, node: yaml.Node) -> Tagged:
        if isinstance(node, yaml.ScalarNode):
            value: Any = loader.construct_scalar(node)
        elif isinstance(node, yaml.SequenceNode):
            value = loader.construct_sequence(node, deep=True)
        else:
            value = loader.construct_mapping(node, deep=True)
        return Tagged("!" + suffix, value, file, node.start_mark.line + 1)

    Loader.add_multi_constructor("!", tagged)
    return Loader


def _key_lines(text: str, file: str) -> dict[str, str]:
    """`file:line` of each top-level key of a YAML text (for messages)."""
    try:
        node = yaml.compose(text, Loader=_loader_for(file))
    except yaml.YAMLError:
        return {}
    if not isinstance(node, yaml.MappingNode):
        return {}
    return {str(key.value): f"{file}:{key.start_mark.line + 1}" for key, _ in node.value}


def read_yaml(path: Path, shown: str, context: dict[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    """A config file rendered with Jinja as sceptre renders it, then loaded: (mapping, key -> file:line)."""
    try:
        text = jinja2.Environment(undefined=jinja2.StrictUndefined, keep_trailing_newline=True).from_string(
            path.read_text()).render(**context)
    except jinja2.TemplateError as err:
        line = getattr(err, "lineno", None)
        raise InputError(f"cannot render sceptre config: {err}", file=shown, line=line,
                         hint="formwright renders sceptre's config files with environment_variable, "
                         "stack_group_config and var (empty), as `sceptre` without --var") from None
    try:
        data = yaml.load(text, Loader=_loader_for(shown)) or {}  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        raise InputError(f"not valid YAML: {getattr(err, 'problem', err)}", file=shown,
                         line=mark.line + 1 if mark else None) from None
    if not isinstance(data, dict):
        raise InputError("a sceptre config file must be a mapping of keys", file=shown, line=1)
    return data, _key_lines(text, shown)


def merge(parent: dict[str, Any], child: dict[str, Any]) -> dict[str, Any]:
    """`child` over `parent` with sceptre's merge strategies."""
    merged = copy.deepcopy(parent)
    for key, value in child.items():
        old = merged.get(key)
        inheritance = child.get(f"{key}_inheritance") or parent.get(f"{key}_inheritance")
        joined = (key == "dependencies" and inheritance != "override") or inheritance == "merge"
        if key in MERGEABLE and joined and isinstance(old, list) and isinstance(value, list):
            merged[key] = old + copy.deepcopy(value)
        elif key in MERGEABLE and joined and isinstance(old, dict) and isinstance(value, dict):
            merged[key] = {**old, **copy.deepcopy(value)}
        else:
            merged[key] = copy.deepcopy(value)
    return merged


def read_project(root: Path) -> list[StackConfig]:
    """Every stack of the sceptre project at `root` (the folder holding `config/`), by path."""
    config_dir = root / "config"
    if not config_dir.is_dir():
        raise InputError(f"{root} is not a sceptre project: it has no config/ folder",
                         file=str(root), hint="give the folder that holds config/ and templates/")
    groups: dict[Path, tuple[dict[str, Any], dict[str, str]]] = {}

    def group(folder: Path) -> tuple[dict[str, Any], dict[str, str]]:
        if folder in groups:
            return groups[folder]
        parent: tuple[dict[str, Any], dict[str, str]] = ({}, {})
        if folder != config_dir:
            parent = group(folder.parent)
        own = folder / "config.yaml"
        config, lines = parent
        if own.is_file():
            data, own_lines = read_yaml(own, _shown(own, root), _context(config))
            config, lines = merge(config, data), {**lines, **own_lines}
        groups[folder] = (config, lines)
        return groups[folder]

    stacks = []
    for path in sorted(config_dir.rglob("*.yaml")):
        if path.name == "config.yaml":
            continue
        inherited, lines = group(path.parent)
        data, own_lines = read_yaml(path, _shown(path, root), _context(inherited))
        name = path.relative_to(config_dir).with_suffix("").as_posix()
        stacks.append(StackConfig(name, _shown(path, root), merge(inherited, data), {**lines, **own_lines}))
    return stacks


def _shown(path: Path, root: Path) -> str:
    """A path as messages show it: relative to the sceptre project's folder."""
    return path.relative_to(root).as_posix()


def _context(stack_group_config: dict[str, Any]) -> dict[str, Any]:
    """What `{{ }}` sees in a sceptre config file: the config inherited so far, by key and as
    `stack_group_config`, the environment and the (empty) `--var`s."""
    return {**stack_group_config, "var": {}, "stack_group_config": stack_group_config,
            "environment_variable": dict(os.environ)}
