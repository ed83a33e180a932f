"""Benchmark of `formwright sync`: 1,000 CloudFormationStack objects over one git repository.

Runs on a private local cloud (started here in a temporary FORMWRIGHT_HOME, stopped at the end):
  1. initial apply of 1,000 stacks (for scale, not a target);
  2. a steady-state cycle with no change: every object reconciled once — target ≤ 1 s, zero change sets;
     the same cycle with one DescribeStacks per object (Flux's way) as a peer;
  3. a naive peer: a change set per object per cycle (create, wait, delete) — what skipping buys;
  4. latency from a commit to its stack updated (a second repository, one object, source interval 1s,
     pollInterval 5s) — target ≤ pollInterval + the deploy time of that change.

Usage: .venv/bin/python bench/sync.py [--objects 1000] [--workers 4]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

TEMPLATE = """\
AWSTemplateFormatVersion: "2010-09-09"
Parameters:
  Size:
    Type: String
    Default: "1"
Resources:
  Queue:
    Type: AWS::SQS::Queue
    Properties:
      DelaySeconds: !Ref Size
"""


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True).stdout.strip()


def make_repo(path: Path) -> None:
    path.mkdir(parents=True)
    git(path, "init", "--quiet", "--initial-branch=main")
    git(path, "config", "user.email", "b@example.com")
    git(path, "config", "user.name", "bench")
    commit(path, TEMPLATE)


def commit(repo: Path, text: str) -> str:
    (repo / "template.yaml").write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "--quiet", "-m", "bench")
    return git(repo, "rev-parse", "HEAD")


def objects(repo: str, source: str, names: list[str], interval: str) -> str:
    docs = [f"""apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata: {{name: {source}, namespace: bench}}
spec: {{url: "{repo}", ref: {{branch: main}}, interval: 1s}}
"""]
    for name in names:
        docs.append(f"""apiVersion: cloudformation.contrib.fluxcd.io/v1alpha1
kind: CloudFormationStack
metadata: {{name: {name}, namespace: bench}}
spec:
  stackName: {name}
  sourceRef: {{kind: GitRepository, name: {source}}}
  interval: {interval}
  pollInterval: 5s
