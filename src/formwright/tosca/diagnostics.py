"""Warnings and errors of one transform, each at `file:line`, reported together.

TOSCAna, the reference TOSCA → CloudFormation transformer, accepted templates with an unknown
property name, a `get_attribute` of an attribute the type does not declare, or an unset port; they
are warnings here (with a did-you-mean), errors with `--strict`. Hard errors of one template are
gathered and raised as one `ToscaErrors`, so a user fixes them all in one pass.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from dataclasses import dataclass, field

from formwright.errors import InputError


@dataclass(frozen=True)
class Problem:
    """One finding: where, what, and how to fix it."""

    message: str
    file: str | None = None
    line: int | None = None
    hint: str | None = None

    def __str__(self) -> str:
        return str(InputError(self.message, file=self.file, line=self.line, hint=self.hint))


class ToscaErrors(InputError):
    """Every error found in one service template; printed one per line, the first after `error:`."""

    def __init__(self, problems: list[Problem]) -> None:
        first = problems[0]
        super().__init__(first.message, file=first.file, line=first.line, hint=first.hint)
        self.problems = problems

    def __str__(self) -> str:
        return "\n".join(str(p) for p in self.problems)


def did_you_mean(name: str, known: Iterable[str]) -> str | None:
    """`did you mean 'x'?` for the nearest known name, or None."""
    close = difflib.get_close_matches(name, sorted(set(known)), n=1, cutoff=0.6)
    return f"did you mean '{close[0]}'?" if close else None


@dataclass
class Diagnostics:
    """Collects warnings (errors under `strict`) and errors while one template is loaded."""

    strict: bool = False
    warnings: list[Problem] = field(default_factory=list)
    errors: list[Problem] = field(default_factory=list)

    def warn(self, problem: Problem) -> None:
        """A tolerated deviation: a warning, or an error when strict."""
        (self.errors if self.strict else self.warnings).append(problem)

    def error(self, problem: Problem) -> None:
        """A problem that stops the transform (raised with the others by `raise_errors`)."""
        self.errors.append(problem)
        self.hard = True

    hard: bool = False  # an error() was recorded (not only strict warnings)

    def raise_errors(self, hard_only: bool = False) -> None:
        """Raise every error collected so far together, if any (with `hard_only`, if one is not a
        strict warning: later checks can then add theirs to the report)."""
        if self.errors and (self.hard or not hard_only):
            unique = list(dict.fromkeys(self.errors))
            raise ToscaErrors(unique)
