"""Running user macros: a Python handler file, an executable, a packaged entry point.

A Python handler is the very file deployed as the macro's Lambda function: it is imported once (as
a warm Lambda keeps its module) and called as `handler(event, context)` with a JSON copy of the
event. An executable reads the request JSON on stdin and writes the response on stdout; it is
started without a shell, with a timeout, its output captured.
"""

from __future__ import annotations

import contextlib
import importlib.util
import itertools
import json
import os
import subprocess
import sys
import traceback
import types
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from formwright.macros.base import Macro, MacroEnv, MalformedResponse
from formwright.macros.request import LambdaContext, check_payload, encode

DEFAULT_TIMEOUT = 60.0
_module_ids = itertools.count()
Handler = Callable[[dict, Any], Any]


@contextlib.contextmanager
def _on_sys_path(folder: Path | None) -> Iterator[None]:
    """Let the handler import its sibling modules, as Lambda puts the code folder on the path."""
    if folder is None:
        yield
        return
    entry = str(folder)
    sys.path.insert(0, entry)
    try:
        yield
    finally:
        with contextlib.suppress(ValueError):
            sys.path.remove(entry)


def _last_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1].strip()[:300] if lines else ""


class HandlerMacro(Macro):
    """A Lambda-style `handler(event, context)` called in this process."""

    kind = "python"

    def __init__(self, name: str, source: str, timeout: float = DEFAULT_TIMEOUT) -> None:
        super().__init__(name, source)
        self.timeout = timeout
        self._handler: Handler | None = None
        self._folder: Path | None = None

    def load(self) -> Handler:  # pragma: no cover - subclasses
        """Import the code and return the handler function."""
        raise NotImplementedError

    def invoke(self, request: dict[str, Any], env: MacroEnv) -> Any:
        """Call the handler with a JSON copy of the event and a Lambda-shaped context."""
        event = json.loads(encode(request, what="request"))
        context = LambdaContext(self.name, env.region, env.account_id, request["requestId"], self.timeout)
        try:
            with _on_sys_path(self._folder):
                if self._handler is None:
                    self._handler = self.load()
                result = self._handler(event, context)
        except MalformedResponse:
            raise
        except Exception as err:  # noqa: BLE001 - any crash of user code is the macro's failure
            where = traceback.extract_tb(err.__traceback__)[-1]
            raise MalformedResponse(
                f"the handler raised {type(err).__name__}: {err} ({where.filename}:{where.lineno})"
            ) from None
        try:
            return json.loads(encode(result, what="response"))
        except ValueError as err:
            raise MalformedResponse(str(err)) from None


class PythonFileMacro(HandlerMacro):
    """A `.py` file (or a module in a code folder) with a handler function."""

    def __init__(
        self, name: str, path: Path, function: str = "handler", timeout: float = DEFAULT_TIMEOUT
    ) -> None:
        super().__init__(name, f"{path}:{function}", timeout)
        self.path = path
        self.function = function
        self._folder = path.parent

    def load(self) -> Handler:
        """Import the file under a private module name and return its handler."""
        module_name = f"_formwright_macro_{next(_module_ids)}_{self.path.stem}"
        spec = importlib.util.spec_from_file_location(module_name, self.path)
        if spec is None or spec.loader is None:
            raise MalformedResponse(f"cannot import {self.path}")
        module = importlib.util.module_from_spec(spec)
        try:
            spec.loader.exec_module(module)
        except FileNotFoundError:
            raise MalformedResponse(f"the handler file {self.path} does not exist") from None
        except Exception as err:  # noqa: BLE001 - an import error is the macro's failure
            raise MalformedResponse(f"importing {self.path} raised {type(err).__name__}: {err}") from None
        return _handler_of(module, self.function, str(self.path))


