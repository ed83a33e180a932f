"""Assumed-role credentials are assumed again before they run out: a deploy may outlast the role session.

botocore's RefreshableCredentials refreshes credentials that have less than 15 minutes left (advisory;
10 minutes: mandatory), and its AssumeRoleCredentialFetcher treats cached ones the same way
(botocore/credentials.py). A role session of 900 seconds (STS's minimum DurationSeconds, as
`session_duration: 900`) is therefore always inside that window: every use assumes the role again,
which is what happens near the end of any session. The local cloud (moto's STS) honours DurationSeconds
and keeps accounts apart by the assumed role's account. The only stand-in is a spy on botocore's API
calls that records each AssumeRole request and lets it through.
"""

from __future__ import annotations

from pathlib import Path

import botocore.client
import pytest

from formwright.cloud.session import Targets
from formwright.engine.group import StackGroup
from formwright.engine.stack import prepare_stacks
from formwright.model.project import load_project

DEV = "222222222222"
QUEUE = "Resources:\n  Q: {Type: AWS::SQS::Queue}\nOutputs:\n  Name: {Value: !GetAtt Q.QueueName}\n"


@pytest.fixture
def assume_calls(monkeypatch: pytest.MonkeyPatch) -> list[dict]:
    """The parameters of every AssumeRole request botocore sends (sent on to the local cloud)."""
    calls: list[dict] = []
    original = botocore.client.BaseClient._make_api_call

    def spy(self, operation_name, api_params):
        if operation_name == "AssumeRole":
            calls.append(dict(api_params))
        return original(self, operation_name, api_params)

    monkeypatch.setattr(botocore.client.BaseClient, "_make_api_call", spy)
    return calls


def test_a_deploy_longer_than_the_role_session_assumes_the_role_again(tmp_path: Path, cloud,
                                                                      assume_calls) -> None:
    (tmp_path / "queue.yaml").write_text(QUEUE)
    (tmp_path / "formwright.yaml").write_text(f"""name: long
account: "{DEV}"
role_arn: arn:aws:iam::{DEV}:role/deployer
external_id: ext-1234
session_name: ci-run
session_duration: 900
stacks:
  first: {{template: queue.yaml}}
  second: {{template: queue.yaml, depends_on: [first]}}
""")
    project = load_project(tmp_path)
    targets = Targets("local")
    target = targets.get(project.target)
    target.check_account("the project")  # the first session: the caller is in DEV
    first_key = target.session().get_credentials().get_frozen_credentials().access_key
    group = StackGroup(project, prepare_stacks(project, targets=targets), target, targets=targets)
    results = group.deploy()
    assert all(r.ok for r in results.values()), {n: r.error for n, r in results.items()}

    # the role was assumed again during the deploy, each time as configured, and the operation went on
    assert len(assume_calls) >= 2, assume_calls
    for call in assume_calls:
        assert call == {"RoleArn": f"arn:aws:iam::{DEV}:role/deployer", "RoleSessionName": "ci-run",
                        "ExternalId": "ext-1234", "DurationSeconds": 900}
    assert target.session().get_credentials().get_frozen_credentials().access_key != first_key
    live = {s["StackName"] for s in target.client("cloudformation").describe_stacks()["Stacks"]}
    assert live == {"long-first", "long-second"}
    assert target.client("sts").get_caller_identity()["Account"] == DEV


def test_a_role_session_within_its_time_is_not_assumed_again(tmp_path: Path, cloud, assume_calls) -> None:
    (tmp_path / "queue.yaml").write_text(QUEUE)
    (tmp_path / "formwright.yaml").write_text(f"""name: short
role_arn: arn:aws:iam::{DEV}:role/deployer
stacks:
  only: {{template: queue.yaml}}
""")
    project = load_project(tmp_path)
    targets = Targets("local")
    group = StackGroup(project, prepare_stacks(project, targets=targets), targets.get(project.target),
                       targets=targets)
    assert all(r.ok for r in group.deploy().values())
    assert len(assume_calls) == 1  # STS's default hour is far from running out
    assert assume_calls[0]["RoleSessionName"] == "formwright" and "DurationSeconds" not in assume_calls[0]


def test_session_duration_is_checked(tmp_path: Path) -> None:
    from formwright.errors import ProjectError

    (tmp_path / "queue.yaml").write_text(QUEUE)
    (tmp_path / "formwright.yaml").write_text(
        "name: d\nsession_duration: 60\nstacks:\n  q: {template: queue.yaml}\n")
    with pytest.raises(ProjectError, match=r"`session_duration` must be 900 to 43200 seconds, not '60'") as e:
        load_project(tmp_path)
    assert e.value.line == 2
