"""An Auto Scaling group's CreationPolicy judged from the signals received (fast: no instance boots; the
signals are recorded as SignalResource records them).

Where the rules come from (AWS CloudFormation User Guide, "CreationPolicy attribute"): ResourceSignal Count is
how many signals the group waits for; AutoScalingCreationPolicy.MinSuccessfulInstancesPercent (default 100,
0 to 100, rounded to a tenth) is the share that must succeed ("if you create five instances with a minimum
successful percentage of 50, three instances must signal success"); a signal missing at the Timeout counts as
a failure. The texts are CloudFormation's events as its users report them (widdix/aws-cf-templates#565,
aws-quickstart/quickstart-linux-bastion#144).
"""

from __future__ import annotations

import pytest

from formwright.cloud.emulator import signals

STACK = "arn:aws:cloudformation:us-east-1:123456789012:stack/group-policy/1"


def _judge(policy: dict, received: list[str], said: list[str] | None = None) -> list[str]:
    """Wait for `policy` with `received` (statuses) already signalled; the events said (into `said`)."""
    said = [] if said is None else said
    signals.expect(STACK, "Group")
    for n, status in enumerate(received):
        signals.record((STACK, "Group"), {"Status": status, "UniqueId": f"i-{n}", "Reason": "", "Data": ""})
    signals.await_creation_policy(STACK, "Group", policy, said.append, group=True)
    return said


def test_half_of_five_needs_three_successes_and_two_failures_do_not_fail_it() -> None:
    policy = {"ResourceSignal": {"Count": 5, "Timeout": "PT1H"},
              "AutoScalingCreationPolicy": {"MinSuccessfulInstancesPercent": 50}}
    said = _judge(policy, ["FAILURE", "SUCCESS", "FAILURE", "SUCCESS", "SUCCESS"])
    assert "Received FAILURE signal with UniqueId i-0" in said
    assert "Received SUCCESS signal with UniqueId i-4" in said


def test_one_failure_of_two_at_the_default_100_percent_fails_the_group_at_once() -> None:
    with pytest.raises(signals.SignalFailure) as failed:
        _judge({"ResourceSignal": {"Count": 2, "Timeout": "PT1H"}}, ["FAILURE"])
    assert str(failed.value) == ("Received 1 FAILURE signal(s) out of 2. Unable to satisfy 100% "
                                 "MinSuccessfulInstancesPercent requirement")


def test_a_signal_missing_at_the_timeout_counts_as_a_failure() -> None:
    said: list[str] = []
    with pytest.raises(signals.SignalFailure) as failed:
        _judge({"ResourceSignal": {"Count": 2, "Timeout": "PT1S"}}, ["SUCCESS"], said)
    assert said[-1] == ("Failed to receive 1 resource signal(s) for the current batch. Each resource signal "
                        "timeout is counted as a FAILURE.")
    assert str(failed.value) == ("Received 1 SUCCESS signal(s) out of 2. Unable to satisfy 100% "
                                 "MinSuccessfulInstancesPercent requirement")


def test_a_percent_outside_0_to_100_is_refused() -> None:
    with pytest.raises(signals.SignalFailure, match="MinSuccessfulInstancesPercent 150 must be a number"):
        _judge({"AutoScalingCreationPolicy": {"MinSuccessfulInstancesPercent": 150}}, [])
