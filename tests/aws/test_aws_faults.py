"""The engine on `--target aws` through a proxy that answers like real AWS (tests/aws/fault_proxy.py).

A 6-stack DAG with output -> parameter references must converge through each fault mix with exit 0,
no duplicate stack, and after an update of the head stack every dependent must hold the NEW outputs
(a stale DescribeStacks after ExecuteChangeSet once handed dependents the old ones: aws-cdk-cli#1802).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import boto3
import pytest

from .fault_proxy import FaultProxy, Faults

TEMPLATE = {
    "Parameters": {"Upstream": {"Type": "String", "Default": "root"},
                   "Version": {"Type": "String", "Default": "v1"}},
    "Resources": {"Topic": {"Type": "AWS::SNS::Topic"}},
    "Outputs": {"Chain": {"Value": {"Fn::Sub": "${Upstream}>${Version}:${AWS::StackName}"}}},
}
# head -> b, c; b, c -> d; d -> e; c -> f
DAG = {"head": [], "b": ["head"], "c": ["head"], "d": ["b", "c"], "e": ["d"], "f": ["c"]}

MIXES = {
    "eventual consistency": Faults(stale_after_execute=True, change_set_pending=0.4, stack_in_progress=0.8),
    "throttling and 5xx": Faults(stale_after_execute=True, throttle=0.25, server_errors=0.15, seed=3),
    "all at once": Faults(stale_after_execute=True, change_set_pending=0.3, stack_in_progress=0.5,
                          throttle=0.2, server_errors=0.1, seed=11),
}


def write_project(root: Path, version: str) -> None:
    (root / "stack.json").write_text(json.dumps(TEMPLATE))
    lines = ["name: dag", "stacks:"]
    for name, ups in DAG.items():
        lines.append(f"  {name}:\n    template: stack.json\n    parameters:")
        if name == "head":
            lines.append(f"      Version: {version}")
        else:
            # several upstreams: the parameter takes the first, depends_on orders the rest
            lines.append(f"      Upstream: !ref {ups[0]}.outputs.Chain")
            if len(ups) > 1:
                lines.append(f"    depends_on: [{', '.join(ups[1:])}]")
    (root / "formwright.yaml").write_text("\n".join(lines) + "\n")


def deploy_through(proxy: FaultProxy, root: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "FORMWRIGHT_TARGET": "aws", "AWS_ENDPOINT_URL": proxy.endpoint,
           "AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test", "AWS_REGION": "us-east-1"}
    env.pop("AWS_PROFILE", None)
    return subprocess.run([sys.executable, "-m", "formwright", "deploy", str(root), "-y", "--output", "json"],
                          env=env, capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)


@pytest.mark.parametrize("mix", list(MIXES))
def test_a_dag_converges_through_the_faults_and_dependents_get_new_outputs(mix, cloud, tmp_path) -> None:
    write_project(tmp_path, "v1")
    with FaultProxy(cloud.endpoint, MIXES[mix]) as proxy:
        first = deploy_through(proxy, tmp_path)
        assert first.returncode == 0, first.stderr[-2000:]
        write_project(tmp_path, "v2")
        second = deploy_through(proxy, tmp_path)
        assert second.returncode == 0, second.stderr[-2000:]
    assert proxy.injected, "the proxy injected no fault: the test proves nothing"
    assert proxy.injected["stale read"] >= len(DAG)  # every execution met a stale read at least once

    cfn = cloud.client("cloudformation")
    summaries = cfn.list_stacks()["StackSummaries"]
    names = [s["StackName"] for s in summaries]
    assert sorted(names) == sorted(f"dag-{n}" for n in DAG), "a duplicate or deleted stack"
    outputs = {}
    for name in DAG:
        stack = cfn.describe_stacks(StackName=f"dag-{name}")["Stacks"][0]
        assert stack["StackStatus"] in ("CREATE_COMPLETE", "UPDATE_COMPLETE")
        outputs[name] = {o["OutputKey"]: o["OutputValue"] for o in stack.get("Outputs", [])}["Chain"]
    assert outputs["head"] == "root>v2:dag-head"
    for name, ups in DAG.items():
        if ups:  # every dependent was updated with the head's NEW chain
            assert outputs[name].startswith(outputs[ups[0]] + ">"), (name, outputs)
            assert "v2" in outputs[name]
    result = json.loads(second.stdout)
    assert result["ok"]


def test_the_proxy_really_answers_stale_and_pending(cloud) -> None:
    """The proxy itself: a stale read after ExecuteChangeSet, then IN_PROGRESS, then the truth."""
    import time

    with FaultProxy(cloud.endpoint, Faults(change_set_pending=2.0, stack_in_progress=2.0)) as proxy:
        client = boto3.client("cloudformation", endpoint_url=proxy.endpoint, region_name="us-east-1",
                              aws_access_key_id="x", aws_secret_access_key="x")
        made = client.create_change_set(StackName="p", ChangeSetName="c1", ChangeSetType="CREATE",
                                        TemplateBody=json.dumps(TEMPLATE))
        assert client.describe_change_set(ChangeSetName=made["Id"])["Status"] == "CREATE_PENDING"
        time.sleep(2.1)
        assert client.describe_change_set(ChangeSetName=made["Id"])["Status"] == "CREATE_COMPLETE"
        client.execute_change_set(ChangeSetName=made["Id"])
        stale = client.describe_stacks(StackName=made["StackId"])["Stacks"][0]
        assert stale["StackStatus"] == "REVIEW_IN_PROGRESS"
        assert client.describe_stacks(StackName="p")["Stacks"][0]["StackStatus"] == "CREATE_IN_PROGRESS"
        time.sleep(2.1)
        assert client.describe_stacks(StackName="p")["Stacks"][0]["StackStatus"] == "CREATE_COMPLETE"
