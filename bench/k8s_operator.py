"""Benchmark of the operator on a real kube-apiserver: many CloudFormationStack objects in steady state,
then a revision bump.

Runs everything on this machine and stops it at the end: the kube-apiserver and etcd of `make k8s`
(tests/k8s/cluster.py), the install applied with `kubectl apply -k deploy/k8s/overlays/cluster-wide`, one
operator replica started from the rendered Deployment (tests/k8s/install.py), a private local cloud behind
the counting proxy of the tests (tests/aws/fault_proxy.py, no faults) so every CloudFormation call is
counted, and the source-controller's part played by tests/k8s/sources.py.

Printed, with the targets of issue 27:
  - the initial apply of N objects (for scale, not a target);
  - steady state (no change) over --window seconds: the operator's calls to Kubernetes per minute (from the
    API server's own apiserver_request_total, less this script's reads) and to CloudFormation per minute,
    describes per object per interval (target <= 1) and change sets (target 0);
  - the operator's resident memory;
  - the time from a revision bump of a source to Ready on the --bump objects that read it.

Usage: .venv/bin/python bench/k8s_operator.py [--objects 1000] [--bump 100] [--interval 60] [--window 60]
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

TEMPLATE = """\
AWSTemplateFormatVersion: "2010-09-09"
Resources:
  Queue:
    Type: AWS::SQS::Queue
    Properties:
      DelaySeconds: {delay}
