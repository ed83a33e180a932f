"""`formwright events DIR -s STACK --follow` streams a deploy's events while the stack is in progress
(issue #16, item 5), through the real CLI in child processes and the fault proxy in front of the local cloud.

The local cloud executes a change set at once, so a stack is never seen in progress there; the proxy holds
the stack CREATE_IN_PROGRESS until the test settles it and reveals the execution's events a few at a time,
as CloudFormation does (resource CREATE_IN_PROGRESS / CREATE_COMPLETE events while the stack is in
progress, the stack's own CREATE_COMPLETE when it ends). CloudFormation's DescribeStackEvents lists events
newest first (its API reference: "in reverse chronological order"); a follower prints them oldest first,
each once. The waits below are bounds against a hang, not timed assertions: the order of things is made
certain by the proxy's hold.
"""

from __future__ import annotations

import json
import math
import os
import queue
import signal
import subprocess
import sys
import threading
from pathlib import Path

import boto3
import pytest

from .fault_proxy import FaultProxy, Faults

TEMPLATE = """\
Resources:
  First:
    Type: AWS::SQS::Queue
  Second:
    Type: AWS::SNS::Topic
  Third:
    Type: AWS::SQS::Queue
"""
STACK = "ev-app"
BOUND = 120.0  # seconds: a guard against a hang, never reached when things work


def aws_env(proxy: FaultProxy) -> dict[str, str]:
    env = {**os.environ, "FORMWRIGHT_TARGET": "aws", "AWS_ENDPOINT_URL": proxy.endpoint,
           "AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test", "AWS_REGION": "us-east-1"}
    env.pop("AWS_PROFILE", None)
    return env


def start(args: list[str], env: dict[str, str]) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "formwright", *args], env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, bufsize=1)


def lines_of(proc: subprocess.Popen) -> queue.Queue:
    """The child's stdout, a line at a time as it comes (None at its end), read by a thread."""
    lines: queue.Queue = queue.Queue()

    def read() -> None:
        for line in proc.stdout:
            lines.put(line.rstrip("\n"))
        lines.put(None)

    threading.Thread(target=read, daemon=True).start()
    return lines


def parse(line: str, output: str) -> tuple[str, str, str]:
    """(logical id, status, reason) of one printed event."""
    if output == "json":
        row = json.loads(line)  # one JSON object per line
        assert row["stack"] == "app"
        return row["logical_id"], row["status"], row["reason"]
    # "TIME  STACK  STATUS  LOGICAL_ID (TYPE)[  REASON]" (cli/events.py print_event)
    fields = line.split("  ")
    assert fields[1] == "app", line
    return fields[3].split(" (")[0], fields[2], fields[4] if len(fields) > 4 else ""


def stop(*procs: subprocess.Popen | None) -> None:
    """Kill the children a test left running (a failed assertion must not leave them behind)."""
    for proc in procs:
        if proc is not None and proc.poll() is None:
            proc.kill()
            proc.wait()


def wait_until(check, what: str) -> None:
    event = threading.Event()
    for _ in range(int(BOUND / 0.1)):
        if check():
            return
        event.wait(0.1)
    pytest.fail(f"not within {BOUND} s: {what}")


