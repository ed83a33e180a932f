"""typer's parameter coercion without pydantic for the plain types the CLI uses.

typer (>= 0.29) converts every command-line value through a pydantic TypeAdapter: importing pydantic and
building one adapter per parameter costs ~0.1 s of every command's start-up. `str`, `Path`, `int`,
`float`, enums and lists of them need none of it. A value the plain conversion cannot take (a bad
integer, an unknown choice) goes to typer's own adapter, so that errors read exactly as typer writes them.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any, get_args, get_origin

from typer import core
from typer._coercion import RuntimeParam, build_runtime_param, resolve_type_descriptor
from typer._param_types import coerce_cli_choice, coerce_cli_path

_INT = re.compile(r"[+-]?[0-9]+")
_FLOAT = re.compile(r"[+-]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][+-]?[0-9]+)?")


class _Refused(Exception):
    """The plain conversion does not take this value: typer's adapter decides."""


def _as_str(value: Any, param: Any, ctx: Any) -> Any:
    if not isinstance(value, str):
        raise _Refused
    return value


def _as_bool(value: Any, param: Any, ctx: Any) -> Any:
    if not isinstance(value, bool):
        raise _Refused
    return value


def _as_int(value: Any, param: Any, ctx: Any) -> Any:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and _INT.fullmatch(value):
        return int(value)
    raise _Refused


def _as_float(value: Any, param: Any, ctx: Any) -> Any:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, str) and _FLOAT.fullmatch(value):
        return float(value)
    raise _Refused


def _converter(annotation: Any, info: Any) -> Callable[[Any, Any, Any], Any] | None:
    """The plain conversion of one value of `annotation`, or None when typer's adapter must do it."""
    if annotation is str:
        return _as_str
    if annotation is bool:
        return _as_bool
    if annotation is int:
        return _as_int
    if annotation is float:
        return _as_float
    if annotation is Path and info.path_type is None:
        def as_path(value: Any, param: Any, ctx: Any) -> Any:
            if not isinstance(value, (str, Path)):
                raise _Refused
            return coerce_cli_path(Path(value), info, path_type=Path, param=param, ctx=ctx)
        return as_path
    if isinstance(annotation, type) and issubclass(annotation, Enum):
        choices = list(annotation)

        def as_choice(value: Any, param: Any, ctx: Any) -> Any:
            try:
                return coerce_cli_choice(value, choices=choices, case_sensitive=info.case_sensitive, ctx=ctx)
            except ValueError:
                raise _Refused from None
        return as_choice
    return None


@dataclass(frozen=True)
class PlainRuntimeParam(RuntimeParam):
    """Coercion of a plain value (or a list of them) without pydantic; typer's adapter for the rest."""

    convert: Callable[[Any, Any, Any], Any]
    many: bool

    def _coerce_value(self, value: Any, param: Any, ctx: Any) -> Any:
        try:
            if not self.many:
                return self.convert(value, param, ctx)
            items = value if isinstance(value, (list, tuple)) else [value]
            return [self.convert(item, param, ctx) for item in items]
        except _Refused:
            typer_own = build_runtime_param(resolve_type_descriptor(self.annotation, self.parameter_info))
            return typer_own._coerce_value(value, param=param, ctx=ctx)


def plain_runtime_param(descriptor: Any) -> RuntimeParam | None:
    """A PlainRuntimeParam for a parameter of a plain type without parser, click type, bounds or file
    opening (those stay with typer)."""
    info = descriptor.parameter_info
    if descriptor.file_annotation is not None or info.parser is not None or info.min is not None \
            or info.max is not None or getattr(info, "click_type", None) is not None:
        return None
    annotation, many = descriptor.annotation, get_origin(descriptor.annotation) is list
    if many:
        (annotation,) = get_args(descriptor.annotation)
    convert = _converter(annotation, info)
    if convert is None:
        return None
    return PlainRuntimeParam(parameter_info=info, annotation=descriptor.annotation, convert=convert,
                             many=many)


def _get_runtime_param(self: core._TyperParameter) -> RuntimeParam:
    if self._runtime_param is None:
        self._runtime_param = plain_runtime_param(self.type_descriptor) or \
            build_runtime_param(self.type_descriptor)
    return self._runtime_param


def install() -> None:
    """Make typer coerce plain parameters without pydantic (once per process)."""
    core._TyperParameter.get_runtime_param = _get_runtime_param  # type: ignore[method-assign]
