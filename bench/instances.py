"""Booting instances benchmark (issue 26): boot to signal for 1, 4 and 8 instances, the image cached.

Target: one instance with a small UserData signalled in <= 10 s on this 2-core machine.

What is timed: from CreateStack (the stack's instances booting, `local_cloud: {instances: boot}`'s tag) to
each instance's signal. Until cfn-signal runs in booted instances (issue 26a), the signal is the UserData's
own marker: its HTTP listener answering from the host on the instance's PrivateIpAddress (the UserData
writes a page and starts `python3 -m http.server`). Printed per round: the first and last instance
answering, seconds per instance (the last / N), and each instance's memory (the proportional set size of
its processes, from /proc/PID/smaps_rollup) and disk (its overlay's upper folder). The peer, in the same
run: what a boot cost before the overlay root, a copy of the cached image (`cp -a --reflink=auto`).

Needs root and the image (`make instances-image`). Runs its own local cloud in a temporary FORMWRIGHT_HOME.

    .venv/bin/python bench/instances.py [--counts 1 4 8]
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

TARGET = 10.0
USER_DATA = """#!/bin/sh
mkdir -p /srv && echo "booted $(hostname)" > /srv/index.html
cd /srv && nohup python3 -m http.server 8080 >/dev/null 2>&1 &
"""
TAG = "formwright:local-cloud:instances"  # formwright.cloud.local.INSTANCES_TAG


def template(count: int, third: int) -> dict:
    """A VPC, a subnet in the instance network and `count` instances with the small UserData."""
    resources: dict = {
        "Net": {"Type": "AWS::EC2::VPC", "Properties": {"CidrBlock": "10.213.0.0/16"}},
        "Sub": {"Type": "AWS::EC2::Subnet", "Properties": {"VpcId": {"Ref": "Net"},
                                                           "CidrBlock": f"10.213.{third}.0/24"}},
    }
    for index in range(count):
        resources[f"Web{index}"] = {"Type": "AWS::EC2::Instance", "Properties": {
            "ImageId": "ami-760aaa0f", "InstanceType": "t3.micro", "SubnetId": {"Ref": "Sub"},
            "PrivateIpAddress": f"10.213.{third}.{10 + index}", "UserData": {"Fn::Base64": USER_DATA}}}
    return {"Resources": resources}


def answered(url: str, since: float, limit: float = 120.0) -> float:
    """Seconds from `since` until `url` answers 200 (polled every 20 ms); inf when it never does."""
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    while time.perf_counter() - since < limit:
        try:
            with opener.open(url, timeout=1) as reply:
                if reply.status == 200:
                    return time.perf_counter() - since
        except OSError:
            time.sleep(0.02)
    return float("inf")


def memory_kib(root: Path) -> int:
    """The proportional set size (KiB) of the processes whose root is `root`."""
    from formwright.cloud.instances.boot import processes_in

    total = 0
    for pid in processes_in(root):
        try:
            for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
                if line.startswith("Pss:"):
                    total += int(line.split()[1])
        except OSError:
            continue
    return total


def disk_kib(folder: Path) -> int:
    """What `folder` holds on disk (KiB, `du -sk`)."""
    done = subprocess.run(["du", "-sk", str(folder)], capture_output=True, text=True, check=False)  # noqa: S607
    return int(done.stdout.split()[0]) if done.returncode == 0 else 0


def round_of(cfn, ec2, home: Path, count: int, third: int) -> dict:
    """Boot `count` instances in one stack; the times to each answer, their memory and disk; then delete."""
    name = f"bench-{count}"
    since = time.perf_counter()
    cfn.create_stack(StackName=name, TemplateBody=json.dumps(template(count, third)),
                     Tags=[{"Key": TAG, "Value": "boot"}])
    addresses = [f"10.213.{third}.{10 + i}" for i in range(count)]
    with concurrent.futures.ThreadPoolExecutor(count) as pool:
        times = list(pool.map(lambda ip: answered(f"http://{ip}:8080/", since), addresses))
    status = cfn.describe_stacks(StackName=name)["Stacks"][0]["StackStatus"]
    ids = {i["PrivateIpAddress"]: i["InstanceId"] for r in ec2.describe_instances()["Reservations"]
           for i in r["Instances"] if i["State"]["Name"] == "running"}
    memory = [memory_kib(home / "instances" / ids[ip] / "root") for ip in addresses if ip in ids]
    disk = [disk_kib(home / "instances" / ids[ip] / "upper") for ip in addresses if ip in ids]
    cfn.delete_stack(StackName=name)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            stacks = cfn.describe_stacks(StackName=name)["Stacks"]
        except cfn.exceptions.ClientError:  # deleted: DescribeStacks no longer knows the name
            break
        if stacks[0]["StackStatus"] in ("DELETE_COMPLETE", "DELETE_FAILED"):
            break
        time.sleep(0.2)
    return {"count": count, "status": status, "times": times, "memory_kib": memory, "disk_kib": disk}


def copy_peer(image: Path, scratch: Path) -> float:
    """Seconds a copy of the cached image takes (the root of every boot before the overlay)."""
    target = scratch / "copied-root"
    since = time.perf_counter()
    subprocess.run(["cp", "-a", "--reflink=auto", str(image), str(target)], check=True)  # noqa: S603,S607
    took = time.perf_counter() - since
    shutil.rmtree(target)
    return took


def main() -> None:
    """Run the rounds and print them against the target."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--counts", type=int, nargs="+", default=[1, 4, 8])
    args = parser.parse_args()
    scratch = Path(tempfile.mkdtemp(prefix="fw-bench-instances-"))
    os.environ["FORMWRIGHT_HOME"] = str(scratch / "home")
    from formwright.cloud import local
    from formwright.cloud.instances import boot

    reason = boot.unavailable()
    if reason:
        sys.exit(f"bench/instances.py: {reason}")
    import boto3

    record, _ = local.start()
    try:
        session = boto3.Session(aws_access_key_id="testing", aws_secret_access_key="testing",  # noqa: S106
                                region_name="us-east-1")
        cfn = session.client("cloudformation", endpoint_url=record.endpoint)
        ec2 = session.client("ec2", endpoint_url=record.endpoint)
        print("signal: the UserData's HTTP listener answering from the host (cfn-signal is issue 26a's; "
              "until it lands, this marker stands for it)")
        copying = copy_peer(boot.image_dir(), scratch)
        print(f"peer: copying the cached image (a boot's root before the overlay): {copying:.2f} s "
              "per instance")
        for count in args.counts:
            result = round_of(cfn, ec2, scratch / "home", count, 200 + count)
            times = result["times"]
            memory = ", ".join(f"{kib / 1024:.1f}" for kib in result["memory_kib"])
            disk = ", ".join(str(kib) for kib in result["disk_kib"])
            against = ""
            if count == 1:
                verdict = "met" if times[0] <= TARGET else "MISSED"
                against = (f"; target <= {TARGET:.0f} s: {verdict} (ratio {times[0] / TARGET:.2f}); the copy "
                           f"alone took {copying / times[0]:.1f}x this whole boot")
            print(f"{count} instance(s) [{result['status']}]: first {min(times):.2f} s, "
                  f"last {max(times):.2f} s, {max(times) / count:.2f} s per instance{against}")
            print(f"    memory (PSS, MiB) of each: {memory}; disk (overlay upper, KiB) of each: {disk}")
    finally:
        local.stop()
        local.remove_left_instances()
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
