"""`formwright events [DIR] [-s STACK] [--follow]` (issue #16, item 5)."""

from __future__ import annotations

import json
from pathlib import Path

QUEUE = "Resources:\n  Q:\n    Type: AWS::SQS::Queue\n"


def test_events_oldest_first_and_follow_ends_once_settled(tmp_path: Path, run_cli, cloud) -> None:
    (tmp_path / "q.yaml").write_text(QUEUE)
    (tmp_path / "formwright.yaml").write_text("name: ev\nstacks:\n  q: {template: q.yaml}\n")
    assert run_cli("deploy", str(tmp_path), "-y").code == 0
    listed = run_cli("events", str(tmp_path), "-s", "q", "--output", "json")
    assert listed.code == 0, listed.err
    events = listed.json()["events"]
    assert events and {e["stack"] for e in events} == {"q"}
    assert events[-1]["status"] == "CREATE_COMPLETE" and events[-1]["logical_id"] == "ev-q"
    assert [e["time"] for e in events] == sorted(e["time"] for e in events)
    text = run_cli("events", str(tmp_path), "-s", "q")
    assert "CREATE_COMPLETE" in text.out
    # the stack is settled: --follow prints what there is and ends, one JSON object per line
    followed = run_cli("events", str(tmp_path), "--follow", "--output", "json", timeout=60)
    assert followed.code == 0
    assert [json.loads(line)["status"] for line in followed.out.splitlines()][-1] == "CREATE_COMPLETE"
    unknown = run_cli("events", str(tmp_path), "-s", "nope", "--output", "json")
    assert unknown.code == 2 and "unknown stack 'nope'" in unknown.json()["errors"][0]["message"]


BROKEN = """\
Resources:
  Fine:
    Type: AWS::SQS::Queue
  Broken:
    Type: AWS::EC2::Subnet
    Properties:
      VpcId: vpc-0000000000doesnotexist
      CidrBlock: 10.9.0.0/24
"""


def test_a_failed_deploy_names_the_failing_resource_and_its_reason(tmp_path: Path, run_cli, cloud) -> None:
    # the local cloud fails the subnet as CloudFormation does (InvalidVpcID.NotFound) and rolls back
    (tmp_path / "t.yaml").write_text(BROKEN)
    (tmp_path / "formwright.yaml").write_text("name: evfail\nstacks:\n  net: {template: t.yaml}\n")
    result = run_cli("deploy", str(tmp_path), "-y", "--output", "json")
    assert result.code == 1, result.out + result.err
    error = result.json()["stacks"]["net"]["error"]
    assert "Broken: " in error and "does not exist" in error  # the resource and its reason, not only ROLLBACK
    text = run_cli("deploy", str(tmp_path), "-y")
    assert text.code == 1
    summary = text.out[text.out.index("summary"):]
    assert "Broken: " in summary and "does not exist" in summary
