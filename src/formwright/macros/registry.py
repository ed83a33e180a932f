"""Which macro a name means: built-ins, packaged entry points, project files, a --macros folder,
and `AWS::CloudFormation::Macro` resources whose Lambda code is local.

Later, more explicit sources win: entry points < template macros < formwright.yaml < --macros DIR.
Names beginning with `AWS::` are CloudFormation's and cannot be redefined.
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path
from typing import Any

from formwright.errors import InputError
from formwright.macros.base import Macro
from formwright.macros.runners import (
    DEFAULT_TIMEOUT,
    EntryPointMacro,
    ExecutableMacro,
    PythonFileMacro,
    UnavailableMacro,
)
from formwright.sandbox import Sandbox, active

ENTRY_POINT_GROUP = "formwright.macros"  # found as every plugin is (formwright.plugins)

PRIORITY_BUILTIN = 100
PRIORITY_DIR = 40
PRIORITY_PROJECT = 30
PRIORITY_TEMPLATE = 20
PRIORITY_ENTRY_POINT = 10


def _builtins() -> list[Macro]:
    from formwright.macros.include import IncludeMacro
    from formwright.macros.language_extensions import LanguageExtensionsMacro
    from formwright.macros.serverless import ServerlessMacro

    return [IncludeMacro(), LanguageExtensionsMacro(), ServerlessMacro()]


def macro_from_path(
    name: str,
    path: Path,
    *,
    timeout: float = DEFAULT_TIMEOUT,
    where: str | None = None,
    environment: dict[str, str] | None = None,
) -> Macro:
    """A `.py` file (optionally `file.py:function`) is a handler; anything else must be executable."""
    function = "handler"
    text = str(path)
    if ".py:" in text:
        text, function = text.rsplit(":", 1)
        path = Path(text)
    path = path.resolve()
    if not path.is_file():
        raise InputError(f"macro {name}: {path} is not a file", where=where,
                         hint="give the path of a Python handler file or an executable")
    if path.suffix == ".py":
        return PythonFileMacro(name, path, function, timeout, environment)
    if not os.access(path, os.X_OK):
        raise InputError(f"macro {name}: {path} is not executable", where=where,
                         hint=f"chmod +x {path}, or name a Python handler file ending in .py")
    return ExecutableMacro(name, path, timeout)


def project_entry(name: Any, entry: Any, timeout: float) -> tuple[str, dict[str, str], float]:
    """A `macros:` entry of formwright.yaml: `Name: path`, or `Name: {path, environment, timeout}`."""
    hint = "macros: {Name: path} or {Name: {path: macros/m.py, environment: {KEY: value}, timeout: 30}}"
    if not isinstance(name, str):
        raise InputError(f"macros: {name!r} must be a macro name", where="formwright.yaml", hint=hint)
    if isinstance(entry, str):
        return entry, {}, timeout
    if not isinstance(entry, dict) or not isinstance(entry.get("path"), str):
        raise InputError(f"macros: {name} must be a path or a mapping with a path", where="formwright.yaml",
                         hint=hint)
    unknown = sorted(set(entry) - {"path", "environment", "timeout"})
    if unknown:
        raise InputError(f"macros: {name} has an unknown key {unknown[0]}", where="formwright.yaml",
                         hint=hint)
    environment = entry.get("environment") or {}
    if not isinstance(environment, dict) or not all(
            isinstance(v, (str, int, float, bool)) for v in environment.values()):
        raise InputError(f"macros: {name}: environment must map names to values", where="formwright.yaml",
                         hint=hint)
    own = entry.get("timeout", timeout)
    if isinstance(own, bool) or not isinstance(own, (int, float)) or not 0 < own <= 900:
        raise InputError(f"macros: {name}: timeout must be a number of seconds from 1 to 900",
                         where="formwright.yaml", hint="Lambda allows up to 900 seconds")
    return entry["path"], {str(k): _env_text(v) for k, v in environment.items()}, float(own)


def _env_text(value: Any) -> str:
    return ("true" if value else "false") if isinstance(value, bool) else str(value)


def _is_script(path: Path) -> bool:
    """True when the file starts with `#!` (meant to be run, whether or not it is executable)."""
    with open(path, "rb") as handle:
        return handle.read(2) == b"#!"


class MacroRegistry:
    """Every macro this run can call, by name."""

    def __init__(self) -> None:
        self._macros: dict[str, tuple[int, Macro]] = {}
        self.folders: list[Path] = []  # the --macros folders (a hint may point at a subfolder of one)
        #: The sandbox in force when the registry was built (formwright.sandbox); macros it expands obey it.
        self.sandbox: Sandbox | None = active()

    # -- construction -----------------------------------------------------------------------------
    @classmethod
    def build(
        cls,
        *,
        project_macros: dict[str, Any] | None = None,
        base_dir: Path | None = None,
        macros_dir: Path | None = None,
        timeout: float = DEFAULT_TIMEOUT,
    ) -> MacroRegistry:
        """Built-ins, entry points, `macros:` of formwright.yaml (paths relative to base_dir), a folder."""
        registry = cls()
        for macro in _builtins():
            registry.add(macro, PRIORITY_BUILTIN)
        registry.add_entry_points(timeout=timeout)
        base = Path(base_dir) if base_dir is not None else Path.cwd()
        for name, entry in (project_macros or {}).items():
            relative, environment, own_timeout = project_entry(name, entry, timeout)
            if registry.sandbox is not None:
                raise registry.sandbox.refuse_code(f"macro {name} ({relative}) of formwright.yaml",
                                                   file=str(base / "formwright.yaml"))
            registry.add(macro_from_path(name, base / relative, timeout=own_timeout, where="formwright.yaml",
                                         environment=environment), PRIORITY_PROJECT)
        if macros_dir is not None:
            registry.add_folder(Path(macros_dir), timeout=timeout)
        return registry

    def add(self, macro: Macro, priority: int) -> None:
        """Register `macro` unless a more explicit source already named it."""
        if macro.name.startswith("AWS::") and priority != PRIORITY_BUILTIN:
            raise InputError(
                f"macro {macro.name}: names beginning with AWS:: are reserved for CloudFormation",
                where=macro.source,
                hint="rename your macro",
            )
        existing = self._macros.get(macro.name)
        if existing is None or existing[0] <= priority:
            self._macros[macro.name] = (priority, macro)

    def add_entry_points(self, *, timeout: float = DEFAULT_TIMEOUT) -> None:
        """Macros published by installed packages in the `formwright.macros` entry-point group."""
        from formwright import plugins

        for entry_point in plugins.entry_points(ENTRY_POINT_GROUP).values():
            self.add(EntryPointMacro(entry_point.name, entry_point, timeout), PRIORITY_ENTRY_POINT)

    def add_folder(self, folder: Path, *, timeout: float = DEFAULT_TIMEOUT) -> None:
        """Every Python file or executable in `folder` is a macro named after the file
        (without its extension).

        Other files (a README, the templates themselves) are not macros and are passed over, but a `#!`
        script that is not executable is an error (it was meant to be one).
        """
        if not folder.is_dir():
            raise InputError(f"--macros {folder}: not a folder", hint="give a folder of macro files")
        self.folders.append(folder)
        for path in sorted(folder.iterdir()):
            if path.name.startswith((".", "_")) or not path.is_file():
                continue
            if path.suffix != ".py" and not os.access(path, os.X_OK) and not _is_script(path):
                continue  # not a macro; a script without chmod +x is still reported below
            self.add(macro_from_path(path.stem, path, timeout=timeout, where=str(folder)), PRIORITY_DIR)

    def register_template_macros(self, template: dict, base_dir: Path | None = None) -> list[str]:
        """Register `AWS::CloudFormation::Macro` resources whose Lambda code is local; return their names."""
        from formwright.macros.template_macros import macros_in_template

        found = macros_in_template(template, Path(base_dir) if base_dir is not None else Path.cwd())
        for macro in found:
            if self.sandbox is not None:  # defined, but its code comes with the template: never run here
                macro = UnavailableMacro(macro.name, macro.source, str(self.sandbox.refuse_code(
                    f"the code of macro {macro.name} ({macro.source})")))
            self.add(macro, PRIORITY_TEMPLATE)
        return [macro.name for macro in found]

    # -- lookup -----------------------------------------------------------------------------------
    def get(self, name: str) -> Macro | None:
        """The macro called `name`, or None."""
        entry = self._macros.get(name)
        return entry[1] if entry else None

    def names(self) -> list[str]:
        """All registered names, sorted."""
        return sorted(self._macros)

    def __contains__(self, name: object) -> bool:
        return name in self._macros

    def unknown_hint(self, name: str) -> str:
        """How to fix a reference to a macro nobody registered: a --macros subfolder holding a file of that
        name, a name that differs only in case (names are file names, case-sensitive), a close one."""
        for folder in self.folders:
            inside = sorted(p.parent for p in folder.glob(f"*/{name}") if p.is_file())
            inside += sorted(p.parent for p in folder.glob(f"*/{name}.py") if p.is_file())
            if inside:
                return f"{name} is in {inside[0]}: pass --macros {inside[0]}"
        same = [known for known in self.names() if known.lower() == name.lower()]
        if same:
            return (f"macro names are file names and case-sensitive: '{same[0]}' is not '{name}' (name the "
                    f"file {name}, or register it: macros: {{{name}: path}})")
        close = difflib.get_close_matches(name, self.names(), n=1)
        if close:
            return f"did you mean {close[0]}?"
        return ("register it in formwright.yaml (macros: {" + name + ": path}), put a file named " + name
                + " in --macros DIR, or deploy with --macros remote")

    def describe(self) -> list[dict[str, Any]]:
        """Every macro with its kind and source."""
        return [self._macros[name][1].describe() for name in self.names()]
