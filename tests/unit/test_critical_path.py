"""The critical path of a deploy on AWS (issue 29): what formwright does between seeing an end and its next
call. A change set seen ready is executed with no further read or sleep; a stack seen done starts its
dependent's CreateChangeSet with no poll interval in between.

The client is a stand-in (AWS's timings cannot be chosen, and the local cloud answers every operation at
once): a scripted CloudFormation that keeps each change set pending and each stack in progress for a
number of reads. The waits' clock moves only by their sleeps, which go into the same log as the calls:
the order of the log is what is tested, never how long anything took.
"""

from __future__ import annotations

import json
import threading
from types import SimpleNamespace
from typing import Any

import pytest
from botocore.exceptions import ClientError

from formwright.engine.group import StackGroup
from formwright.engine.stack import prepare_stacks
from formwright.model import load_project

TEMPLATE = {"Parameters": {"Upstream": {"Type": "String", "Default": "root"}},
            "Resources": {"Topic": {"Type": "AWS::SNS::Topic"}},
            "Outputs": {"Chain": {"Value": {"Fn::Sub": "${Upstream}/${AWS::StackName}"}}}}
PENDING_READS = 3  # DescribeChangeSet answers CREATE_PENDING this many times
RUNNING_READS = 3  # DescribeStacks answers CREATE_IN_PROGRESS this many times after the execution


