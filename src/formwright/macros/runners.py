"""Running user macros: a Python handler file, an executable, a packaged entry point.

A Python handler is the very file deployed as the macro's Lambda function, and runs as Lambda runs it:
every invocation in its own process (`isolation`), with the handler's folder as working folder, a fresh
module cache, a Lambda-like environment plus the macro's declared variables, its output in the macro's
log and a timeout. An executable reads the request JSON on stdin and writes the response on stdout;
it is started without a shell, with a timeout, its output captured.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from formwright.macros.base import Macro, MacroEnv, MalformedResponse
from formwright.macros.errors import MacroFailed
from formwright.macros.isolation import Invocation, invoke, kill_group, log_file
from formwright.macros.request import check_payload, encode

DEFAULT_TIMEOUT = 60.0


def _last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1].strip()[:300] if lines else ""


class HandlerMacro(Macro):
    """A Lambda-style `handler(event, context)`, each invocation in a child process."""

    kind = "python"

    def __init__(
        self, name: str, source: str, timeout: float = DEFAULT_TIMEOUT,
        environment: dict[str, str] | None = None,
    ) -> None:
        super().__init__(name, source)
        self.timeout = timeout
        self.environment = dict(environment or {})

    def invocation(self) -> Invocation:  # pragma: no cover - subclasses
        """Where the code is and how to call it."""
        raise NotImplementedError

    @property
    def log(self) -> Path:
        """The macro's log file."""
        return log_file(self.name)

    def invoke(self, request: dict[str, Any], env: MacroEnv) -> Any:
        """Call the handler in a child process with the event; its JSON response."""
        event = json.loads(encode(request, what="request"))
        response = invoke(self.invocation(), event, env.region, env.account_id)
        check_payload(len(json.dumps(response)), what="response")
        return response


class PythonFileMacro(HandlerMacro):
    """A `.py` file (or a module in a code folder) with a handler function."""

    def __init__(
        self,
        name: str,
        path: Path,
        function: str = "handler",
        timeout: float = DEFAULT_TIMEOUT,
        environment: dict[str, str] | None = None,
        root: Path | None = None,
    ) -> None:
        super().__init__(name, f"{path}:{function}", timeout, environment)
        self.path = path
        self.function = function
        #: The code folder (Lambda's task root); the module is the file's dotted path inside it.
        self.root = root or path.parent

    def invocation(self) -> Invocation:
        """The file's folder as working folder, the file imported as Lambda imports its handler module."""
        if not self.path.is_file():
            raise MacroFailed(f"the handler file {self.path} does not exist")
        module = ".".join(self.path.relative_to(self.root).with_suffix("").parts)
        return Invocation(self.name, self.root, module, self.function, environment=self.environment,
                          timeout=self.timeout, log=self.log)


class InlineCodeMacro(HandlerMacro):
    """Python source given inline (a Lambda function's `Code.ZipFile`), deployed as `index.py`."""

    def __init__(
        self,
        name: str,
        code: str,
        origin: str,
        function: str,
        timeout: float = DEFAULT_TIMEOUT,
        environment: dict[str, str] | None = None,
    ) -> None:
        super().__init__(name, origin, timeout, environment)
        self.code = code
        self.function = function
        self._folder: tempfile.TemporaryDirectory[str] | None = None

    def invocation(self) -> Invocation:
        """The source written once as index.py in a folder of its own."""
        if self._folder is None:
            self._folder = tempfile.TemporaryDirectory(prefix="formwright-inline-")
            (Path(self._folder.name) / "index.py").write_text(self.code, encoding="utf-8")
        return Invocation(self.name, Path(self._folder.name), "index", self.function,
                          environment=self.environment, timeout=self.timeout, log=self.log)


class EntryPointMacro(HandlerMacro):
    """A handler published by an installed package in the `formwright.macros` entry-point group."""

    kind = "entry-point"

    def __init__(self, name: str, entry_point: Any, timeout: float = DEFAULT_TIMEOUT) -> None:
        super().__init__(name, f"entry point {entry_point.value}", timeout)
        self.entry_point = entry_point
        self._folder: tempfile.TemporaryDirectory[str] | None = None

    def invocation(self) -> Invocation:
        """The entry point imported in the child, in an empty working folder."""
        if self._folder is None:
            self._folder = tempfile.TemporaryDirectory(prefix="formwright-entry-")
        # The package is installed where this interpreter finds it: the child gets the same import path.
        return Invocation(self.name, Path(self._folder.name), entry_point=str(self.entry_point.value),
                          environment=self.environment, timeout=self.timeout, log=self.log,
                          python_path=[entry for entry in sys.path if entry])


class ExecutableMacro(Macro):
    """A program that reads the request on stdin and writes the response on stdout."""

    kind = "executable"

    def __init__(self, name: str, path: Path, timeout: float = DEFAULT_TIMEOUT) -> None:
        super().__init__(name, str(path))
        self.path = path
        self.timeout = timeout

    def invoke(self, request: dict[str, Any], env: MacroEnv) -> Any:
        """Run the program once in its own process group; its stdout must be the JSON response."""
        payload = encode(request, what="request")
        child_env = dict(os.environ, AWS_REGION=env.region, AWS_DEFAULT_REGION=env.region,
                         FORMWRIGHT_MACRO_NAME=self.name)
        try:
            child = subprocess.Popen(  # noqa: S603 - a fixed argv, no shell
                [str(self.path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                env=child_env, cwd=str(self.path.parent), start_new_session=True,
            )
        except OSError as err:
            raise MacroFailed(f"cannot run {self.path}: {err.strerror or err}") from None
        try:
            stdout, stderr = child.communicate(payload, timeout=self.timeout)
        except subprocess.TimeoutExpired:
            kill_group(child)  # and whatever it started: nothing is left behind
            child.communicate()
            raise MacroFailed(f"{self.path.name} did not answer within {self.timeout:g} s") from None
        if child.returncode != 0:
            detail = _last_line(stderr.decode("utf-8", "replace"))
            raise MacroFailed(
                f"{self.path.name} exited with code {child.returncode}" + (f": {detail}" if detail else "")
            )
        check_payload(len(stdout), what="response")
        try:
            return json.loads(stdout)
        except ValueError:
            text = _last_line(stdout.decode("utf-8", "replace")) or "nothing"
            raise MacroFailed(f"{self.path.name} wrote {text!r} on stdout, not a JSON response") from None


class UnavailableMacro(Macro):
    """A macro we know of but cannot run locally (a non-Python Lambda runtime, say)."""

    kind = "template"

    def __init__(self, name: str, source: str, reason: str) -> None:
        super().__init__(name, source)
        self.reason = reason

    def invoke(self, request: dict[str, Any], env: MacroEnv) -> Any:
        """Always refuses, saying why."""
        raise MalformedResponse(self.reason)
