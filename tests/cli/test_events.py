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
