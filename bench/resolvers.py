"""Resolvers benchmark: a no-op deploy of 50 stacks each taking an `!ssm` and a `!stack_output` parameter,
against the same project with literal values, in one run on one fresh local cloud (issue 24).

    .venv/bin/python bench/resolvers.py [--stacks 50] [--external 5] [--rounds 3]

Both projects are deployed once (untimed), then re-deployed with no change `--rounds` times each,
alternately; the best of each is kept. Every run is its own `formwright deploy -y` process, so each pays its
own start-up. The resolvers are batched: GetParameters takes 10 names per call (5 calls for 50), each
external stack is described once (`--external` of them, shared by the 50 stacks). Target: the resolvers'
no-op deploy <= 1.3x the literal one.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FW = [sys.executable, "-m", "formwright"]
TEMPLATE = {
    "Parameters": {"Host": {"Type": "String"}, "Vpc": {"Type": "String"}},
    "Resources": {"Queue": {"Type": "AWS::SQS::Queue"}},
    "Outputs": {"Host": {"Value": {"Ref": "Host"}}, "Vpc": {"Value": {"Ref": "Vpc"}}},
}
EXTERNAL = {"Resources": {"Topic": {"Type": "AWS::SNS::Topic"}},
            "Outputs": {"VpcId": {"Value": "vpc-0bench"}}}


def write_project(folder: Path, stacks: int, external: int, literal: bool) -> Path:
    """A project of `stacks` stacks; each takes `Host` and `Vpc` from resolvers or as literal values."""
    folder.mkdir(parents=True)
    (folder / "t.json").write_text(json.dumps(TEMPLATE))
    lines = ["name: " + ("lit" if literal else "res"), "region: us-east-1", "stacks:"]
    for i in range(stacks):
        if literal:
            host, vpc = f"host-{i}.internal", "vpc-0bench"
        else:
            host, vpc = f"!ssm /bench/host/{i}", f"!stack_output bench-external-{i % external}.VpcId"
        lines += [f"  s{i}:", "    template: t.json", f"    parameters: {{Host: {host}, Vpc: {vpc}}}"]
    (folder / "formwright.yaml").write_text("\n".join(lines) + "\n")
    return folder


def seed(stacks: int, external: int) -> None:
    """The SSM parameters and the external stacks, put there with boto3."""
    from formwright.cloud import local
    from formwright.cloud.session import Target

    target = Target("local", "us-east-1", local.require().endpoint)
    ssm = target.client("ssm")
    for i in range(stacks):
        ssm.put_parameter(Name=f"/bench/host/{i}", Value=f"host-{i}.internal", Type="String", Overwrite=True)
    cfn = target.client("cloudformation")
    for n in range(external):
        cfn.create_stack(StackName=f"bench-external-{n}", TemplateBody=json.dumps(EXTERNAL))


def deploy(folder: Path) -> float:
    """Seconds one `formwright deploy -y` of the project took (process start to exit)."""
    start = time.perf_counter()
    done = subprocess.run([*FW, "deploy", str(folder), "-y", "--output", "json"], capture_output=True,
                          text=True, check=False)
    took = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"deploy of {folder.name} failed: {done.stderr[-2000:]}")
    return took


def main() -> None:
    """Run the comparison and print the times and the ratio."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stacks", type=int, default=50)
    parser.add_argument("--external", type=int, default=5)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="fw-bench-resolvers-") as tmp:
        folder = Path(tmp)
        # a local cloud of the bench's own (a private FORMWRIGHT_HOME), stopped at the end
        os.environ["FORMWRIGHT_HOME"] = str(folder / "home")
        os.environ["FORMWRIGHT_TARGET"] = "local"
        subprocess.run([*FW, "local-cloud", "start"], capture_output=True, check=True)
        try:
            seed(args.stacks, args.external)
            literal = write_project(folder / "literal", args.stacks, args.external, literal=True)
            resolved = write_project(folder / "resolvers", args.stacks, args.external, literal=False)
            first = {"literal": deploy(literal), "resolvers": deploy(resolved)}
            best = {"literal": float("inf"), "resolvers": float("inf")}
            for _ in range(args.rounds):
                best["literal"] = min(best["literal"], deploy(literal))
                best["resolvers"] = min(best["resolvers"], deploy(resolved))
        finally:
            subprocess.run([*FW, "local-cloud", "stop"], capture_output=True, check=False)
    print(f"{args.stacks} stacks, {args.external} external stacks, best of {args.rounds}")
    print(f"  first deploy: literal {first['literal']:.2f} s, resolvers {first['resolvers']:.2f} s")
    print(f"  no-op deploy: literal {best['literal']:.2f} s, resolvers {best['resolvers']:.2f} s")
    ratio = best["resolvers"] / best["literal"]
    print(f"  ratio (resolvers / literal, no-op): {ratio:.2f}x  (target <= 1.3x)")


if __name__ == "__main__":
    main()