class Clock:
    """time.monotonic of the waits, moved only by their sleeps (logged)."""

    def __init__(self, log: list[tuple[str, ...]]) -> None:
        self.now, self.log, self.lock = 1000.0, log, threading.Lock()

    def monotonic(self) -> float:
        return self.now

    def time(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        with self.lock:
            self.log.append(("sleep",))
            self.now += seconds


class ScriptedCloudFormation:
    """A CloudFormation client answering as AWS does, slowly: see the module docstring."""

    meta = SimpleNamespace(endpoint_url="https://cloudformation.us-east-1.amazonaws.com")

    def __init__(self, log: list[tuple[str, ...]]) -> None:
        self.log, self.lock = log, threading.Lock()
        self.change_sets: dict[str, dict[str, Any]] = {}  # id -> its stack, parameters, reads
        self.stacks: dict[str, dict[str, Any]] = {}  # name -> its id, parameters, reads since executed

    def _stack(self, key: str) -> dict[str, Any] | None:
        return next((s for name, s in self.stacks.items() if key in (name, s["id"])), None)

    def describe_stacks(self, StackName: str) -> dict[str, Any]:  # noqa: N803 - boto3's names
        with self.lock:
            stack = self._stack(StackName)
            if stack is None or stack["reads"] is None:  # not made, or only under review
                self.log.append(("DescribeStacks", StackName, "absent"))
                if stack is None:
                    raise ClientError({"Error": {"Code": "ValidationError",
                                                 "Message": f"Stack with id {StackName} does not exist"}},
                                      "DescribeStacks")
                status = "REVIEW_IN_PROGRESS"
            else:
                stack["reads"] += 1
                status = "CREATE_IN_PROGRESS" if stack["reads"] <= RUNNING_READS else "CREATE_COMPLETE"
                self.log.append(("DescribeStacks", stack["name"], status))
            parameters = [{"ParameterKey": k, "ParameterValue": v} for k, v in stack["parameters"]]
            answer = {"StackName": stack["name"], "StackId": stack["id"], "StackStatus": status,
                      "Parameters": parameters, "Tags": stack["tags"]}
            if status == "CREATE_COMPLETE":
                upstream = dict(stack["parameters"])["Upstream"]
                answer["Outputs"] = [{"OutputKey": "Chain", "OutputValue": f"{upstream}/{stack['name']}"}]
                answer["LastUpdatedTime"] = None
            return {"Stacks": [answer]}

    def create_change_set(self, **kwargs: Any) -> dict[str, str]:
        with self.lock:
            name = kwargs["StackName"]
            self.log.append(("CreateChangeSet", name))
            stack = self.stacks.setdefault(name, {"name": name, "id": f"arn:aws:cloudformation:us-east-1:"
                                                  f"123456789012:stack/{name}/1", "reads": None})
            given = {p["ParameterKey"]: p["ParameterValue"] for p in kwargs["Parameters"]}
            stack["parameters"] = sorted({"Upstream": "root", **given}.items())  # with the template's default
            stack["tags"] = kwargs.get("Tags") or []
            change_set = f"{stack['id']}-cs"
            self.change_sets[change_set] = {"stack": name, "reads": 0}
            return {"Id": change_set, "StackId": stack["id"]}

    def describe_change_set(self, ChangeSetName: str, **_: Any) -> dict[str, Any]:  # noqa: N803
        with self.lock:
            change_set = self.change_sets[ChangeSetName]
            change_set["reads"] += 1
            status = "CREATE_PENDING" if change_set["reads"] <= PENDING_READS else "CREATE_COMPLETE"
            self.log.append(("DescribeChangeSet", change_set["stack"], status))
            stack = self.stacks[change_set["stack"]]
            changes = [{"Type": "Resource", "ResourceChange": {
                "Action": "Add", "LogicalResourceId": "Topic", "ResourceType": "AWS::SNS::Topic"}}]
            return {"Status": status, "StackId": stack["id"], "ExecutionStatus": "AVAILABLE",
                    "Changes": changes if status == "CREATE_COMPLETE" else []}

    def execute_change_set(self, ChangeSetName: str, **_: Any) -> dict[str, Any]:  # noqa: N803
        with self.lock:
            name = self.change_sets[ChangeSetName]["stack"]
            self.log.append(("ExecuteChangeSet", name))
            self.stacks[name]["reads"] = 0
            return {}

    def describe_stack_events(self, **_: Any) -> dict[str, Any]:
        return {"StackEvents": []}


class ScriptedTarget:
    """An AWS target (shared reads, AWS's cadence) whose CloudFormation is the scripted one."""

    kind = "aws"
    region = "us-east-1"

    def __init__(self, log: list[tuple[str, ...]]) -> None:
        self.cloudformation = ScriptedCloudFormation(log)

    def client(self, service: str, max_attempts: int = 8) -> Any:
        assert service == "cloudformation", service
        return self.cloudformation

    def account_id(self) -> str:
        return "123456789012"


@pytest.fixture
def deployed(tmp_path, monkeypatch) -> list[tuple[str, ...]]:
    """A chain of two stacks (b takes a's output) deployed through the scripted client; the log."""
    from formwright.engine import cfn as cfn_module
    from formwright.engine import watch as watch_module

    log: list[tuple[str, ...]] = []
    clock = Clock(log)
    monkeypatch.setattr(cfn_module, "time", clock)
    monkeypatch.setattr(watch_module, "time", clock)
    (tmp_path / "stack.json").write_text(json.dumps(TEMPLATE))
    (tmp_path / "formwright.yaml").write_text(
        "name: w\nstacks:\n  a: {template: stack.json}\n"
        "  b:\n    template: stack.json\n    parameters:\n      Upstream: !ref a.outputs.Chain\n")
    project = load_project(tmp_path)
    target = ScriptedTarget(log)
    group = StackGroup(project, prepare_stacks(project, target=target), target)
    group.runner.cfn.sleep = clock.sleep  # the waits sleep on the logged clock
    results = group.deploy()
    assert {n: r.outcome for n, r in results.items()} == {"a": "created", "b": "created"}, results["a"].error
    assert results["b"].outputs == {"Chain": "root/w-a/w-b"}
    return log


def test_a_change_set_seen_ready_is_executed_without_another_read_or_sleep(deployed) -> None:
    for stack in ("w-a", "w-b"):
        ready = deployed.index(("DescribeChangeSet", stack, "CREATE_COMPLETE"))
        assert deployed[ready + 1] == ("ExecuteChangeSet", stack), deployed[ready:ready + 3]
        waited = deployed[deployed.index(("CreateChangeSet", stack)):ready]
        assert waited.count(("sleep",)) == PENDING_READS + 1  # a pause before each read: paced, not skipped


def test_a_dependent_starts_when_its_upstream_is_seen_done_without_a_poll_interval(deployed) -> None:
    done = deployed.index(("DescribeStacks", "w-a", "CREATE_COMPLETE"))
    started = deployed.index(("CreateChangeSet", "w-b"))
    assert started > done  # never before its upstream ended …
    between = deployed[done + 1:started]
    assert ("sleep",) not in between, between  # … and at once after: no sleep, no read of a in between
    assert all(entry[1] != "w-a" for entry in between), between