"""


def request_total(server) -> int:
    """apiserver_request_total summed over every verb and resource (the API server's /metrics)."""
    import ssl
    import urllib.request

    from tests.k8s.cluster import ADMIN_TOKEN

    req = urllib.request.Request(server.url + "/metrics", headers={"Authorization": f"Bearer {ADMIN_TOKEN}"})
    with urllib.request.urlopen(req, timeout=30,  # noqa: S310 - loopback
                                context=ssl.create_default_context(cafile=str(server.ca))) as reply:
        text = reply.read().decode()
    return int(sum(float(m) for m in re.findall(r"^apiserver_request_total\{[^}]*\} (\S+)$", text, re.M)))


def rss_mb(pid: int) -> float:
    """The resident memory of a process, from /proc."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def wait_until(predicate, what: str, timeout: float) -> float:
    """Seconds until `predicate()` holds (polled every 0.5 s)."""
    start = time.monotonic()
    while not predicate():
        if time.monotonic() - start > timeout:
            raise SystemExit(f"bench/k8s_operator.py: timed out waiting for {what}")
        time.sleep(0.5)
    return time.monotonic() - start


def spread(timeline: list, start: float, end: float) -> str:
    """How the window's reads fell on the stacks: the most any one stack had, how many stacks had more than
    one, and the calls that did not answer 200 (a pass that failed comes back at retryInterval)."""
    reads: Counter[str] = Counter()
    failed: Counter[str] = Counter()
    for arrived, _, action, stack, status in timeline:
        if start <= arrived < end:
            if action.startswith(("Describe", "List")):
                reads[stack] += 1
            if status != 200:
                failed[f"{action} HTTP {status}"] += 1
    most = max(reads.values(), default=0)
    several = sum(1 for n in reads.values() if n > 1)
    return f"reads per stack in the window: at most {most}, {several} stacks read more than once; " \
           f"failed calls: {dict(failed) or 'none'}"


def objects_ready(server, namespace: str, names: set[str], revision: str | None = None) -> bool:
    """True when every named object is Ready=True (and applied `revision`, when given)."""
    try:
        listing = server.request("GET", f"/apis/cloudformation.contrib.fluxcd.io/v1alpha1/namespaces/"
                                 f"{namespace}/cloudformationstacks") or {}
    except (OSError, TimeoutError):  # a busy API server answers late: asked again at the next poll
        return False
    done = set()
    for item in listing.get("items", []):
        status = item.get("status") or {}
        ready = next((c for c in status.get("conditions") or [] if c.get("type") == "Ready"), {})
        applied = revision is None or status.get("lastAppliedRevision") == revision
        if ready.get("status") == "True" and applied:
            done.add(item["metadata"]["name"])
    return names <= done


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--objects", type=int, default=1000)
    parser.add_argument("--bump", type=int, default=100, help="objects reading the source that is bumped")
    parser.add_argument("--interval", type=int, default=60, help="each object's spec.interval, in seconds")
    parser.add_argument("--window", type=int, default=60, help="seconds of steady state measured")
    args = parser.parse_args()

    from tests.k8s import cluster, install
    from tests.k8s.sources import Storage, set_artifact

    why = cluster.unavailable()
    if why:
        raise SystemExit(f"bench/k8s_operator.py: {why}")
    work = Path(tempfile.mkdtemp(prefix="formwright-bench-operator-"))
    os.environ["FORMWRIGHT_HOME"] = str(work / "home")
    from bench.deploy import load_fault_proxy  # the tests' counting proxy, loaded as bench/deploy.py does
    from formwright.cloud import local

    fault_proxy = load_fault_proxy()

    record, _ = local.start()
    server = cluster.start(work / "kube")
    storage = Storage(work / "artifacts")
    proxy = fault_proxy.FaultProxy(record.endpoint, max_seconds=7200.0, max_requests=10_000_000)
    replica = None
    try:
        overlay = install.DEPLOY / "overlays" / "cluster-wide"
        fixtures = HERE.parent / "tests" / "k8s" / "fixtures"
        server.kubectl("apply", "-f", str(fixtures / "gitrepository-crd.yaml"))
        server.kubectl("apply", "-k", str(overlay))
        server.kubectl("wait", "--for=condition=Established", "--timeout=60s", "--all", "crd")
        server.kubectl("create", "namespace", "bench")
        sources = [{"apiVersion": "source.toolkit.fluxcd.io/v1", "kind": "GitRepository",
                    "metadata": {"name": name, "namespace": "bench"},
                    "spec": {"url": "https://example.invalid/x.git", "interval": "1h"}}
                   for name in ("many", "hot")]
        server.kubectl("apply", "-f", "-", stdin=yaml.safe_dump_all(sources))
        first = f"main@sha1:{'1' * 40}"
        for name in ("many", "hot"):
            files = {"template.yaml": TEMPLATE.format(delay=1)}
            set_artifact(server, "bench", name, storage.publish(files, first))
        names = [f"o{i:04d}" for i in range(args.objects)]
        hot = set(names[: args.bump])
        docs = [{"apiVersion": "cloudformation.contrib.fluxcd.io/v1alpha1", "kind": "CloudFormationStack",
                 "metadata": {"name": n, "namespace": "bench"},
                 "spec": {"stackName": f"bench-{n}", "templatePath": "template.yaml",
                          "sourceRef": {"kind": "GitRepository", "name": "hot" if n in hot else "many"},
                          "interval": f"{args.interval}s", "pollInterval": "2s", "retryInterval": "5s"}}
                for n in names]
        env = {"FORMWRIGHT_TARGET": "aws", "AWS_ENDPOINT_URL": proxy.endpoint, "AWS_ACCESS_KEY_ID": "bench",
               "AWS_SECRET_ACCESS_KEY": "bench", "FORMWRIGHT_SYNC_DRIFT": "false"}
        replica = install.replica(server, overlay, "formwright-sync-system", work / "replica", env=env)
        start = time.monotonic()
        for i in range(0, len(docs), 200):
            server.kubectl("apply", "-f", "-", stdin=yaml.safe_dump_all(docs[i:i + 200]))
        wait_until(lambda: objects_ready(server, "bench", set(names)), "every object Ready", 7200)
        print(f"initial apply: {args.objects} objects Ready in {time.monotonic() - start:.1f} s "
              f"({proxy.calls['CreateChangeSet']} change sets)")

        time.sleep(min(args.interval, 30))  # let the last passes settle before measuring
        k8s_before, cfn_before = request_total(server), dict(proxy.calls)
        window_start = time.monotonic()
        time.sleep(args.window)
        window_end = time.monotonic()
        k8s_calls = request_total(server) - k8s_before - 1  # less this script's own /metrics read
        cfn_calls = {k: v - cfn_before.get(k, 0) for k, v in proxy.calls.items() if v - cfn_before.get(k, 0)}
        per_minute = 60.0 / args.window
        describes = sum(v for k, v in cfn_calls.items() if k.startswith(("Describe", "List")))
        per_object = describes / args.objects / (args.window / args.interval)
        print(f"steady state over {args.window} s: Kubernetes {k8s_calls * per_minute:.0f} calls/min, "
              f"CloudFormation {sum(cfn_calls.values()) * per_minute:.0f} calls/min "
              f"{dict(sorted(cfn_calls.items()))}")
        verdict = "met" if per_object <= 1 else "NOT met"
        print(f"  describes per object per interval: {per_object:.2f} (target <= 1: {verdict}); "
              f"change sets: {cfn_calls.get('CreateChangeSet', 0)} (target 0)")
        print(f"  {spread(proxy.timeline, window_start, window_end)}")
        print(f"operator memory: {rss_mb(replica.process.pid):.0f} MB resident")

        bump = f"main@sha1:{'2' * 40}"
        start = time.monotonic()
        files = {"template.yaml": TEMPLATE.format(delay=2)}
        set_artifact(server, "bench", "hot", storage.publish(files, bump))
        took = wait_until(lambda: objects_ready(server, "bench", hot, bump), "the bump applied", 3600)
        print(f"revision bump to Ready on {len(hot)} objects: {took:.1f} s")
    finally:
        if replica is not None:
            replica.stop()
        proxy.close()
        storage.close()
        server.stop()
        local.stop()


if __name__ == "__main__":
    main()
