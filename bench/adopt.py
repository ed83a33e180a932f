"""Adopt benchmark: `formwright adopt` of 200 stacks made outside formwright, one local cloud.

Creates N stacks (default 200) with boto3, untimed, each but the first taking the previous one's output as a
parameter, then times, through tests/aws/fault_proxy.py (which counts the CloudFormation calls that reach
the cloud):

- `formwright adopt 'bench-*' -o DIR`: the project written, references inferred, each stack marked applied;
- the peer: what a hand-written export does with boto3 (as the AWS CLI's `list-stacks`, then per stack
  `describe-stacks` and `get-template`, each template written to a file), no inference at all.

Then `formwright plan` of the adopted project must show no change (checked, untimed). Prints the wall times,
the ratio peer / formwright, and CloudFormation calls per stack (target <= 3).

    .venv/bin/python bench/adopt.py [--stacks 200]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from deploy import FW, cloud_env, load_fault_proxy, timed

TEMPLATE = json.dumps({
    "Parameters": {"Upstream": {"Type": "String", "Default": "root"}},
    "Resources": {"Topic": {"Type": "AWS::SNS::Topic"}},
    "Outputs": {"TopicArn": {"Value": {"Ref": "Topic"}}},
})


def client(endpoint: str):
    """boto3's CloudFormation client on the local cloud."""
    import boto3

    return boto3.client("cloudformation", endpoint_url=endpoint, region_name="us-east-1",
                        aws_access_key_id="bench", aws_secret_access_key="bench")


def make_stacks(endpoint: str, count: int) -> None:
    """bench-s0 … bench-s<count-1>, each taking the previous stack's TopicArn as `Upstream`."""
    cfn = client(endpoint)
    previous = None
    for i in range(count):
        params = [{"ParameterKey": "Upstream", "ParameterValue": previous}] if previous else []
        cfn.create_stack(StackName=f"bench-s{i}", TemplateBody=TEMPLATE, Parameters=params)
        cfn.get_waiter("stack_create_complete").wait(StackName=f"bench-s{i}",
                                                     WaiterConfig={"Delay": 1, "MaxAttempts": 60})
        outputs = cfn.describe_stacks(StackName=f"bench-s{i}")["Stacks"][0]["Outputs"]
        previous = outputs[0]["OutputValue"]


def peer(endpoint: str, folder: Path) -> float:
    """The hand-written export: list, then describe and get each template; its wall time."""
    cfn = client(endpoint)
    start = time.perf_counter()
    folder.mkdir()
    names = [s["StackName"] for page in cfn.get_paginator("list_stacks").paginate(
        StackStatusFilter=["CREATE_COMPLETE", "UPDATE_COMPLETE"]) for s in page["StackSummaries"]
             if s["StackName"].startswith("bench-")]
    for name in names:
        described = cfn.describe_stacks(StackName=name)["Stacks"][0]
        body = cfn.get_template(StackName=name)["TemplateBody"]
        (folder / f"{name}.json").write_text(json.dumps({"stack": described, "template": body}, default=str))
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stacks", type=int, default=200)
    args = parser.parse_args()
    from formwright.cloud import local

    with tempfile.TemporaryDirectory(prefix="fw-bench-adopt-") as tmp:
        root = Path(tmp)
        os.environ["FORMWRIGHT_HOME"] = str(root / "home")
        cloud, _ = local.start()
        try:
            make_stacks(cloud.endpoint, args.stacks)
            proxy_module = load_fault_proxy()
            faults = proxy_module.Faults(stale_after_execute=False)
            with proxy_module.FaultProxy(cloud.endpoint, faults) as proxy:
                env = cloud_env(proxy.endpoint, target="aws")
                wall, out = timed([*FW, "adopt", "bench-*", "-o", str(root / "adopted"), "--output", "json"],
                                  env)
                calls = sum(proxy.calls.values())
                answer = json.loads(out)
                refs = sum(len(s["references"]) for s in answer["stacks"].values())
                proxy.calls.clear()
                peer_wall = peer(proxy.endpoint, root / "peer")
                peer_calls = sum(proxy.calls.values())
                _, plan_out = timed([*FW, "plan", str(root / "adopted"), "--output", "json"], env)
                kinds = {p["kind"] for p in json.loads(plan_out)["plans"].values()}
        finally:
            local.stop()
    n = args.stacks
    print(f"\n{n} stacks adopted ({refs} references inferred); plan afterwards: {sorted(kinds)}")
    print(f"formwright adopt : {wall:6.2f} s, {calls} CloudFormation calls ({calls / n:.2f} per stack, "
          "target <= 3)")
    print(f"boto3 export peer: {peer_wall:6.2f} s, {peer_calls} calls ({peer_calls / n:.2f} per stack; "
          "templates only, no project, no references)")
    print(f"ratio peer / formwright: {peer_wall / wall:.2f}x (formwright's time includes its start-up)")
    if kinds != {"unchanged"} or calls > 3 * n:
        raise SystemExit("FAILED: plan after adopt must show no change, within 3 calls per stack")


if __name__ == "__main__":
    main()
