"""What every macro is: a name, where it comes from, and `invoke(request, env) -> response`."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


class MalformedResponse(Exception):
    """The macro's function crashed or answered with something that is not a response."""


@dataclass
class MacroEnv:
    """What a run of macros shares: the target, the parameter values, where files are."""

    region: str = "us-east-1"
    account_id: str = "123456789012"
    parameter_values: dict[str, Any] = field(default_factory=dict)
    base_dir: Path = field(default_factory=Path.cwd)
    file: str | None = None
    s3_client: Any = None
    #: Names in the template's Transform section, in order (built-ins check their position).
    section_names: list[str] = field(default_factory=list)
    #: The sandbox (formwright.sandbox.Sandbox) local files are confined to, or None.
    sandbox: Any = None


class Macro:
    """A macro: `invoke` takes CloudFormation's request and returns the raw response."""

    #: python | executable | entry-point | template | builtin
    kind = "builtin"
    #: Built-ins get the request unserialised and must not mutate it; user code gets a JSON copy.
    in_process_builtin = False

    def __init__(self, name: str, source: str) -> None:
        self.name = name
        self.source = source

    def invoke(self, request: dict[str, Any], env: MacroEnv) -> Any:  # pragma: no cover - abstract
        """Run the macro on `request`; return its response (a dict, if well formed)."""
        raise NotImplementedError

    def describe(self) -> dict[str, str]:
        """Name, kind and source, for listings and `macros_run`."""
        return {"name": self.name, "kind": self.kind, "source": self.source}

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name} from {self.source}>"


class BuiltinMacro(Macro):
    """An AWS-hosted transform re-created here: `apply(fragment, params, env)` returns the fragment.

    It raises `MacroFailed` for CloudFormation's `Transform <Name> failed with: …` and must not
    mutate the fragment it is given (it is the caller's template, not a copy).
    """

    kind = "builtin"

    def __init__(self, name: str) -> None:
        super().__init__(name, "formwright (built-in)")

    def apply(self, fragment: Any, params: dict[str, Any], env: MacroEnv) -> Any:  # pragma: no cover
        """Process `fragment`; return the result."""
        raise NotImplementedError

    def invoke(self, request: dict[str, Any], env: MacroEnv) -> Any:
        """Apply in-process and answer as a macro would."""
        fragment = self.apply(request["fragment"], request["params"], env)
        return {"requestId": request["requestId"], "status": "success", "fragment": fragment}
