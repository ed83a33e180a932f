"""Scale benchmark (issue 29): formwright against the raw boto3 floor at 50, 200 and 1,000 stacks, in one run.

bench/deploy.py's project (5 resources a stack, a DAG of depth 5) at each size. Each tool deploys on a
fresh, warmed local cloud of its own (moto's DescribeStacks scans every stack it holds: a tool run second
on a shared cloud would pay for the first one's stacks), then re-deploys with no change. At the largest
size formwright also plans the unchanged project and `validate --no-lint` loads it. Printed, each with its
target and PASS/MISS:

- deploy, formwright / floor, at every size (target <= 1.0x);
- the no-op re-deploy: wall time and write calls (<= 0.5 s at 50, <= 2 s at 1,000, 0 writes);
- the plan of the unchanged largest project (<= 2 s) and its `validate --no-lint` (<= 0.5 s);
- the resident memory of formwright's largest deploy (goal <= 300 MB).

Beside every time: the CPU seconds of the tool's process and of the local cloud's during it, so that a
loaded machine (the load average is printed) and the local cloud's share are seen, not guessed.

    .venv/bin/python bench/scale.py [--sizes 50,200,1000] [--concurrency 8] [--moto-reads]

`--moto-reads` starts the local clouds with their fast path for the hot reads off
(FORMWRIGHT_LOCAL_CLOUD_FAST_READS=0, docs/local-cloud.md "Hot reads"): every read through moto's own
routing and serializer, as before issue 29's third pass, for a comparison.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from startup import compile_bytecode

from deploy import FLOOR, FW, TEMPLATE, cloud_env, make_formwright, warm_up

TICKS = os.sysconf("SC_CLK_TCK")


@dataclass
class Run:
    """One process's wall time, CPU time (user + system), peak resident memory and stdout, with the local
    cloud's CPU time over the same span."""

    wall: float
    cpu: float
    rss_mb: float
    out: str
    cloud_cpu: float = 0.0


def process_cpu(pid: int) -> float:
    """CPU seconds (user + system) the process `pid` has used so far (/proc/PID/stat)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def measured(argv: list[str], env: dict[str, str], cloud_pid: int | None = None) -> Run:
    """Run a command to its end (it must succeed): its wall and CPU time and peak memory (reaped here with
    wait4), and the local cloud's (`cloud_pid`) CPU time over the same span."""
    cloud_before = process_cpu(cloud_pid) if cloud_pid else 0.0
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        start = time.perf_counter()
        proc = subprocess.Popen(argv, env=env, stdout=out, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv[:4])} failed ({proc.returncode}):\n{(stderr or stdout)[-3000:]}")
    cloud = process_cpu(cloud_pid) - cloud_before if cloud_pid else 0.0
    return Run(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, stdout, cloud)


def on_fresh_cloud(root: Path, label: str, work) -> dict[str, Run]:
    """`work(env, cloud_pid)` against a local cloud of its own, started and warmed first, stopped after."""
    from formwright.cloud import local

    os.environ["FORMWRIGHT_HOME"] = str(root / f"home-{label}")
    cloud, _ = local.start()
    try:
        warm_up(cloud.endpoint)
        return work(cloud_env(cloud.endpoint), cloud.pid)
    finally:
        local.stop()


