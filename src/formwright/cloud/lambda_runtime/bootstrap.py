"""The child side of one Python function invocation: Lambda's Python runtime, in a few lines.

Run by the local cloud as `python -I -S -u bootstrap.py SPEC` (no site-packages: the import path is the
function's code, then the runtime folder holding what Lambda's Python runtimes bundle, boto3 and its
dependencies, then the standard library). It imports nothing of formwright. It resolves the handler as
Lambda does (`module.function`, `folder/module.function`), calls it with the event and a context,
and writes either the response (JSON) or Lambda's error document to the files the spec names.
Error types and texts follow Lambda's Python runtime (aws-lambda-python-runtime-interface-client):
Runtime.MalformedHandlerName, Runtime.ImportModuleError, Runtime.UserCodeSyntaxError,
Runtime.HandlerNotFound, Runtime.MarshalError, and the exception's own type for an unhandled error.
"""

import decimal
import importlib
import json
import logging
import os
import sys
import time
import traceback

with open(sys.argv[1], encoding="utf-8") as _spec_file:
    SPEC = json.load(_spec_file)
REQUEST_ID = SPEC["context"]["aws_request_id"]


class LambdaContext:
    """The context object a Python handler receives."""

    def __init__(self):
        for key, value in SPEC["context"].items():
            setattr(self, key, value)
        self.identity = None
        self.client_context = None

    def get_remaining_time_in_millis(self):
        """Milliseconds left before the function's timeout."""
        return max(0, int((SPEC["deadline"] - time.time()) * 1000))


class _RequestIdFilter(logging.Filter):
    def filter(self, record):
        record.aws_request_id = REQUEST_ID
        return True


def _logging():
    """The root logger writes as Lambda's does: `[LEVEL]\\ttimestamp\\trequest id\\tmessage`."""
    handler = logging.StreamHandler(sys.stdout)
    handler.addFilter(_RequestIdFilter())
    formatter = logging.Formatter(
        "[%(levelname)s]\t%(asctime)s.%(msecs)03dZ\t%(aws_request_id)s\t%(message)s", "%Y-%m-%dT%H:%M:%S")
    formatter.converter = time.gmtime
    handler.setFormatter(formatter)
    logging.getLogger().addHandler(handler)


def _write(path, text):
    with open(path, "w", encoding="utf-8") as out:
        out.write(text)


def _fail(error_type, message, trace=None, shown=None):
    """Write Lambda's error document and log the error as the runtime does, then stop."""
    document = {"errorMessage": message, "errorType": error_type, "requestId": REQUEST_ID,
                "stackTrace": trace or []}
    print(f"[ERROR] {error_type}: {message}", file=sys.stdout)
    if shown is not None:
        print("Traceback (most recent call last):\n" + "".join(shown).rstrip("\n"), file=sys.stdout)
    _write(SPEC["error"], json.dumps(document))
    _leave()


def _leave():
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)  # threads the function left running do not hold the invocation open


def _user_frames(err):
    """The traceback of `err` without the bootstrap's own frames, as Lambda's stackTrace lists it."""
    frames = [f for f in traceback.extract_tb(err.__traceback__) if f.filename != __file__]
    return traceback.format_list(frames)


def _decimal(value):
    if isinstance(value, decimal.Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def _handler():
    handler = SPEC["handler"]
    try:
        module_name, function_name = handler.rsplit(".", 1)
    except ValueError as err:
        _fail("Runtime.MalformedHandlerName", f"Bad handler '{handler}': {err}")
    try:
        module = importlib.import_module(module_name.replace("/", "."))
    except ImportError as err:
        _fail("Runtime.ImportModuleError", f"Unable to import module '{module_name}': {err}")
    except SyntaxError as err:
        _fail("Runtime.UserCodeSyntaxError", f"Syntax error in module '{module_name}': {err}",
              _user_frames(err), traceback.format_list(traceback.extract_tb(err.__traceback__)))
    except Exception as err:  # noqa: BLE001 - an error while the module loads is the function's
        _fail(type(err).__name__, str(err), _user_frames(err), _user_frames(err))
    function = getattr(module, function_name, None)
    if function is None:
        _fail("Runtime.HandlerNotFound", f"Handler '{function_name}' missing on module '{module_name}'")
    return function


def main():
    # Lambda's order: the code, then each layer's python/lib/pythonX.Y/site-packages and python (/opt)
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    layers = [path for layer in SPEC["layers"]
              for path in (os.path.join(layer, "python", "lib", version, "site-packages"),
                           os.path.join(layer, "python"))]
    sys.path[:0] = [SPEC["task_root"], *layers, SPEC["runtime_dir"]]
    _logging()
    function = _handler()
    with open(SPEC["event"], encoding="utf-8") as handle:
        event = json.load(handle)
    try:
        result = function(event, LambdaContext())
    except Exception as err:  # noqa: BLE001 - any error of the handler is the invocation's result
        _fail(type(err).__name__, str(err), _user_frames(err), _user_frames(err))
    try:
        text = json.dumps(result, default=_decimal)
    except (TypeError, ValueError) as err:
        _fail("Runtime.MarshalError", f"Unable to marshal response: {err}")
    _write(SPEC["response"], text)
    _leave()


main()
