"""Helpers for the Lambda runtime tests: boto3 against the session's real local cloud, functions made
from .zip files built here, and a bounded wait for what happens in the background (S3, SQS, Event)."""

from __future__ import annotations

import io
import json
import time
import zipfile
from collections.abc import Callable
from typing import Any

import pytest


def zipped(files: dict[str, str]) -> bytes:
    """A .zip holding these files."""
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        for name, text in files.items():
            archive.writestr(name, text)
    return out.getvalue()


def eventually(check: Callable[[], Any], what: str, limit: float = 90.0) -> Any:
    """Poll `check` until it gives a true value (the background work is done); fail naming `what`. The
    limit only bounds a broken run: nothing here asserts how long it took."""
    deadline = time.monotonic() + limit
    while True:
        found = check()
        if found:
            return found
        if time.monotonic() > deadline:
            pytest.fail(f"never happened: {what}")
        time.sleep(0.2)


class Functions:
    """Lambda, with the steps the tests repeat."""

    def __init__(self, target: Any) -> None:
        self.target = target
        self.client = target.client("lambda")
        self._role: str | None = None

    def role(self) -> str:
        """An execution role (moto checks that the role exists)."""
        if self._role is None:
            iam = self.target.client("iam")
            self._role = iam.create_role(RoleName="fn-role", AssumeRolePolicyDocument=json.dumps(
                {"Version": "2012-10-17", "Statement": []}))["Role"]["Arn"]
        return self._role

    def create(self, name: str, files: dict[str, str], handler: str, runtime: str = "python3.12",
               **extra: Any) -> dict:
        """CreateFunction from these files (zipped here, uploaded as ZipFile)."""
        return self.client.create_function(FunctionName=name, Runtime=runtime, Role=self.role(),
                                           Handler=handler, Code={"ZipFile": zipped(files)}, **extra)

    def invoke(self, name: str, event: Any = None, **extra: Any) -> tuple[dict, Any]:
        """Invoke and read the payload back as JSON."""
        reply = self.client.invoke(FunctionName=name, Payload=json.dumps(event or {}), **extra)
        body = reply["Payload"].read()
        return reply, json.loads(body) if body else None

    def parameter(self, name: str) -> str | None:
        """An SSM parameter's value (what a function wrote), or None."""
        ssm = self.target.client("ssm")
        try:
            return ssm.get_parameter(Name=name)["Parameter"]["Value"]
        except ssm.exceptions.ParameterNotFound:
            return None


@pytest.fixture
def functions(cloud) -> Functions:
    """A clean local cloud and its Lambda."""
    return Functions(cloud)