@pytest.mark.parametrize("output", ["text", "json"])
def test_follow_streams_a_deploy_in_progress_oldest_first_and_ends_once_settled(
        tmp_path: Path, cloud, output: str) -> None:
    (tmp_path / "app.yaml").write_text(TEMPLATE)
    (tmp_path / "formwright.yaml").write_text("name: ev\nstacks:\n  app: {template: app.yaml}\n")
    faults = Faults(stack_in_progress=math.inf, event_interval=0.5)  # held until proxy.settle
    with FaultProxy(cloud.endpoint, faults) as proxy:
        env = aws_env(proxy)
        deploy = start(["deploy", str(tmp_path), "-y", "--output", "json"], env)
        follower = None
        try:
            wait_until(lambda: proxy.running(STACK) or deploy.poll() is not None, "the deploy's execution")
            assert deploy.poll() is None, deploy.communicate()
            # the local cloud has every event already; CloudFormation would list them newest first
            listed = cloud.client("cloudformation").describe_stack_events(StackName=STACK)["StackEvents"]
            expected = [(e["LogicalResourceId"], e["ResourceStatus"], e.get("ResourceStatusReason") or "")
                        for e in reversed(listed)]
            assert expected[-1] == (STACK, "CREATE_COMPLETE", "")
            assert [s for _, s, _ in expected].count("CREATE_IN_PROGRESS") == 4  # the stack and 3 resources
            through = boto3.client("cloudformation", endpoint_url=proxy.endpoint, region_name="us-east-1",
                                   aws_access_key_id="test", aws_secret_access_key="test")
            shown = through.describe_stack_events(StackName=STACK)["StackEvents"]
            assert len(shown) < len(listed)  # the proxy, as CloudFormation, has not told the end yet

            args = ["events", str(tmp_path), "-s", "app", "--follow"]
            follower = start(args + (["--output", "json"] if output == "json" else []), env)
            lines = lines_of(follower)
            printed: list[tuple[str, str, str]] = []
            while len(printed) < len(expected) - 1:  # every event but the stack's closing one
                line = lines.get(timeout=BOUND)
                assert line is not None, f"the follower ended early: {printed} {follower.communicate()}"
                printed.append(parse(line, output))
            # the resources' events are out while the stack is still in progress, and the follower waits on
            assert proxy.running(STACK)
            assert through.describe_stacks(StackName=STACK)["Stacks"][0]["StackStatus"] in (
                "CREATE_IN_PROGRESS", "REVIEW_IN_PROGRESS")  # the latter: the proxy's stale read
            assert follower.poll() is None
            assert printed == expected[:-1]  # oldest first, each once, nothing missed
            proxy.settle(STACK)
            while (line := lines.get(timeout=BOUND)) is not None:
                printed.append(parse(line, output))
            assert follower.wait(timeout=BOUND) == 0, follower.stderr.read()
            assert printed == expected  # the stack's CREATE_COMPLETE last, and no duplicate of any
            out, err = deploy.communicate(timeout=BOUND)
            assert deploy.returncode == 0, out + err
            assert json.loads(out)["stacks"]["app"]["outcome"] == "created"
        finally:
            stop(deploy, follower)


@pytest.mark.parametrize("output", ["text", "json"])
def test_ctrl_c_while_following_exits_130_and_in_json_says_so(tmp_path: Path, cloud, output: str) -> None:
    # `formwright events --help`: exit 130 interrupted (Ctrl-C); in JSON mode every answer is the envelope
    (tmp_path / "app.yaml").write_text(TEMPLATE)
    (tmp_path / "formwright.yaml").write_text("name: ev\nstacks:\n  app: {template: app.yaml}\n")
    with FaultProxy(cloud.endpoint, Faults(stack_in_progress=math.inf, event_interval=0)) as proxy:
        env = aws_env(proxy)
        deploy = start(["deploy", str(tmp_path), "-y", "--output", "json"], env)
        follower = None
        try:
            wait_until(lambda: proxy.running(STACK) or deploy.poll() is not None, "the deploy's execution")
            assert deploy.poll() is None, deploy.communicate()
            follower = start(["events", str(tmp_path), "-s", "app", "--follow", "--output", output], env)
            lines = lines_of(follower)
            first = lines.get(timeout=BOUND)
            assert first is not None and parse(first, output)[0] == STACK
            assert follower.poll() is None  # held in progress: it follows on, until Ctrl-C
            follower.send_signal(signal.SIGINT)
            rest: list[str] = []
            while (line := lines.get(timeout=BOUND)) is not None:
                rest.append(line)
            code = follower.wait(timeout=BOUND)
            stderr = follower.stderr.read()
            assert code == 130, stderr
            assert "Traceback" not in stderr and "Aborted" not in stderr, stderr
            if output == "json":
                streamed = [json.loads(line) for line in rest]  # still one JSON object per line
                assert all("stack" in row for row in streamed[:-1])
                assert streamed[-1]["ok"] is False and streamed[-1]["errors"][0]["message"] == "interrupted"
            else:
                assert all(parse(line, output) for line in rest), rest
            proxy.settle(STACK)
            out, err = deploy.communicate(timeout=BOUND)
            assert deploy.returncode == 0, out + err
        finally:
            stop(deploy, follower)


