"""`stack_timeout` bounds a stack's waits: through the fault proxy a stack held *_IN_PROGRESS is reported
timed out with its last cloud status, never as a success; its dependents are skipped and the CLI exits 1.

sceptre's `stack_timeout` is minutes (sceptre docs, "Stack Config"); the tests shorten the minute
(`runner.MINUTE`) and run the CLI in-process so the shortened minute reaches it. CloudFormation takes
TimeoutInMinutes only on CreateStack, not on CreateChangeSet or ExecuteChangeSet (botocore's service
model), so formwright, which creates through change sets, bounds its own wait and says CloudFormation
carries on.
"""

from __future__ import annotations

import json
import sys
import time

import pytest
from botocore.exceptions import ClientError

from formwright.cloud import errors as cloud_errors
from formwright.engine import runner as runner_module
from formwright.engine.cfn import Cadence, CallCounter, CloudFormation, WaitTimeout, bounded

from .fault_proxy import FaultProxy, Faults

TEMPLATE = {
    "Parameters": {"Upstream": {"Type": "String", "Default": "root"}},
    "Resources": {"Topic": {"Type": "AWS::SNS::Topic"}},
    "Outputs": {"Chain": {"Value": {"Fn::Sub": "${Upstream}:${AWS::StackName}"}}},
}


def run_in_process(argv: list[str], capsys) -> tuple[int, str]:
    from formwright.cli.main import main

    old = sys.argv
    sys.argv = ["formwright", *argv]
    try:
        main()
        code = 0
    except SystemExit as done:
        code = int(done.code or 0)
    finally:
        sys.argv = old
    return code, capsys.readouterr().out


def test_a_stack_held_in_progress_times_out_with_its_cloud_status(cloud, tmp_path, monkeypatch,
                                                                   capsys) -> None:
    (tmp_path / "stack.json").write_text(json.dumps(TEMPLATE))
    (tmp_path / "formwright.yaml").write_text(
        "name: t\nstack_timeout: 1\nstacks:\n  a: {template: stack.json}\n"
        "  b:\n    template: stack.json\n    parameters: {Upstream: !ref a.outputs.Chain}\n"
        "  free: {template: stack.json, stack_timeout: 0}\n")
    monkeypatch.setattr(runner_module, "MINUTE", 3.0)  # stack_timeout: 1 -> 3 s
    monkeypatch.setitem(cloud_errors._target, "kind", "local")  # restored after the in-process CLI
    warm = cloud.client("cloudformation")  # moto loads its CloudFormation parts on first use: not timed
    warm.create_change_set(StackName="warm", ChangeSetName="w", ChangeSetType="CREATE",
                           TemplateBody=json.dumps(TEMPLATE))
    # a and free are held CREATE_IN_PROGRESS for 6 s: a past its 3 s bound, free (no bound) to its end
    with FaultProxy(cloud.endpoint, Faults(stack_in_progress=6.0, change_set_pending=0.3)) as proxy:
        for key, value in {"FORMWRIGHT_TARGET": "aws", "AWS_ENDPOINT_URL": proxy.endpoint,
                           "AWS_ACCESS_KEY_ID": "t", "AWS_SECRET_ACCESS_KEY": "t",
                           "AWS_REGION": "us-east-1"}.items():
            monkeypatch.setenv(key, value)
        monkeypatch.delenv("AWS_PROFILE", raising=False)
        started = time.monotonic()
        code, out = run_in_process(["deploy", str(tmp_path), "-y", "--output", "json"], capsys)
        waited = time.monotonic() - started
    result = json.loads(out)
    stacks = result["stacks"]
    assert code == 1 and not result["ok"]
    a = stacks["a"]
    assert a["outcome"] == "failed" and a["timed_out"] and a["status"] == "CREATE_IN_PROGRESS"
    assert "timed out after 1 min (stack_timeout): still CREATE_IN_PROGRESS in the cloud" in a["error"]
    assert stacks["b"]["outcome"] == "skipped" and "a failed" in stacks["b"]["error"]
    assert stacks["free"]["outcome"] == "created"  # stack_timeout: 0 is no bound
    assert waited >= 6.0  # free's wait ran to its end; a's ended at its bound
    assert proxy.calls["ExecuteChangeSet"] == 2  # b never started


class AlwaysThrottled:
    """A poll client whose every read is throttled (no AWS can be made to do this on demand)."""

    def describe_stacks(self, **_):
        raise ClientError({"Error": {"Code": "Throttling", "Message": "Rate exceeded"},
                           "ResponseMetadata": {"HTTPStatusCode": 400}}, "DescribeStacks")


def test_the_bound_covers_retried_reads() -> None:
    cfn = CloudFormation(AlwaysThrottled(), CallCounter(), cadence=Cadence(minimum=0.01))
    started = time.monotonic()
    with bounded(0.3, "1 min (stack_timeout)"), pytest.raises(WaitTimeout) as err:
        cfn.wait_stack("s")
    assert time.monotonic() - started < 2  # ended at the bound, not after 10 minutes of retries
    assert err.value.status == ""
    assert "its status in the cloud is unknown (every read failed: ClientError" in str(err.value)
    assert err.value.exit_code == 1