""")
    return "---\n".join(docs)


def wait_until(predicate, timeout: float = 600.0, step: float = 0.005) -> float:
    start = time.monotonic()
    while not predicate():
        if time.monotonic() - start > timeout:
            raise TimeoutError("benchmark condition not reached")
        time.sleep(step)
    return time.monotonic() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--objects", type=int, default=1000)
    parser.add_argument("--workers", type=int, default=4)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="formwright-bench-sync-"))
    os.environ["FORMWRIGHT_HOME"] = str(work / "home")
    os.environ["FORMWRIGHT_TARGET"] = "local"
    from formwright.cloud import local
    from formwright.cloud.session import Target
    from formwright.engine.cfn import CallCounter
    from formwright.sync.daemon import OBJECT, Daemon

    record, _ = local.start()
    try:
        target = Target("local", "us-east-1", record.endpoint, max_pool=64)
        many, one = work / "many", work / "one"
        make_repo(many)
        make_repo(one)
        folder = work / "objects"
        folder.mkdir()
        names = [f"bench-{i:04d}" for i in range(args.objects)]
        (folder / "many.yaml").write_text(objects(many.as_uri(), "many", names, "1h"))
        (folder / "one.yaml").write_text(objects(one.as_uri(), "one", ["latency"], "1h"))
        counter = CallCounter()
        daemon = Daemon(
            folder, target, workers=args.workers, drift=False, reload_interval=3600, counter=counter
        )
        thread = threading.Thread(target=daemon.run_forever, kwargs={"install_signals": False}, daemon=True)
        keys = [f"bench/{n}" for n in names]
        t0 = time.monotonic()
        thread.start()
        status = daemon._status_of
        wait_until(lambda: all((s := status(k)) is not None and s.is_ready for k in [*keys, "bench/latency"]),
                   step=0.05)
        initial = time.monotonic() - t0
        print(f"initial apply: {len(keys) + 1} stacks in {initial:.1f} s "
              f"({counter.calls['create_change_set']} change sets, {args.workers} workers)")

        def cycle(label: str) -> tuple[float, int, int]:
            time.sleep(1.1)  # the shared DescribeStacks listing is at most 1 s old: make every cycle take one
            before_passes = dict(daemon.stats.passes_by_key)
            before_cs = counter.calls["create_change_set"]
            before_calls = counter.total
            for key in keys:
                daemon.schedule(OBJECT, key)
            elapsed = wait_until(
                lambda: all(daemon.stats.passes_by_key.get(k, 0) > before_passes.get(k, 0) for k in keys))
            change_sets = counter.calls["create_change_set"] - before_cs
            calls = counter.total - before_calls
            print(f"{label}: {len(keys)} objects in {elapsed:.3f} s, {change_sets} change sets, "
                  f"{calls} API calls")
            return elapsed, change_sets, calls

        steady, steady_cs, _ = cycle("steady-state cycle (shared listing)")
        steady2, _, _ = cycle("steady-state cycle (shared listing, again)")
        daemon.reconciler.inventory = None
        flux_like, _, _ = cycle("peer: steady-state cycle, one DescribeStacks per object (Flux's way)")

        # naive peer: a change set per object per cycle
        cf = target.client("cloudformation")

        def naive(name: str) -> None:
            cs = cf.create_change_set(StackName=name, ChangeSetName=f"naive-{int(time.time() * 1000)}",
                                      ChangeSetType="UPDATE", TemplateBody=TEMPLATE)["Id"]
            while cf.describe_change_set(ChangeSetName=cs)["Status"] in (
                "CREATE_PENDING",
                "CREATE_IN_PROGRESS",
            ):
                time.sleep(0.05)
            cf.delete_change_set(ChangeSetName=cs)

        start = time.monotonic()
        with ThreadPoolExecutor(args.workers) as pool:
            list(pool.map(naive, names))
        naive_time = time.monotonic() - start
        print(f"peer: naive cycle, a change set per object: {len(names)} objects in {naive_time:.3f} s, "
              f"{len(names)} change sets")

        # latency: commit -> stack updated
        from formwright.engine.cfn import CloudFormation

        probe = CloudFormation(cf)
        probe_start = time.monotonic()
        cs = cf.create_change_set(StackName="bench-0000", ChangeSetName="probe", ChangeSetType="UPDATE",
                                  TemplateBody=TEMPLATE.replace('Default: "1"', 'Default: "3"'))["Id"]
        probe.wait_change_set(cs)
        cf.execute_change_set(ChangeSetName=cs)
        probe.wait_stack("bench-0000")
        deploy_time = time.monotonic() - probe_start
        sha = commit(one, TEMPLATE.replace('Default: "1"', 'Default: "2"'))
        latency = wait_until(lambda: status("bench/latency").last_applied_revision.endswith(sha), timeout=120)
        print(f"commit -> stack updated: {latency:.2f} s (source interval 1 s, pollInterval 5 s, "
              f"deploy time of the change {deploy_time:.3f} s; target <= {5 + deploy_time:.2f} s)")
        print(f"source fetches of the shared repository: {daemon.sources.fetch_count('bench/many')} "
              f"over {time.monotonic() - t0:.0f} s for {len(keys)} objects")
        print()
        print(
            f"SUMMARY steady-state {steady:.3f} s / {steady2:.3f} s (target <= 1 s), "
            f"change sets {steady_cs}; "
            f"per-object describe {flux_like:.3f} s; naive {naive_time:.3f} s; "
            f"commit->updated {latency:.2f} s (target <= {5 + deploy_time:.2f} s)"
        )
        daemon.stop()
        thread.join(timeout=60)
    finally:
        local.stop()


if __name__ == "__main__":
    sys.exit(main())
