"""Concurrency as CloudFormation has it (issue 30), on the in-process local cloud (`inprocess_cloud`,
tests/localcloud/conftest.py), so a test can hold an operation at a known point.

An operation that waits releases the state lock (`locking.released()`): other stacks go on meanwhile,
and the waiting stack refuses a second operation with CloudFormation's messages ("Stack:ARN is in
CREATE_IN_PROGRESS state and can not be updated." / "Stack [ARN] cannot be deleted while in status
CREATE_IN_PROGRESS", as quoted in aws/copilot-cli#1180 and aws-amplify/amplify-backend#2180). A request
failing inside the emulator leaves no half-made stack. The wait is a stand-in (nothing in moto waits).
"""

from __future__ import annotations

import json
import threading

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

from formwright.cloud.emulator import locking

TEMPLATE = json.dumps({"Resources": {"Slow": {"Type": "AWS::SSM::Parameter",
                                              "Properties": {"Type": "String", "Value": "v"}}}})


def _cfn(endpoint: str):
    return boto3.client("cloudformation", endpoint_url=endpoint, region_name="us-east-1",
                        aws_access_key_id="testing", aws_secret_access_key="testing",
                        config=Config(retries={"total_max_attempts": 1}))


def _create(cfn, name: str) -> None:
    made = cfn.create_change_set(StackName=name, ChangeSetName="c", ChangeSetType="CREATE",
                                 TemplateBody=TEMPLATE)
    cfn.execute_change_set(ChangeSetName=made["Id"])


def test_a_waiting_operation_lets_other_stacks_run_and_refuses_a_second_one_on_its_stack(
        inprocess_cloud, monkeypatch) -> None:
    from formwright.cloud.emulator import resources

    entered, go_on = threading.Event(), threading.Event()
    create = resources.create

    def waiting_create(logical, kind, props, *args, **kwargs):
        if props.get("Value") == "v" and not entered.is_set():
            entered.set()
            with locking.released():  # e.g. waiting for a Lambda-backed custom resource
                go_on.wait(60)
        return create(logical, kind, props, *args, **kwargs)

    monkeypatch.setattr(resources, "create", waiting_create)
    cfn = _cfn(inprocess_cloud)
    slow = threading.Thread(target=_create, args=(_cfn(inprocess_cloud), "slow"))
    slow.start()
    try:
        assert entered.wait(60)
        assert cfn.describe_stacks(StackName="slow")["Stacks"][0]["StackStatus"] == "CREATE_IN_PROGRESS"
        stack_id = cfn.describe_stacks(StackName="slow")["Stacks"][0]["StackId"]
        with pytest.raises(ClientError) as update:
            cfn.create_change_set(StackName="slow", ChangeSetName="u", ChangeSetType="UPDATE",
                                  TemplateBody=TEMPLATE)
        assert update.value.response["Error"]["Message"] == (
            f"Stack:{stack_id} is in CREATE_IN_PROGRESS state and can not be updated.")
        with pytest.raises(ClientError) as delete:
            cfn.delete_stack(StackName="slow")
        assert delete.value.response["Error"]["Message"] == (
            f"Stack [{stack_id}] cannot be deleted while in status CREATE_IN_PROGRESS")
        _create(cfn, "other")  # another stack is not held up by the waiting one
        assert cfn.describe_stacks(StackName="other")["Stacks"][0]["StackStatus"] == "CREATE_COMPLETE"
    finally:
        go_on.set()
        slow.join()
    assert cfn.describe_stacks(StackName="slow")["Stacks"][0]["StackStatus"] == "CREATE_COMPLETE"


def test_a_request_failing_inside_the_emulator_leaves_no_half_made_stack(inprocess_cloud,
                                                                          monkeypatch) -> None:
    from formwright.cloud.emulator import api

    def broken(*args, **kwargs):
        raise RuntimeError("a bug of the emulator")

    monkeypatch.setattr(api.cs_changes, "compute", broken)
    cfn = _cfn(inprocess_cloud)
    with pytest.raises(Exception):  # noqa: B017 - an HTTP 500, whatever botocore makes of its page
        _create(cfn, "broken")
    assert "broken" not in {s["StackName"] for s in cfn.describe_stacks()["Stacks"]}
    monkeypatch.undo()
    _create(cfn, "broken")  # the name takes a stack
    assert cfn.describe_stacks(StackName="broken")["Stacks"][0]["StackStatus"] == "CREATE_COMPLETE"
