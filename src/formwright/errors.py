"""The one exception family for errors a user can cause, and the CLI's exit codes.

Every error carries where it happened (file and line, or a stack name) and, where we know one, a
hint how to fix it. The CLI prints `str(error)` on one line and exits with `error.exit_code`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

EXIT_OK = 0
EXIT_CLOUD_FAILED = 1
EXIT_BAD_INPUT = 2
EXIT_LOCKED = 3
EXIT_CANCELLED = 4  # a confirmation prompt was declined: nothing changed
EXIT_CHANGES = 5  # `plan --exit-code`: the plan changes something (Terraform's 2 is bad input here)
EXIT_INTERRUPTED = 130  # Ctrl-C, as shells report SIGINT


class FormwrightError(Exception):
    """A problem the user can fix: bad input, a missing file, a reference to nothing."""

    exit_code = EXIT_BAD_INPUT

    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        line: int | None = None,
        where: str | None = None,
        hint: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        # a line that knows its file (template.values.SourceLine: a value from an overlay file) names it
        source = getattr(line, "file", None)
        if source and line is not None:
            line = int(line)
        self.file = source or file
        self.line = line
        self.where = where
        self.hint = hint

    def location(self) -> str:
        """`file:line`, `file`, the named place, or an empty string."""
        if self.file and self.line:
            return f"{self.file}:{self.line}"
        if self.file:
            return str(self.file)
        return self.where or ""

    def __str__(self) -> str:
        loc = self.location()
        text = f"{loc}: {self.message}" if loc else self.message
        if self.hint:
            text += f" ({self.hint})"
        return text


class InputError(FormwrightError):
    """Bad input: a file, a flag or a value that cannot be used as given."""


class TemplateError(InputError):
    """A CloudFormation template that cannot be loaded, dumped or is over a size limit."""


class ProjectError(InputError):
    """A `formwright.yaml` that is not valid: unknown keys, bad references, cycles."""


class ProjectErrors(ProjectError):
    """Several independent mistakes of one formwright.yaml, reported in one run (each at its line), as a
    compiler reports them: fixing one to meet the next wastes a run each."""

    def __init__(self, errors: list[FormwrightError]) -> None:
        first = errors[0]
        super().__init__(first.message, file=first.file, line=first.line, where=first.where, hint=first.hint)
        self.errors = errors

    def __str__(self) -> str:
        return "\n".join(str(error) for error in self.errors)


class Problems:
    """Collects the ProjectErrors of independent parts (a key, a stack) up to `limit`, then raises them
    together (`check`); past `limit` the rest waits for the next run."""

    def __init__(self, limit: int = 20) -> None:
        self.limit = limit
        self.errors: list[FormwrightError] = []

    def add(self, error: FormwrightError) -> None:
        """Keep one error (all of a ProjectErrors); at the limit raise what was found."""
        self.errors.extend(getattr(error, "errors", [error]))
        if len(self.errors) >= self.limit:
            raise ProjectErrors(self.errors[: self.limit])

    def attempt(self, work: Callable[..., Any], *args: Any, default: Any = None, **kwargs: Any) -> Any:
        """`work(*args, **kwargs)`, or `default` when it raised a ProjectError (kept)."""
        try:
            return work(*args, **kwargs)
        except ProjectError as error:
            self.add(error)
            return default

    def check(self) -> None:
        """Raise what was found: one error as itself, several together."""
        if len(self.errors) == 1:
            raise self.errors[0]
        if self.errors:
            raise ProjectErrors(self.errors)


class CloudError(FormwrightError):
    """The operation failed in the cloud (a stack failed, an API call was refused)."""

    exit_code = EXIT_CLOUD_FAILED


class LockHeldError(FormwrightError):
    """Another operation holds the lock for this instance or project."""

    exit_code = EXIT_LOCKED