def floor_runs(root: Path, count: int, concurrency: int) -> dict[str, Run]:
    """The boto3 floor's deploy and no-op re-deploy of `count` stacks."""
    def work(env: dict[str, str], pid: int) -> dict[str, Run]:
        argv = [sys.executable, "-c", FLOOR, env["AWS_ENDPOINT_URL"], str(count), str(max(1, count // 5)),
                str(concurrency), json.dumps(TEMPLATE)]
        return {"deploy": measured(argv, env, pid), "noop": measured(argv, env, pid)}

    return on_fresh_cloud(root, f"floor-{count}", work)


def formwright_runs(root: Path, count: int, concurrency: int, largest: bool) -> dict[str, Run]:
    """formwright's deploy and no-op of `count` stacks; at the largest size its plan and validate too."""
    folder = root / f"fw-{count}"
    folder.mkdir()
    project = make_formwright(folder, count)

    def work(env: dict[str, str], pid: int) -> dict[str, Run]:
        deploy = [*FW, "deploy", str(project), "-y", "--output", "json",
                  "--max-concurrency", str(concurrency)]
        runs = {"deploy": measured(deploy, env, pid), "noop": measured(deploy, env, pid)}
        if largest:
            runs["plan"] = measured([*FW, "plan", str(project), "--output", "json", "--max-concurrency",
                                     str(concurrency)], env, pid)
            runs["validate"] = measured([*FW, "validate", str(project), "--no-lint"], env)
        return runs

    return on_fresh_cloud(root, f"fw-{count}", work)


def verdict(ok: bool) -> str:
    """PASS or MISS."""
    return "PASS" if ok else "MISS"


def load_average() -> str:
    """The 1-minute load average and the CPU count: what else the machine was doing."""
    return f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs"


def report(sizes: list[int], floors: dict[int, dict[str, Run]], fws: dict[int, dict[str, Run]]) -> None:
    """The table and every target with PASS/MISS."""
    print(f"\n{'stacks':>7}  {'tool':<11}{'deploy s':>9}{'cpu s':>7}{'cloud cpu':>10}"
          f"{'no-op s':>9}{'cpu s':>7}{'cloud cpu':>10}{'rss MB':>8}")
    for n in sizes:
        for name, row in (("boto3 floor", floors[n]), ("formwright", fws[n])):
            d, z = row["deploy"], row["noop"]
            print(f"{n:>7}  {name:<11}{d.wall:>9.2f}{d.cpu:>7.2f}{d.cloud_cpu:>10.2f}"
                  f"{z.wall:>9.2f}{z.cpu:>7.2f}{z.cloud_cpu:>10.2f}{d.rss_mb:>8.0f}")
    print("\n(cpu s: the tool's own process; cloud cpu: the local cloud's over the same run)")
    print("\ntargets:")
    for n in sizes:
        fw, floor = fws[n]["deploy"], floors[n]["deploy"]
        ratio = fw.wall / floor.wall
        share = fw.cloud_cpu / (fw.cloud_cpu + fw.cpu) if fw.cloud_cpu + fw.cpu else 0.0
        cloud_ratio = fw.cloud_cpu / floor.cloud_cpu if floor.cloud_cpu else 0.0
        print(f"  deploy {n:>5} stacks: formwright / floor {ratio:.2f}x (target <= 1.0x) "
              f"{verdict(ratio <= 1.0)}"
              f"   [local cloud's share of the CPU in formwright's run: {share:.0%}; the cloud's CPU for "
              f"formwright / for the floor: {cloud_ratio:.2f}x]")
    for n in sizes:
        noop = fws[n]["noop"]
        writes = json.loads(noop.out)["write_calls"]
        limit = {50: 0.5, 1000: 2.0}.get(n)
        target = f"(target <= {limit} s, 0 writes) {verdict(noop.wall <= limit and writes == 0)}" if limit \
            else f"(0 writes) {verdict(writes == 0)}"
        print(f"  no-op  {n:>5} stacks: {noop.wall:.2f} s, {writes} write calls {target}")
    largest = max(sizes)
    plan, validate = fws[largest]["plan"], fws[largest]["validate"]
    kinds = {p["kind"] for p in json.loads(plan.out)["plans"].values()} if plan.out.strip() else set()
    print(f"  plan   {largest:>5} unchanged stacks: {plan.wall:.2f} s ({plan.cpu:.2f} s CPU, the local cloud "
          f"{plan.cloud_cpu:.2f} s; kinds {sorted(kinds)}) (target <= 2 s) {verdict(plan.wall <= 2.0)}")
    print(f"  validate --no-lint {largest} stacks: {validate.wall:.2f} s ({validate.cpu:.2f} s CPU) "
          f"(target <= 0.5 s) {verdict(validate.wall <= 0.5)}")
    rss = fws[largest]["deploy"].rss_mb
    print(f"  resident memory of the {largest}-stack deploy: {rss:.0f} MB (goal <= 300 MB) "
          f"{verdict(rss <= 300)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="50,200,1000", help="Stack counts, comma-separated.")
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--moto-reads", action="store_true",
                        help="The local clouds without their fast path for the hot reads.")
    args = parser.parse_args()
    if args.moto_reads:
        os.environ["FORMWRIGHT_LOCAL_CLOUD_FAST_READS"] = "0"  # read by the local clouds this starts
    sizes = sorted(int(s) for s in args.sizes.split(","))
    compile_bytecode()  # as `pip install` does (PYTHONDONTWRITEBYTECODE would recompile on every run)
    print(f"start: {load_average()}; hot reads through "
          f"{'moto' if args.moto_reads else 'the fast path'}", flush=True)
    began = time.perf_counter()
    floors: dict[int, dict[str, Run]] = {}
    fws: dict[int, dict[str, Run]] = {}
    with tempfile.TemporaryDirectory(prefix="fw-bench-scale-") as tmp:
        root = Path(tmp)
        for n in sizes:
            floors[n] = floor_runs(root, n, args.concurrency)
            fws[n] = formwright_runs(root, n, args.concurrency, largest=n == max(sizes))
            print(f"{n} stacks: floor deploy {floors[n]['deploy'].wall:.2f} s, formwright deploy "
                  f"{fws[n]['deploy'].wall:.2f} s ({load_average()})", flush=True)
    report(sizes, floors, fws)
    print(f"\nend: {load_average()}; the whole run took {time.perf_counter() - began:.0f} s")


if __name__ == "__main__":
    main()
