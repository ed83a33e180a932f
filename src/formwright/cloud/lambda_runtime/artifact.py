"""A function's code on disk: its .zip and its layers' unpacked once per content, and the runtime
folder Python functions import boto3 from.

The code is unpacked from the bytes moto stores for the function (the uploaded ZipFile, or the S3
object named by S3Bucket/S3Key, read when the function was created or updated) into a folder named
by the content's hash under the system's temporary folder, not the user's home: Node.js looks for
`node_modules` in every parent of the code, and a home's would make a package the function does not
vend importable here and not on Lambda.
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import importlib.util
import io
import os
import shutil
import tempfile
import zipfile
from pathlib import Path
from typing import Any

from formwright.cloud.lambda_runtime.contract import Refused

#: What Lambda's Python runtimes bundle besides the standard library (the AWS SDK and its dependencies).
PYTHON_RUNTIME_PACKAGES = ("boto3", "botocore", "s3transfer", "jmespath", "dateutil", "urllib3", "six")


def cache_root() -> Path:
    """Where unpacked code and the runtime folder live (one per user)."""
    root = Path(tempfile.gettempdir()) / f"formwright-lambda-{os.getuid() if hasattr(os, 'getuid') else 0}"
    root.mkdir(mode=0o700, exist_ok=True)
    return root


def task_root(function: Any) -> Path:
    """The function's code unpacked (LAMBDA_TASK_ROOT); made on first use of this content."""
    code = getattr(function, "code_bytes", b"") or b""
    if not code:
        raise Refused(f"The function {function.function_name} has no code in the local cloud (its S3 object "
                      "was missing when it was created or updated)")
    return _unpacked(code, f"The code of function {function.function_name}")


def layer_roots(function: Any) -> list[Path]:
    """The function's layers unpacked, in its Layers order (each what Lambda extracts into /opt)."""
    from moto.awslambda.utils import get_backend

    backend = get_backend(function.account_id, function.region)
    roots = []
    for layer in function.layers or []:
        version = backend.layers_versions_by_arn(layer["Arn"])
        code = getattr(version, "code_bytes", b"") if version is not None else b""
        if not code:
            raise Refused(f"The layer {layer['Arn']} of function {function.function_name} has no code in the "
                          "local cloud")
        roots.append(_unpacked(code, f"The layer {layer['Arn']}"))
    return roots


def _unpacked(code: bytes, what: str) -> Path:
    """A .zip unpacked into the cache, once per content."""
    folder = cache_root() / "code" / hashlib.sha256(code).hexdigest()
    if folder.is_dir():
        return folder
    folder.parent.mkdir(exist_ok=True)
    partial = Path(tempfile.mkdtemp(prefix=".unpacking-", dir=folder.parent))
    try:
        with zipfile.ZipFile(io.BytesIO(code)) as archive:
            archive.extractall(partial)  # names leaving the folder are cleaned by zipfile itself
    except zipfile.BadZipFile:
        shutil.rmtree(partial, ignore_errors=True)
        raise Refused(f"{what} is not a .zip file: Lambda would have refused it "
                      "(InvalidParameterValueException: Could not unzip uploaded file)") from None
    try:
        partial.rename(folder)
    except OSError:  # another invocation unpacked the same content first
        shutil.rmtree(partial, ignore_errors=True)
    return folder


@functools.cache
def python_runtime_dir() -> Path:
    """A folder holding (links to) the packages Lambda's Python runtimes provide, and nothing else: a
    function importing any other package it does not vend fails as on Lambda. Named by what it links to,
    so local clouds of other environments sharing the cache never use each other's."""
    sources = []
    for name in PYTHON_RUNTIME_PACKAGES:
        spec = importlib.util.find_spec(name)
        if spec is None or spec.origin is None:
            continue
        origin = Path(spec.origin)
        sources.append(origin.parent if origin.name == "__init__.py" else origin)
    digest = hashlib.sha256("\n".join(map(str, sources)).encode()).hexdigest()[:16]
    folder = cache_root() / f"python-runtime-{digest}"
    if folder.is_dir():
        return folder
    partial = Path(tempfile.mkdtemp(prefix=".runtime-", dir=cache_root()))
    for source in sources:
        (partial / source.name).symlink_to(source)
    with contextlib.suppress(OSError):  # another invocation made it first
        partial.rename(folder)
    if partial.exists():
        shutil.rmtree(partial, ignore_errors=True)
    return folder
