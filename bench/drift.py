"""Drift benchmark: `formwright drift` vs sceptre's `drift detect` on the same 50 stacks, one local cloud.

Deploys N stacks (default 50, 5 resources each: two queues, a topic, two SSM parameters) with formwright,
untimed, under the names sceptre gives its stacks (`sc-bench-s<i>`), changes one SSM parameter of every
tenth stack out of band (boto3), then times, alternately and `--rounds` times (best kept):

- `formwright drift DIR --output json`: a detection per stack, in parallel, each polled at the engine's
  cadence, then each stack's resources counted by drift status (ListStackResources: NOT_CHECKED is only
  there) and a drifted stack's drifted resources read (DescribeStackResourceDrifts);
- `sceptre drift detect bench`: the same stacks, sceptre's own concurrency;
- `sceptre drift show bench` (sceptre's detect again, then the resource drifts), for reference.

First on the local cloud as it is (a detection is complete when DetectStackDrift returns, so nobody waits),
then through tests/aws/fault_proxy.py with each detection DETECTION_IN_PROGRESS for each of `--detection`
seconds in turn (one proxy each), as CloudFormation detects asynchronously (formwright at AWS's cadence;
sceptre polls every 10 s).

Both tools must find the same drifted stacks; the ratio sceptre / formwright is printed (target >= 5x).
Each tool runs as its own process (each pays its own start-up).

What bounds the ratio: with detections finishing at once both tools make about the same calls to one
server and pay a Python start-up, so they take about the same time; with detections taking D seconds
sceptre's first status read finds each in progress and sleeps 10 s, so it takes about start-up + 10 s
(for any D up to 10 s) where formwright takes about start-up + D + the detections' start and reads: the
ratio is at most (start-up + 10 s) / (start-up + D), which is why it is printed for several D. The proxy
adds a few ms a call (it answered ~40 ms late until it set TCP_NODELAY: Nagle against delayed ACKs); AWS's
own calls take tens of ms, which formwright pays on its status reads and listings of 50 stacks, so the
ratio against AWS is lower than here.

    .venv/bin/python bench/drift.py [--stacks 50] [--rounds 2] [--concurrency 8] [--detection 1,2,5]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from deploy import FW, TEMPLATE, cloud_env, ensure_sceptre, load_fault_proxy, timed


def make_projects(root: Path, count: int) -> tuple[Path, Path]:
    """The formwright project and the sceptre project of the same stacks (same CloudFormation names)."""
    fw = root / "formwright"
    fw.mkdir()
    (fw / "stack.json").write_text(json.dumps(TEMPLATE))
    lines = ["name: sc-bench", "stacks:"] + [f"  s{i}:\n    template: stack.json" for i in range(count)]
    (fw / "formwright.yaml").write_text("\n".join(lines) + "\n")
    sc = root / "sceptre"
    (sc / "config" / "bench").mkdir(parents=True)
    (sc / "templates").mkdir()
    (sc / "templates" / "stack.json").write_text(json.dumps(TEMPLATE))
    (sc / "config" / "config.yaml").write_text("project_code: sc\nregion: us-east-1\n")
    for i in range(count):
        (sc / "config" / "bench" / f"s{i}.yaml").write_text("template:\n  path: stack.json\n")
    return fw, sc


def drift_out_of_band(endpoint: str, count: int) -> list[str]:
    """Change ParamA of every tenth stack with boto3; the stacks changed."""
    import boto3

    kwargs = {"endpoint_url": endpoint, "region_name": "us-east-1", "aws_access_key_id": "bench",
              "aws_secret_access_key": "bench"}
    ssm = boto3.client("ssm", **kwargs)
    changed = []
    for i in range(0, count, 10):
        ssm.put_parameter(Name=f"/sc-bench-s{i}/a", Value="changed by hand", Type="String", Overwrite=True)
        changed.append(f"s{i}")
    return changed


def run(argv: list[str], env: dict[str, str]) -> tuple[float, str, int]:
    """Wall time, stdout and exit code (drift exits 1 when something drifted)."""
    import time

    start = time.perf_counter()
    proc = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=1800)
    wall = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(argv[:4])} failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    return wall, proc.stdout, proc.returncode


def compare(env: dict[str, str], fw_project: Path, sc_project: Path, sceptre: Path, changed: list[str],
            args: argparse.Namespace) -> dict[str, float]:
    """Best wall time of each tool over the rounds, run alternately; both must find the drifted stacks."""
    fw_argv = [*FW, "drift", str(fw_project), "--output", "json", "--max-concurrency", str(args.concurrency)]
    sc = [str(sceptre), "--dir", str(sc_project), "--output", "json", "drift"]
    best: dict[str, float] = {}
    for _ in range(args.rounds):
        for name, argv in (("formwright drift", fw_argv), ("sceptre drift detect", [*sc, "detect", "bench"]),
                           ("sceptre drift show", [*sc, "show", "bench"])):
            wall, out, code = run(argv, env)
            best[name] = min(best.get(name, wall), wall)
            if name == "formwright drift":
                found = sorted(json.loads(out)["drifted"])
                assert code == 1 and found == sorted(changed), (code, found, changed)
            elif name == "sceptre drift detect":
                drifted = sum('"DRIFTED"' in line for line in out.splitlines())
                assert drifted >= len(changed), out[-2000:]
    return best


def report(title: str, best: dict[str, float]) -> None:
    """The walls and the ratios."""
    print(f"\n{title}")
    for name, wall in best.items():
        print(f"  {name:<22}{wall:>8.2f} s")
    fw = best["formwright drift"]
    detect = best["sceptre drift detect"] / fw
    print(f"  sceptre drift detect / formwright drift: {detect:.1f}x   (target >= 5x)")
    print(f"  sceptre drift show / formwright drift:   {best['sceptre drift show'] / fw:.1f}x")


def seconds_list(text: str) -> list[float]:
    """`1,2,5` as seconds (argparse's type: a bad one is its usage error)."""
    try:
        values = [float(part) for part in text.split(",") if part.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: comma-separated seconds, e.g. 1,2,5") from None
    if not values or any(v < 0 for v in values):
        raise argparse.ArgumentTypeError(f"{text!r}: comma-separated seconds >= 0, e.g. 1,2,5")
    return values


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stacks", type=int, default=50)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--detection", type=seconds_list, default=[1.0, 2.0, 5.0], metavar="SECONDS,...",
                        help="AWS-like runs: seconds a drift detection stays in progress, comma-separated, "
                             "one run each (0: no such run).")
    args = parser.parse_args()
    from formwright.cloud import local

    sceptre = ensure_sceptre()
    results = {}
    aws_like: dict[float, dict[str, float]] = {}  # detection seconds -> best walls
    with tempfile.TemporaryDirectory(prefix="fw-bench-drift-") as tmp:
        root = Path(tmp)
        os.environ["FORMWRIGHT_HOME"] = str(root / "home")
        cloud, _ = local.start()
        try:
            env = cloud_env(cloud.endpoint)
            fw_project, sc_project = make_projects(root, args.stacks)
            timed([*FW, "deploy", str(fw_project), "-y", "--output", "json", "--max-concurrency", "8"], env)
            changed = drift_out_of_band(cloud.endpoint, args.stacks)
            results["local cloud (detections finish at once)"] = compare(env, fw_project, sc_project, sceptre,
                                                                         changed, args)
            proxy_module = load_fault_proxy()
            for detection in (d for d in args.detection if d):
                faults = proxy_module.Faults(stale_after_execute=False, drift_in_progress=detection)
                with proxy_module.FaultProxy(cloud.endpoint, faults) as proxy:
                    title = (f"AWS-like: through tests/aws/fault_proxy.py, each detection in progress for "
                             f"{detection:g} s (formwright at AWS's cadence)")
                    aws_env = cloud_env(proxy.endpoint, target="aws")
                    results[title] = aws_like[detection] = compare(aws_env, fw_project, sc_project, sceptre,
                                                                   changed, args)
        finally:
            local.stop()
    print(f"\n{args.stacks} stacks x 5 resources, {len(changed)} drifted, best of {args.rounds}, "
          "one local cloud")
    for title, best in results.items():
        report(title, best)
    if aws_like:
        ratios = ", ".join(f"{d:g} s: {best['sceptre drift detect'] / best['formwright drift']:.1f}x"
                           for d, best in aws_like.items())
        print(f"\nAWS-like, sceptre drift detect / formwright drift by detection time: {ratios}   "
              "(target >= 5x; sceptre sleeps 10 s whatever the time, formwright waits about the time)")


if __name__ == "__main__":
    main()
