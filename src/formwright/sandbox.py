"""The trust boundary for content from a source nobody on this host vouches for.

A synced repository (and, with the CLI's `--sandbox`, any project) is data, never code: whoever can
push to it must not own the reconciler host. While a `Sandbox` is active:

- files it names (templates, `tosca:` sources and their imports, `AWS::Include` locations, the
  project's folder) must resolve, symlinks followed, inside its `root` (the checkout);
- macro code it carries never runs: not the `macros:` of its formwright.yaml, not the inline or
  local Lambda code of its `AWS::CloudFormation::Macro` resources. Macros run only from the folder
  the host's operator gives on the command line (`sync run --macros DIR`, `deploy --sandbox --macros
  DIR`), from installed packages, and the built-ins;
- `{{ env.X }}` in its formwright.yaml sees no host environment.

The Flux CloudFormation controller never runs repository content either: it reads one template
file from the source artifact and hands it to CloudFormation.

The one policy object is consulted by its users (project model, macros, TOSCA source loading)
through `active()` or `confine()`; the reconciler switches it on with `confined(Sandbox(checkout))`.
The CLI's `--sandbox` asks for one before the root is known (`request()`); the first folder that
names the input (`anchor()`: the project's, the template's, the TOSCA source's) becomes the root.
A context variable carries it, so concurrent reconciles each see their own checkout.
"""

from __future__ import annotations

import contextvars
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from formwright.errors import InputError

SANDBOX_HINT = "the sandbox runs macros only from the operator's --macros DIR"


class SandboxError(InputError):
    """Content from an untrusted source tried to leave its checkout or to run code on this host."""


@dataclass(frozen=True)
class Sandbox:
    """Confinement to `root` (the checkout); no macro code from the content itself."""

    root: Path

    def __post_init__(self) -> None:
        object.__setattr__(self, "root", Path(self.root).resolve())

    def contains(self, path: Path) -> bool:
        """True when `path` (symlinks resolved) is `root` or below it."""
        real = Path(path).resolve()
        return real == self.root or real.is_relative_to(self.root)

    def confine(self, path: str | Path, *, what: str, base: Path | None = None, file: str | None = None,
                line: int | None = None) -> Path:
        """`path` (relative to `base`, else to `root`) resolved; SandboxError when it leaves `root`."""
        candidate = Path(path)
        if not candidate.is_absolute():
            candidate = (base if base is not None else self.root) / candidate
        try:
            real = candidate.resolve()
        except (OSError, RuntimeError) as err:  # a symlink loop
            raise SandboxError(f"{what} '{path}' cannot be resolved: {err}", file=file,
                               line=line) from None
        if real != self.root and not real.is_relative_to(self.root):
            raise SandboxError(f"{what} '{path}' is outside the checkout {self.root} "
                               "(refused by the sandbox)", file=file, line=line,
                               hint="name a file inside the repository; symlinks out of it are refused too")
        return real

    def refuse_code(self, what: str, *, file: str | None = None, line: int | None = None) -> SandboxError:
        """The error for macro code that comes with the untrusted content."""
        return SandboxError(f"{what} would run code from the repository on this host "
                            "(refused by the sandbox)", file=file, line=line, hint=SANDBOX_HINT)


_ACTIVE: contextvars.ContextVar[Sandbox | None] = contextvars.ContextVar("formwright_sandbox", default=None)
_REQUESTED: contextvars.ContextVar[bool] = contextvars.ContextVar("formwright_sandbox_asked", default=False)


def active() -> Sandbox | None:
    """The sandbox in force in this context, or None (trusted input)."""
    return _ACTIVE.get()


@contextmanager
def confined(sandbox: Sandbox | None) -> Iterator[Sandbox | None]:
    """Run the block under `sandbox` (None: no confinement)."""
    token = _ACTIVE.set(sandbox)
    try:
        yield sandbox
    finally:
        _ACTIVE.reset(token)


def request() -> None:
    """Confine everything from here on to the first folder `anchor()` names (the CLI's --sandbox)."""
    _REQUESTED.set(True)


def requested() -> bool:
    """True when a sandbox was asked for (by `request()` or in force)."""
    return _REQUESTED.get() or active() is not None


def anchor(folder: Path) -> None:
    """The input's own folder: under a requested sandbox without a root yet, it becomes the root."""
    if _REQUESTED.get() and active() is None:
        _ACTIVE.set(Sandbox(folder))


def confine(path: str | Path, *, what: str, base: Path | None = None, file: str | None = None,
            line: int | None = None) -> Path:
    """`path` checked against the active sandbox; unchanged (made absolute against `base`) without one."""
    sandbox = active()
    if sandbox is not None:
        return sandbox.confine(path, what=what, base=base, file=file, line=line)
    candidate = Path(path)
    return candidate if candidate.is_absolute() or base is None else base / candidate
