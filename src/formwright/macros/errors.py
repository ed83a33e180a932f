"""The errors macro processing raises: CloudFormation's wording, at the line of the transform."""

from __future__ import annotations

from formwright.errors import TemplateError


class MacroError(TemplateError):
    """A macro could not run or returned something CloudFormation would refuse."""


class MacroFailed(Exception):
    """Raised inside a built-in macro: becomes `Transform <id> failed with: <message>`."""

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint


class Unresolvable(Exception):
    """A value that depends on something known only at deployment (intrinsics.py leaves it as written)."""


class TransformationDataLimitExceeded(MacroError):
    """The template grew past the bound CloudFormation allows while macros run."""