class InlineCodeMacro(HandlerMacro):
    """Python source given inline (a Lambda function's `Code.ZipFile`), deployed as `index.py`."""

    def __init__(
        self, name: str, code: str, origin: str, function: str, timeout: float = DEFAULT_TIMEOUT
    ) -> None:
        super().__init__(name, origin, timeout)
        self.code = code
        self.function = function

    def load(self) -> Handler:
        """Execute the inline source as a module and return its handler."""
        module = types.ModuleType(f"_formwright_inline_{next(_module_ids)}")
        try:
            exec(compile(self.code, self.source, "exec"), module.__dict__)  # noqa: S102 - the user's own macro code
        except Exception as err:  # noqa: BLE001
            raise MalformedResponse(f"loading the inline code raised {type(err).__name__}: {err}") from None
        return _handler_of(module, self.function, self.source)


class EntryPointMacro(HandlerMacro):
    """A handler published by an installed package in the `formwright.macros` entry-point group."""

    kind = "entry-point"

    def __init__(self, name: str, entry_point: Any, timeout: float = DEFAULT_TIMEOUT) -> None:
        super().__init__(name, f"entry point {entry_point.value}", timeout)
        self.entry_point = entry_point

    def load(self) -> Handler:
        """Load the entry point's object; it must be callable as `handler(event, context)`."""
        try:
            handler = self.entry_point.load()
        except Exception as err:  # noqa: BLE001
            raise MalformedResponse(
                f"loading {self.entry_point.value} raised {type(err).__name__}: {err}"
            ) from None
        if not callable(handler):
            raise MalformedResponse(f"{self.entry_point.value} is not callable as handler(event, context)")
        return handler


def _handler_of(module: types.ModuleType, function: str, where: str) -> Handler:
    handler = getattr(module, function, None)
    if not callable(handler):
        raise MalformedResponse(f"{where} has no function {function}(event, context)")
    return handler


class ExecutableMacro(Macro):
    """A program that reads the request on stdin and writes the response on stdout."""

    kind = "executable"

    def __init__(self, name: str, path: Path, timeout: float = DEFAULT_TIMEOUT) -> None:
        super().__init__(name, str(path))
        self.path = path
        self.timeout = timeout

    def invoke(self, request: dict[str, Any], env: MacroEnv) -> Any:
        """Run the program once; its stdout must be the JSON response."""
        payload = encode(request, what="request")
        child_env = dict(os.environ, AWS_REGION=env.region, AWS_DEFAULT_REGION=env.region,
                         FORMWRIGHT_MACRO_NAME=self.name)
        try:
            done = subprocess.run(  # noqa: S603 - a fixed argv, no shell
                [str(self.path)], input=payload, capture_output=True, timeout=self.timeout,
                env=child_env, cwd=str(self.path.parent), check=False,
            )
        except subprocess.TimeoutExpired:
            raise MalformedResponse(f"{self.path} did not answer within {self.timeout:g} s") from None
        except OSError as err:
            raise MalformedResponse(f"cannot run {self.path}: {err.strerror or err}") from None
        if done.returncode != 0:
            detail = _last_line(done.stderr.decode("utf-8", "replace"))
            raise MalformedResponse(
                f"{self.path.name} exited with code {done.returncode}" + (f": {detail}" if detail else "")
            )
        check_payload(len(done.stdout), what="response")
        try:
            return json.loads(done.stdout)
        except ValueError:
            text = _last_line(done.stdout.decode("utf-8", "replace")) or "nothing"
            raise MalformedResponse(
                f"{self.path.name} wrote {text!r} on stdout, not a JSON response"
            ) from None


class UnavailableMacro(Macro):
    """A macro we know of but cannot run locally (a non-Python Lambda runtime, say)."""

    kind = "template"

    def __init__(self, name: str, source: str, reason: str) -> None:
        super().__init__(name, source)
        self.reason = reason

    def invoke(self, request: dict[str, Any], env: MacroEnv) -> Any:
        """Always refuses, saying why."""
        raise MalformedResponse(self.reason)
