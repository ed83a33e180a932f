"""A load on the local cloud: parallel clients creating, updating and deleting stacks (issue 30).

Each client owns its share of the stacks and, every round, moves one of them on (absent -> created
-> updated -> deleted), leaves a change set it does not execute on another (so ExecuteChangeSet drops
a stack's other change sets while the rest list them), and reads (DescribeStacks, ListChangeSets).
What each operation answered is recorded; at the end the local cloud must hold exactly that, and
every name must take a new stack. Used by tests/localcloud/test_load.py and bench/load.py.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from typing import Any

TEMPLATE = {
    "Parameters": {"Version": {"Type": "String"}},
    "Resources": {
        "Param": {"Type": "AWS::SSM::Parameter",
                  "Properties": {"Name": {"Fn::Sub": "/load/${AWS::StackName}"}, "Type": "String",
                                 "Value": {"Ref": "Version"}}},
        "Queue": {"Type": "AWS::SQS::Queue"},
    },
    "Outputs": {"Version": {"Value": {"Fn::GetAtt": ["Param", "Value"]}}},
}


@dataclass
class Outcome:
    """What a load run did and found."""

    operations: int = 0  # stack operations (create, update, delete)
    calls: int = 0  # API calls of every kind
    server_errors: list[str] = field(default_factory=list)  # HTTP 5xx answers
    failures: list[str] = field(default_factory=list)  # an operation that did not do what it said
    expected: dict[str, str | None] = field(default_factory=dict)  # stack -> version, None: absent
    seconds: float = 0.0


def _clients(endpoint: str) -> tuple[Any, Any]:
    import boto3
    from botocore.config import Config

    session = boto3.session.Session(aws_access_key_id="testing", aws_secret_access_key="testing",
                                     region_name="us-east-1")
    config = Config(retries={"total_max_attempts": 1})  # a 500 must be seen, never retried away
    return (session.client("cloudformation", endpoint_url=endpoint, config=config),
            session.client("ssm", endpoint_url=endpoint, config=config))


class Client(threading.Thread):
    """One parallel client and the stacks it owns."""

    def __init__(self, endpoint: str, names: list[str], rounds: int, outcome: Outcome,
                 lock: threading.Lock) -> None:
        super().__init__(daemon=True)
        self.endpoint, self.names, self.rounds = endpoint, names, rounds
        self.outcome, self.lock = outcome, lock
        self.live: dict[str, str | None] = dict.fromkeys(names)

    def call(self, method: Any, **kwargs: Any) -> Any:
        from botocore.exceptions import ClientError
        from botocore.parsers import ResponseParserError

        with self.lock:
            self.outcome.calls += 1
        try:
            return method(**kwargs)
        except ClientError as err:
            status = err.response.get("ResponseMetadata", {}).get("HTTPStatusCode", 0)
            if status >= 500:
                with self.lock:
                    self.outcome.server_errors.append(f"{method.__name__}: {err}")
            raise
        except ResponseParserError as err:  # moto's HTML page of an HTTP 500
            with self.lock:
                self.outcome.server_errors.append(f"{method.__name__}: {str(err)[:200]}")
            raise

    def change_set(self, name: str, version: str, kind: str) -> dict[str, Any]:
        made = self.call(self.cfn.create_change_set, StackName=name, ChangeSetName=f"v{version}",
                         ChangeSetType=kind, TemplateBody=json.dumps(TEMPLATE),
                         Parameters=[{"ParameterKey": "Version", "ParameterValue": version}])
        return dict(self.call(self.cfn.describe_change_set, ChangeSetName=made["Id"]))

    def move_on(self, name: str, turn: int) -> None:
        version = self.live[name]
        if version is not None and turn % 3 == 2:
            self.call(self.cfn.delete_stack, StackName=name)
            self.live[name] = None
            return
        new = f"{turn}-{version is None}"
        desc = self.change_set(name, new, "CREATE" if version is None else "UPDATE")
        if desc["Status"] != "CREATE_COMPLETE":
            raise AssertionError(f"{name}: change set {desc['Status']}: {desc.get('StatusReason')}")
        self.call(self.cfn.execute_change_set, ChangeSetName=desc["ChangeSetId"])
        stack = self.call(self.cfn.describe_stacks, StackName=name)["Stacks"][0]
        if stack["StackStatus"] not in ("CREATE_COMPLETE", "UPDATE_COMPLETE"):
            raise AssertionError(f"{name}: {stack['StackStatus']} after executing {desc['ChangeSetName']}")
        self.live[name] = new

    def run(self) -> None:
        self.cfn, self.ssm = _clients(self.endpoint)
        for turn in range(self.rounds):
            name = self.names[turn % len(self.names)]
            try:
                self.move_on(name, turn)
                with self.lock:
                    self.outcome.operations += 1
                other = self.names[(turn + 1) % len(self.names)]
                if self.live[other] is not None:  # left unexecuted: the next execution drops it
                    self.change_set(other, f"pending{turn}", "UPDATE")
                self.call(self.cfn.list_change_sets, StackName=name)
                self.call(self.cfn.describe_stacks)
            except Exception as err:  # noqa: BLE001 - every failure is recorded and reported
                with self.lock:
                    self.outcome.failures.append(f"{name} round {turn}: {type(err).__name__}: {err}")
        with self.lock:
            self.outcome.expected.update(self.live)


def run(endpoint: str, clients: int = 8, rounds: int = 30, stacks: int = 40, prefix: str = "load") -> Outcome:
    """Run the load; return what it did (the final state is checked by `check`)."""
    outcome, lock = Outcome(), threading.Lock()
    names = [f"{prefix}-{i}" for i in range(stacks)]
    workers = [Client(endpoint, names[i::clients], rounds, outcome, lock) for i in range(clients)]
    started = time.perf_counter()
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    outcome.seconds = time.perf_counter() - started
    return outcome


def check(endpoint: str, outcome: Outcome) -> list[str]:
    """Where the local cloud's state differs from what the operations said, and names that no longer
    take a stack (each absent name is created once more and deleted)."""
    cfn, ssm = _clients(endpoint)
    wrong = []
    live = {s["StackName"]: s for s in cfn.describe_stacks()["Stacks"]}
    for name, version in sorted(outcome.expected.items()):
        stack = live.get(name)
        if version is None:
            if stack is not None:
                wrong.append(f"{name}: deleted, but {stack['StackStatus']}")
            elif ssm.get_parameters(Names=[f"/load/{name}"])["Parameters"]:
                wrong.append(f"{name}: deleted, but its parameter is left")
            continue
        if stack is None:
            wrong.append(f"{name}: at {version}, but absent")
            continue
        said = {o["OutputKey"]: o["OutputValue"] for o in stack.get("Outputs") or []}.get("Version")
        held = ssm.get_parameter(Name=f"/load/{name}")["Parameter"]["Value"]
        if said != version or held != version:
            wrong.append(f"{name}: at {version}, but its output says {said} and its parameter {held}")
    for name in sorted(n for n, v in outcome.expected.items() if v is None):
        try:
            made = cfn.create_change_set(StackName=name, ChangeSetName="again", ChangeSetType="CREATE",
                                         TemplateBody=json.dumps(TEMPLATE),
                                         Parameters=[{"ParameterKey": "Version", "ParameterValue": "again"}])
            cfn.execute_change_set(ChangeSetName=made["Id"])
            cfn.delete_stack(StackName=name)
        except Exception as err:  # noqa: BLE001 - a name that takes no stack is what is looked for
            wrong.append(f"{name}: stuck ({err})")
    return wrong
