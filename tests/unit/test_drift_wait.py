"""The cadence of a drift detection's status reads counts from the detection's start (issue 23's benchmark).

`formwright drift` starts every stack's detection, then a few workers wait for them one after another: a
worker that comes to a detection started long ago must read it at once, not sleep the cadence's first
delay as if the detection had just begun; a young one waits only the rest of that delay; and later reads
are as far apart as the detection's age puts them (the engine's cadence: at most one read a second once
it is 5 s old).

The client is a stand-in (AWS's detections take seconds, the local cloud's none): a scripted
CloudFormation whose detections stay DETECTION_IN_PROGRESS for a given time of a clock that moves only by
the waits' sleeps, which go into the same log as the reads. Nothing here measures real time.
"""

from __future__ import annotations

from typing import Any

import pytest

from formwright.engine import cfn as cfn_module
from formwright.engine import drift as drift_module
from formwright.engine.cadence import Cadence
from formwright.engine.cfn import CloudFormation
from formwright.engine.drift import start, wait

AWS_FIRST = Cadence.minimum  # engine/group.py: AWS's first read comes this long after the operation began


class Clock:
    """time.monotonic of the waits, moved by their sleeps (logged with their length) and by `advance`."""

    def __init__(self, log: list[tuple[Any, ...]]) -> None:
        self.now, self.log = 1000.0, log

    def monotonic(self) -> float:
        return self.now

    def time(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.log.append(("sleep", seconds))
        self.now += seconds

    def advance(self, seconds: float) -> None:
        """Time the worker spent on other stacks (not this wait's sleep: not logged)."""
        self.now += seconds


class ScriptedCloudFormation:
    """Drift detections that stay in progress for `takes` seconds of the clock after DetectStackDrift."""

    def __init__(self, clock: Clock, takes: float) -> None:
        self.clock, self.takes = clock, takes
        self.ends: dict[str, float] = {}

    def detect_stack_drift(self, StackName: str) -> dict[str, str]:  # noqa: N803 - boto3's names
        detection = f"{StackName}-detection"
        self.ends[detection] = self.clock.now + self.takes
        return {"StackDriftDetectionId": detection}

    def describe_stack_drift_detection_status(self, StackDriftDetectionId: str) -> dict[str, str]:  # noqa: N803
        going = self.clock.now < self.ends[StackDriftDetectionId]
        self.clock.log.append(("read", "DETECTION_IN_PROGRESS" if going else "DETECTION_COMPLETE"))
        if going:
            return {"DetectionStatus": "DETECTION_IN_PROGRESS"}
        return {"DetectionStatus": "DETECTION_COMPLETE", "StackDriftStatus": "IN_SYNC"}


@pytest.fixture
def clock(monkeypatch) -> Clock:
    clock = Clock([])
    monkeypatch.setattr(cfn_module, "time", clock)
    monkeypatch.setattr(drift_module, "time", clock)
    return clock


def aws_like(clock: Clock, takes: float) -> CloudFormation:
    """The engine's CloudFormation at AWS's cadence without jitter (engine/group.py's, exact)."""
    return CloudFormation(ScriptedCloudFormation(clock, takes), sleep=clock.sleep,
                          cadence=Cadence(first=AWS_FIRST, jitter=0.0))


def test_a_detection_started_long_enough_ago_is_read_with_no_sleep_first(clock: Clock) -> None:
    cfn = aws_like(clock, takes=1.0)
    detection = start(cfn, "s1")
    clock.advance(1.5)  # the worker waited for other stacks' detections meanwhile
    assert wait(cfn, detection)["DetectionStatus"] == "DETECTION_COMPLETE"
    assert clock.log == [("read", "DETECTION_COMPLETE")]


def test_a_young_detection_waits_only_the_rest_of_the_first_delay(clock: Clock) -> None:
    cfn = aws_like(clock, takes=0.1)
    detection = start(cfn, "s1")
    clock.advance(0.05)
    wait(cfn, detection)
    assert clock.log == [("sleep", pytest.approx(AWS_FIRST - 0.05)), ("read", "DETECTION_COMPLETE")]


def test_later_reads_are_as_far_apart_as_the_detections_age_puts_them(clock: Clock) -> None:
    cadence = Cadence(first=AWS_FIRST, jitter=0.0)
    cfn = aws_like(clock, takes=30.0)
    detection = start(cfn, "s1")
    clock.advance(10.0)  # an old detection still going: read at once, then at its age's cadence
    wait(cfn, detection)
    reads, sleeps = clock.log[::2], clock.log[1::2]  # a read, then a sleep before each next read
    assert reads[0] == ("read", "DETECTION_IN_PROGRESS") and reads[-1] == ("read", "DETECTION_COMPLETE")
    assert all(entry[0] == "read" for entry in reads) and len(reads) == len(sleeps) + 1
    age = 10.0
    for _, seconds in sleeps:
        # the delay of a detection this old (2 s at 10 s), not of a wait just begun (0.2 s): ≤ 1 read a second
        assert seconds == pytest.approx(cadence.base(age)) and seconds >= 1.0
        age += seconds
    assert age >= 30.0


def test_a_wait_without_a_start_keeps_the_cadence_of_a_wait_just_begun(clock: Clock) -> None:
    # every other wait of the engine (poll without `since`): the first read after the whole first delay
    cfn = aws_like(clock, takes=0.0)
    detection = start(cfn, "s1")
    clock.advance(5.0)
    cfn.poll(lambda: cfn.read("describe_stack_drift_detection_status",
                              StackDriftDetectionId=detection.detection_id),
             lambda answer: True, what="a read")
    assert clock.log == [("sleep", pytest.approx(AWS_FIRST)), ("read", "DETECTION_COMPLETE")]