def test_follow_after_the_last_n_prints_only_newer_events(tmp_path: Path, cloud) -> None:
    # `-n 2 --follow`: the last 2 events, then those that come after them, never the older ones left out
    (tmp_path / "app.yaml").write_text(TEMPLATE)
    (tmp_path / "formwright.yaml").write_text("name: ev\nstacks:\n  app: {template: app.yaml}\n")
    # every event but the stack's closing one is out at once; the closing one comes when the test settles it
    with FaultProxy(cloud.endpoint, Faults(stack_in_progress=math.inf, event_interval=0)) as proxy:
        env = aws_env(proxy)
        deploy = start(["deploy", str(tmp_path), "-y", "--output", "json"], env)
        follower = None
        try:
            wait_until(lambda: proxy.running(STACK) or deploy.poll() is not None, "the deploy's execution")
            assert deploy.poll() is None, deploy.communicate()
            listed = cloud.client("cloudformation").describe_stack_events(StackName=STACK)["StackEvents"]
            expected = [(e["LogicalResourceId"], e["ResourceStatus"], e.get("ResourceStatusReason") or "")
                        for e in reversed(listed)]
            follower = start(["events", str(tmp_path), "-s", "app", "-n", "2", "-f", "--output", "json"], env)
            lines = lines_of(follower)
            printed = [parse(lines.get(timeout=BOUND) or "", "json") for _ in range(2)]
            assert printed == expected[-3:-1]  # the last 2 so far: the closing event is still to come
            proxy.settle(STACK)
            while (line := lines.get(timeout=BOUND)) is not None:
                printed.append(parse(line, "json"))
            assert follower.wait(timeout=BOUND) == 0, follower.stderr.read()
            assert printed == expected[-3:]  # then the closing event alone: no older one after newer ones
            out, err = deploy.communicate(timeout=BOUND)
            assert deploy.returncode == 0, out + err
        finally:
            stop(deploy, follower)


def test_following_several_stacks_merges_their_events_oldest_first(tmp_path: Path, cloud) -> None:
    # b is executed before a, while the project lists a first: a follower of both prints one timeline
    (tmp_path / "app.yaml").write_text(TEMPLATE)
    (tmp_path / "formwright.yaml").write_text(
        "name: ev\nstacks:\n  a: {template: app.yaml}\n  b: {template: app.yaml}\n")
    with FaultProxy(cloud.endpoint, Faults(stack_in_progress=math.inf, event_interval=0)) as proxy:
        through = boto3.client("cloudformation", endpoint_url=proxy.endpoint, region_name="us-east-1",
                               aws_access_key_id="test", aws_secret_access_key="test")
        for stack in ("ev-b", "ev-a"):  # executed as a deploy would, through the proxy, which holds them
            made = through.create_change_set(StackName=stack, ChangeSetName="c", ChangeSetType="CREATE",
                                             TemplateBody=TEMPLATE)
            through.execute_change_set(ChangeSetName=made["Id"])
            assert proxy.running(stack)
        direct = cloud.client("cloudformation")
        listed = {s: direct.describe_stack_events(StackName=s)["StackEvents"] for s in ("ev-a", "ev-b")}
        opening = sum(len(events) - 1 for events in listed.values())  # all but each stack's closing event
        follower = start(["events", str(tmp_path), "--follow", "--output", "json"], aws_env(proxy))
        try:
            lines = lines_of(follower)
            before = [json.loads(lines.get(timeout=BOUND) or "") for _ in range(opening)]
            assert [r["time"] for r in before] == sorted(r["time"] for r in before)
            assert before[0]["stack"] == "b" and before[-1]["stack"] == "a"
            assert follower.poll() is None
            proxy.settle("ev-a")
            proxy.settle("ev-b")
            after = [json.loads(line) for line in iter(lambda: lines.get(timeout=BOUND), None)]
            assert follower.wait(timeout=BOUND) == 0, follower.stderr.read()
            # each closing event once (in one poll or two: the proxy settles one stack, then the other)
            assert sorted((r["stack"], r["status"]) for r in after) == [("a", "CREATE_COMPLETE"),
                                                                         ("b", "CREATE_COMPLETE")]
            stream = [r["time"] for r in before + after]
            assert stream == sorted(stream)  # one timeline, the closings stamped when they came
        finally:
            stop(follower)
