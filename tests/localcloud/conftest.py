"""Helpers for the local-cloud fidelity tests: boto3 against the real local-cloud HTTP endpoint.

Every test here talks to the session's local cloud (tests/conftest.py) exactly as the engine does,
and names the AWS documentation page whose behaviour it checks.
"""

from __future__ import annotations

import itertools
import json
from typing import Any

import pytest

_names = itertools.count()


class Cfn:
    """A CloudFormation client with the few steps every test repeats."""

    def __init__(self, target: Any) -> None:
        self.target = target
        self.client = target.client("cloudformation")

    def change_set(self, stack: str, template: dict, params: dict | None = None, *, kind: str | None = None,
                   caps: list[str] | None = None, tags: dict | None = None) -> dict:
        """Create a change set and return its description (the local cloud computes it synchronously)."""
        if kind is None:
            kind = "UPDATE" if self.exists(stack) else "CREATE"
        reply = self.client.create_change_set(
            StackName=stack, ChangeSetName=f"cs{next(_names)}", ChangeSetType=kind,
            TemplateBody=json.dumps(template), Capabilities=caps or [],
            Parameters=[{"ParameterKey": k, "ParameterValue": v} for k, v in (params or {}).items()],
            Tags=[{"Key": k, "Value": v} for k, v in (tags or {}).items()])
        return self.client.describe_change_set(ChangeSetName=reply["Id"])

    def deploy(self, stack: str, template: dict, params: dict | None = None, **kwargs: Any) -> dict:
        """Create and execute a change set; return the stack as described afterwards."""
        desc = self.change_set(stack, template, params, **kwargs)
        assert desc["Status"] == "CREATE_COMPLETE", desc.get("StatusReason")
        self.client.execute_change_set(ChangeSetName=desc["ChangeSetId"])
        return self.stack(stack)

    def stack(self, stack: str) -> dict:
        """DescribeStacks of one stack."""
        return self.client.describe_stacks(StackName=stack)["Stacks"][0]

    def outputs(self, stack: str) -> dict[str, str]:
        """The stack's outputs by key."""
        return {o["OutputKey"]: o["OutputValue"] for o in self.stack(stack).get("Outputs") or []}

    def exists(self, stack: str) -> bool:
        """True when a live stack of that name exists."""
        try:
            return self.stack(stack)["StackStatus"] != "REVIEW_IN_PROGRESS"
        except self.client.exceptions.ClientError:
            return False

    def events(self, stack: str) -> list[tuple[str, str, str]]:
        """(logical id, status, reason) of every event, newest first."""
        return [(e["LogicalResourceId"], e["ResourceStatus"], e.get("ResourceStatusReason") or "")
                for e in self.client.describe_stack_events(StackName=stack)["StackEvents"]]

    def resource(self, stack: str, logical: str) -> str:
        """The physical id of one resource."""
        return self.client.describe_stack_resource(StackName=stack, LogicalResourceId=logical)[
            "StackResourceDetail"]["PhysicalResourceId"]


def changes(desc: dict) -> dict[str, dict]:
    """ResourceChange by logical id."""
    return {c["ResourceChange"]["LogicalResourceId"]: c["ResourceChange"] for c in desc.get("Changes", [])}


@pytest.fixture
def cfn(cloud) -> Cfn:
    """A clean local cloud and a CloudFormation client on it."""
    return Cfn(cloud)


@pytest.fixture(scope="session")
def inprocess_cloud():
    """moto's threaded server run in this process with the local cloud's corrections and HTTP layer
    (`cloud/serving.py`): a test can patch the emulator to hold or break an operation at a known point.
    The session's `local_cloud` is a child process and stays as it is."""
    from moto.server import ThreadedMotoServer

    from formwright.cloud import local, moto_server, serving

    moto_server.patch_moto()
    serving.install(serving.Snapshots(None, 0))
    port = local.free_port()
    running = ThreadedMotoServer(ip_address="127.0.0.1", port=port)
    running.start()
    yield f"http://127.0.0.1:{port}"
    running.stop()
