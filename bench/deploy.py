"""Deploy benchmark: formwright vs sceptre vs a raw boto3 floor, on one fresh local cloud.

Generates N stacks (default 50, 5 resources each, a DAG of depth 5: stack i takes an output of
stack i-N/5), deploys them with each tool, then re-deploys with no change, and prints a table and
the ratios. Targets (issue 2): full deploy >= 20x faster than sceptre and <= 1.5x the floor; a
no-op re-deploy of 50 stacks in <= 1 s with zero write calls.

    .venv/bin/python bench/deploy.py [--stacks 50] [--concurrency 8] [--skip-sceptre]
    .venv/bin/python bench/deploy.py --aws-like [--throttle 0.05] [--server-errors 0.02]
    .venv/bin/python bench/deploy.py --baseline-rev 977f495 [--rounds 3] [--target 1.2]

`--aws-like` runs the same DAG through tests/aws/fault_proxy.py, which answers like AWS: change sets
CREATE_PENDING for 1 s, stacks *_IN_PROGRESS for 2 s after an execution, a stale DescribeStacks right
after it. It prints formwright's wall time (process start to exit, as a user sees it) against the
DAG's critical path (the sum of those timings along its longest chain of `!ref`s) and against the floor
(that path with the local cloud's and the proxy's own answer times on it: what no client beats here),
sceptre's, and CloudFormation calls per stack; then where formwright's time beyond the critical path
went, from the proxy's record of every call: start-up to the first CreateChangeSet, each step between a
change set's timings along a chain (the cadence's lag in seeing an end, and formwright's own time from
seeing it to the next call), and exit after the last stack was done. The local cloud is warmed first
(one stack made and deleted, untimed): moto's first-use loading is no cost of AWS's; formwright's
bytecode is compiled first, as `pip install` does. Targets (issue 29): wall <= 1.05x the critical path;
start-up <= 0.25 s; a change set executed, and a dependent's CreateChangeSet made, within 20 ms of
the read that saw the end; <= 1 read per second per stack on average.

`--baseline-rev REV` checks REV out into a temporary git worktree and runs formwright's deploy and
no-op from that tree and from this one, alternately (`--rounds`), each on its own fresh local cloud,
and prints the median and best of each and this tree's time over REV's (the machine's load with each
round). Targets: <= 1.2x REV 977f495 (issue 9, the last commit before the CloudFormation emulator);
<= 1.1x REV c51a557 (`--target 1.1`, issue 30: main before its local-cloud work was merged).

sceptre is installed into bench/.venv-sceptre on first use and pointed at the local cloud with
AWS_ENDPOINT_URL. Every tool runs as its own process, so each pays its own start-up.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
SCEPTRE_VENV = HERE / ".venv-sceptre"
FW = [sys.executable, "-m", "formwright"]

TEMPLATE = {
    "Parameters": {"Upstream": {"Type": "String", "Default": "root"}},
    "Resources": {
        "QueueA": {"Type": "AWS::SQS::Queue"},
        "QueueB": {"Type": "AWS::SQS::Queue"},
        "Topic": {"Type": "AWS::SNS::Topic"},
        "ParamA": {
            "Type": "AWS::SSM::Parameter",
            "Properties": {
                "Type": "String",
                "Name": {"Fn::Sub": "/${AWS::StackName}/a"},
                "Value": {"Ref": "Upstream"},
            },
        },
        "ParamB": {
            "Type": "AWS::SSM::Parameter",
            "Properties": {
                "Type": "String",
                "Name": {"Fn::Sub": "/${AWS::StackName}/b"},
                "Value": {"Fn::GetAtt": ["QueueA", "Arn"]},
            },
        },
    },
    "Outputs": {"Chain": {"Value": {"Fn::Sub": "${Upstream}/${AWS::StackName}"}}},
}


def upstream(i: int, count: int) -> int | None:
    """The stack whose output stack i takes (depth 5: five layers of count/5)."""
    width = max(1, count // 5)
    return i - width if i >= width else None


def longest_chain(count: int) -> int:
    """How many stacks the DAG's longest chain of `upstream` references holds."""
    depth: dict[int, int] = {}
    for i in range(count):  # an upstream always has a smaller index
        up = upstream(i, count)
        depth[i] = 1 + (depth[up] if up is not None else 0)
    return max(depth.values(), default=0)


def make_formwright(root: Path, count: int, upstream_of: Callable[[int], int | None] | None = None,
                    name: str = "fw") -> Path:
    """A formwright project `name` of `count` stacks, stack i taking the output of `upstream_of(i)`
    (default: `upstream`, the depth-5 DAG), in root/formwright."""
    project = root / "formwright"
    project.mkdir()
    (project / "stack.json").write_text(json.dumps(TEMPLATE))
    lines = [f"name: {name}", "stacks:"]
    for i in range(count):
        lines.append(f"  s{i}:\n    template: stack.json")
        up = upstream_of(i) if upstream_of else upstream(i, count)
        if up is not None:
            lines.append(f"    parameters:\n      Upstream: !ref s{up}.outputs.Chain")
    (project / "formwright.yaml").write_text("\n".join(lines) + "\n")
    return project


def make_sceptre(root: Path, count: int, region: str) -> Path:
    """The same project as a sceptre project."""
    project = root / "sceptre"
    (project / "config" / "bench").mkdir(parents=True)
    (project / "templates").mkdir()
    (project / "templates" / "stack.json").write_text(json.dumps(TEMPLATE))
    (project / "config" / "config.yaml").write_text(f"project_code: sc\nregion: {region}\n")
    for i in range(count):
        text = "template:\n  path: stack.json\n"
        up = upstream(i, count)
        if up is not None:
            text += f"parameters:\n  Upstream: !stack_output bench/s{up}.yaml::Chain\n"
        (project / "config" / "bench" / f"s{i}.yaml").write_text(text)
    return project


def ensure_sceptre() -> Path:
    """bench/.venv-sceptre/bin/sceptre, installed from PyPI if missing."""
    binary = SCEPTRE_VENV / "bin" / "sceptre"
    if not binary.exists():
        subprocess.run([sys.executable, "-m", "venv", str(SCEPTRE_VENV)], check=True)
        subprocess.run([str(SCEPTRE_VENV / "bin" / "pip"), "install", "-q", "sceptre"], check=True)
    return binary


def timed(argv: list[str], env: dict[str, str], cwd: Path | None = None) -> tuple[float, str]:
    """Run a command; return its wall time and stdout; fail loudly if it fails."""
    start = time.perf_counter()
    proc = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True, timeout=1800)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        said = proc.stderr[-3000:] or proc.stdout[-3000:]  # --output json answers on stdout
        raise SystemExit(f"{' '.join(argv[:4])} failed ({proc.returncode}):\n{said}")
    return wall, proc.stdout


FLOOR = r"""
import json, sys, time, boto3, graphlib
from concurrent.futures import ThreadPoolExecutor, FIRST_COMPLETED, wait
from botocore.config import Config
endpoint, body = sys.argv[1], sys.argv[5]
count, width, concurrency = int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
cf = boto3.client("cloudformation", endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id="x",
                  aws_secret_access_key="x", config=Config(max_pool_connections=32))
writes = 0
graph = {i: ({i - width} if i >= width else set()) for i in range(count)}
outputs = {}
def one(i):
    global writes
    params = [{"ParameterKey": "Upstream", "ParameterValue": outputs[i - width]}] if i >= width else []
    name = f"floor-s{i}"
    try:
        cf.describe_stacks(StackName=name)
        exists = True
    except cf.exceptions.ClientError:
        exists = False
    try:
        writes += 1
        (cf.update_stack if exists else cf.create_stack)(StackName=name, TemplateBody=body, Parameters=params)
    except cf.exceptions.ClientError as err:
        if "No updates" not in str(err):
            raise
    delay = 0.1
    while True:
        stack = cf.describe_stacks(StackName=name)["Stacks"][0]
        if not stack["StackStatus"].endswith("IN_PROGRESS"):
            break
        time.sleep(delay); delay = min(5, delay * 1.6)
    return i, {o["OutputKey"]: o["OutputValue"] for o in stack.get("Outputs", [])}["Chain"]
sorter = graphlib.TopologicalSorter(graph); sorter.prepare()
with ThreadPoolExecutor(concurrency) as pool:
    running = set()
    while sorter.is_active():
        for i in sorter.get_ready():
            running.add(pool.submit(one, i))
        done, running = wait(running, return_when=FIRST_COMPLETED)
        for f in done:
            i, chain = f.result(); outputs[i] = chain; sorter.done(i)
print(json.dumps({"writes": writes}))
"""


# a raw boto3 script's start-up: process start to its first CreateChangeSet (the floor of any Python client's)
STARTUP_FLOOR = r"""
import os, sys, boto3
cf = boto3.client("cloudformation")
cf.create_change_set(StackName=sys.argv[1], ChangeSetName="floor", ChangeSetType="CREATE",
                     TemplateBody=sys.argv[2])
os._exit(0)
"""

READS = ("describe", "list", "get")
CHANGE_SET_PENDING, STACK_IN_PROGRESS = 1.0, 2.0


def load_fault_proxy():
    """tests/aws/fault_proxy.py, the proxy the tests use (loaded by path: tests/ is not a package)."""
    import importlib.util

    path = HERE.parent / "tests" / "aws" / "fault_proxy.py"
    spec = importlib.util.spec_from_file_location("fault_proxy", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["fault_proxy"] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def reads(calls: dict[str, int]) -> int:
    """How many of `calls` (CloudFormation actions -> count) only read."""
    return sum(n for op, n in calls.items() if op.lower().startswith(READS))


def warm_up(endpoint: str) -> None:
    """Create and delete one stack of the template on the fresh local cloud, untimed: moto loads its
    CloudFormation, SQS, SNS and SSM parts on first use (over a second), a cost AWS does not have."""
    import boto3

    cfn = boto3.client("cloudformation", endpoint_url=endpoint, region_name="us-east-1",
                       aws_access_key_id="bench", aws_secret_access_key="bench")
    made = cfn.create_change_set(StackName="warm-up", ChangeSetName="warm-up", ChangeSetType="CREATE",
                                 TemplateBody=json.dumps(TEMPLATE))
    cfn.execute_change_set(ChangeSetName=made["Id"])
    cfn.describe_stacks(StackName=made["StackId"])
    cfn.delete_stack(StackName=made["StackId"])


def aws_like(args: argparse.Namespace) -> None:
    """The DAG through the fault proxy with AWS-like timings; formwright vs the critical path and sceptre."""
    from startup import compile_bytecode  # bench/ is the script's folder: the one bytecode helper

    from formwright.cloud import local

    compile_bytecode()
    proxy_module = load_fault_proxy()
    depth = longest_chain(args.stacks)
    critical = depth * (CHANGE_SET_PENDING + STACK_IN_PROGRESS)
    rows: dict[str, dict[str, float | int | str]] = {}
    with tempfile.TemporaryDirectory(prefix="fw-bench-aws-") as tmp:
        root = Path(tmp)
        os.environ["FORMWRIGHT_HOME"] = str(root / "home")
        cloud, _ = local.start()
        warm_up(cloud.endpoint)
        faults = proxy_module.Faults(stale_after_execute=True, change_set_pending=CHANGE_SET_PENDING,
                                     stack_in_progress=STACK_IN_PROGRESS, throttle=args.throttle,
                                     server_errors=args.server_errors)
        try:
            with proxy_module.FaultProxy(cloud.endpoint, faults) as proxy:
                env = cloud_env(proxy.endpoint, target="aws")
                project = make_formwright(root, args.stacks)
                deploy = [*FW, "deploy", str(project), "-y", "--output", "json",
                          "--max-concurrency", str(args.concurrency)]
                proxy.timeline.clear()
                began = time.monotonic()
                wall, out = timed(deploy, env)
                result = json.loads(out)
                assert result["ok"], "formwright's deploy failed through the proxy"
                where, floor = where_time_went(proxy, began, wall, args.stacks)
                calls = dict(proxy.calls)
                rows["formwright"] = {"wall": wall, "calls": sum(calls.values()), "reads": reads(calls)}
                injected = dict(proxy.injected)
                floor_start = startup_floor(proxy, env)
                if not args.skip_sceptre:
                    proxy.calls.clear()
                    sceptre = ensure_sceptre()
                    sc_project = make_sceptre(root, args.stacks, "us-east-1")
                    launch = [str(sceptre), "--dir", str(sc_project), "launch", "-y",
                              "--max-concurrency", str(args.concurrency), "bench"]
                    wall, _ = timed(launch, env)
                    calls = dict(proxy.calls)
                    rows["sceptre"] = {"wall": wall, "calls": sum(calls.values()), "reads": reads(calls)}
        finally:
            local.stop()

    print(f"\n{args.stacks} stacks, DAG depth {depth}, concurrency {args.concurrency}, "
          "through the fault proxy:"
          "\n"
          f"change sets pending {CHANGE_SET_PENDING:.0f} s, stacks in progress {STACK_IN_PROGRESS:.0f} s, "
          f"stale read after each execution, throttle {args.throttle:.0%}, 5xx {args.server_errors:.0%}")
    print(f"injected: {injected}")
    print("load average (1, 5, 15 min) at the end: " + ", ".join(f"{n:.2f}" for n in os.getloadavg())
          + f" on {os.cpu_count()} cores: the wall times scale with it")
    print(f"critical path: {critical:.1f} s (depth x (change set + stack))\n")
    print(f"{'tool':<12}{'wall s':>9}{'x critical':>12}{'calls/stack':>13}{'reads/stack':>13}"
          f"{'reads/s/stack':>15}")
    for name, row in rows.items():
        wall_s = float(row["wall"])
        per_stack = float(row["reads"]) / args.stacks
        print(f"{name:<12}{wall_s:>9.2f}{wall_s / critical:>12.2f}{float(row['calls']) / args.stacks:>13.1f}"
              f"{per_stack:>13.1f}{per_stack / wall_s:>15.2f}")
    fw = rows["formwright"]
    print(f"\nformwright wall / critical path: {float(fw['wall']) / critical:.2f}x   (target <= 1.05x)")
    print(f"formwright wall / floor (the critical path with the local cloud's answer times on it, "
          f"{floor:.2f} s): {float(fw['wall']) / floor:.2f}x")
    print(f"formwright reads per second per stack (over the run): "
          f"{float(fw['reads']) / args.stacks / float(fw['wall']):.2f}   (target <= 1)")
    print("\nwhere formwright's time beyond the critical path went (from the proxy's record of its calls):")
    for line in where:
        print("  " + line)
    print(f"  (a raw boto3 script's start-up to its first CreateChangeSet, same proxy, best of 3: "
          f"{floor_start:.3f} s: `import boto3`, a client, one call)")
    if "sceptre" in rows:
        print("sceptre uses CreateStack/UpdateStack (no change sets): its critical path is "
              f"{depth * STACK_IN_PROGRESS:.1f} s; sceptre / formwright wall: "
              f"{float(rows['sceptre']['wall']) / float(fw['wall']):.2f}x")


def startup_floor(proxy: Any, env: dict[str, str], runs: int = 3) -> float:
    """The best of `runs` starts of STARTUP_FLOOR: from its process's start to its CreateChangeSet's
    arrival at the proxy."""
    best = float("inf")
    for i in range(runs):
        proxy.timeline.clear()
        began = time.monotonic()
        subprocess.run([sys.executable, "-c", STARTUP_FLOOR, f"floor-start-{i}", json.dumps(TEMPLATE)],
                       env=env, check=True)
        arrivals = [arrived for arrived, _, action, _, _ in proxy.timeline if action == "CreateChangeSet"]
        best = min(best, min(arrivals) - began)
    return best


def where_time_went(proxy: Any, began: float, wall: float, count: int) -> tuple[list[str], float]:
    """Where the deploy's wall time beyond the critical path went, from the proxy's timeline (monotonic
    arrival and reply of every CloudFormation call, with the stack or change set it names), and the floor:
    the critical path with the local cloud's and the proxy's own answer times along the longest chain
    (CreateChangeSet and ExecuteChangeSet are synchronous there; on AWS they answer in tens of ms), which
    no client can beat against this cloud.

    Per stack: CreateChangeSet's answer time; the change set's end to the first DescribeChangeSet that
    saw it (the polling cadence: no event tells a client); from that read's reply to ExecuteChangeSet's
    arrival (formwright's own time); ExecuteChangeSet's answer time; the stack's end to the first read
    that saw it (its own by id, else a listing: the cadence again); from that read's reply to each
    dependent's CreateChangeSet (formwright's own time, a listing's parsing included). Start-up runs to
    the first CreateChangeSet, exit from the last stack's end. A read sees the end when the proxy
    answered it after the end (it judges just before replying)."""
    calls: dict[str, dict[str, tuple[float, float]]] = {}
    change_set_reads: dict[str, list[float]] = {}  # stack -> replies of DescribeChangeSet
    stack_reads: dict[str, list[float]] = {}  # stack ("" a listing) -> replies of DescribeStacks
    for arrived, replied, action, key, status in proxy.timeline:
        if status != 200:
            continue
        if action in ("CreateChangeSet", "ExecuteChangeSet"):
            calls.setdefault(proxy.stack_of(key), {})[action] = (arrived - began, replied - began)
        elif action == "DescribeChangeSet":
            change_set_reads.setdefault(proxy.stack_of(key), []).append(replied - began)
        elif action == "DescribeStacks":
            stack_reads.setdefault(proxy.stack_of(key) if key else "", []).append(replied - began)
    names = ("CreateChangeSet answered (local cloud + proxy)", "change set ready -> seen (cadence)",
             "change set seen ready -> ExecuteChangeSet (formwright)",
             "ExecuteChangeSet answered (local cloud + proxy)", "stack done -> seen (cadence)",
             "stack seen done -> dependent's CreateChangeSet (formwright)")
    steps: dict[str, list[float]] = {name: [] for name in names}
    done_at: dict[int, float] = {}
    seen_at: dict[int, float] = {}
    floor_at: dict[int, float] = {}  # when stack i would end for a client with no time of its own
    for i in range(count):
        name = f"fw-s{i}"
        mine = calls[name]
        (ccs_in, ccs_out), (ex_in, ex_out) = mine["CreateChangeSet"], mine["ExecuteChangeSet"]
        ready = ccs_out + CHANGE_SET_PENDING
        seen_ready = min((t for t in change_set_reads.get(name, []) if t >= ready), default=ex_in)
        steps[names[0]].append(ccs_out - ccs_in)
        steps[names[1]].append(seen_ready - ready)
        steps[names[2]].append(ex_in - seen_ready)
        steps[names[3]].append(ex_out - ex_in)
        done_at[i] = ex_out + STACK_IN_PROGRESS
        # the read the wait took the end from: its own by id when it read so after the end (in its
        # window, or alone), else the listing (a listing still in flight may show it first, unread by it)
        by_id = [t for t in stack_reads.get(name, []) if t >= done_at[i]]
        listed = [t for t in stack_reads.get("", []) if t >= done_at[i]]
        seen_at[i] = min(by_id or listed or [done_at[i]])
        up = upstream(i, count)
        floor_at[i] = (floor_at[up] if up is not None else 0.0) + (ccs_out - ccs_in) + CHANGE_SET_PENDING \
            + (ex_out - ex_in) + STACK_IN_PROGRESS
        if up is not None:
            steps[names[4]].append(seen_at[up] - done_at[up])
            steps[names[5]].append(ccs_in - seen_at[up])
    first = min(c["CreateChangeSet"][0] for c in calls.values())
    lines = [f"start-up (process start to the first CreateChangeSet): {first:.3f} s   (target <= 0.25 s)"]
    targets = {names[2]: "   (target <= 0.020 s)", names[5]: "   (target <= 0.020 s)"}
    lines += [f"{name}: mean {sum(v) / len(v):.3f} s, max {max(v):.3f} s (per stack){targets.get(name, '')}"
              for name, v in steps.items() if v]
    lines.append(f"exit after the last stack was done: {wall - max(done_at.values()):.2f} s")
    return lines, max(floor_at.values())


def cloud_env(endpoint: str, target: str = "local") -> dict[str, str]:
    """The environment every tool runs with: the endpoint and throwaway credentials."""
    env = {**os.environ, "FORMWRIGHT_TARGET": target, "AWS_ENDPOINT_URL": endpoint,
           "AWS_ACCESS_KEY_ID": "bench", "AWS_SECRET_ACCESS_KEY": "bench",
           "AWS_DEFAULT_REGION": "us-east-1", "AWS_REGION": "us-east-1"}
    env.pop("AWS_PROFILE", None)
    return env


def formwright_deploys(root: Path, args: argparse.Namespace, env: dict[str, str]) -> dict[str, Any]:
    """formwright's deploy of the DAG, then its no-op re-deploy: wall times and the no-op's calls."""
    project = make_formwright(root, args.stacks)
    deploy = [*FW, "deploy", str(project), "-y", "--output", "json",
              "--max-concurrency", str(args.concurrency)]
    wall, out = timed(deploy, env)
    assert json.loads(out)["ok"]
    again, out2 = timed(deploy, env)
    noop = json.loads(out2)
    return {"deploy": wall, "noop": again, "noop_writes": noop["write_calls"],
            "noop_calls": sum(noop["calls"].values())}


def formwright_row(root: Path, args: argparse.Namespace) -> dict[str, Any]:
    """formwright_deploys on a fresh local cloud, with the file formwright was imported from."""
    import formwright
    from formwright.cloud import local

    os.environ["FORMWRIGHT_HOME"] = str(root / "home")
    cloud, _ = local.start()
    try:
        row = formwright_deploys(root, args, cloud_env(cloud.endpoint))
    finally:
        local.stop()
    return {**row, "module": str(Path(formwright.__file__).resolve())}


def against_baseline(args: argparse.Namespace) -> None:
    """This tree's formwright against `--baseline-rev`'s, alternately on fresh local clouds."""
    repo = HERE.parent
    with tempfile.TemporaryDirectory(prefix="fw-bench-base-") as tmp:
        tree = Path(tmp) / "baseline"
        subprocess.run(["git", "-C", str(repo), "worktree", "add", "--detach", "-q", str(tree),
                        args.baseline_rev], check=True)
        try:
            trees = {f"baseline {args.baseline_rev}": tree / "src", "this tree": repo / "src"}
            times: dict[str, dict[str, list[float]]] = {label: {"deploy": [], "noop": []} for label in trees}
            for _ in range(args.rounds):
                for label, src in trees.items():
                    # the child imports formwright from `src` (PYTHONPATH wins over the editable install),
                    # and so do the CLI and local-cloud processes it starts; -P keeps bench/ off its path
                    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
                        [str(src), *filter(None, [os.environ.get("PYTHONPATH")])])}
                    argv = [sys.executable, "-P", __file__, "--formwright-only", "--stacks", str(args.stacks),
                            "--concurrency", str(args.concurrency)]
                    _, out = timed(argv, env)
                    row = json.loads(out.strip().splitlines()[-1])
                    if not str(row["module"]).startswith(str(src.resolve())):
                        raise SystemExit(f"{label}: formwright was imported from {row['module']}, "
                                         f"not from {src}")
                    print(f"{label:<22} deploy {row['deploy']:6.2f} s   no-op {row['noop']:6.2f} s   "
                          f"no-op writes {row['noop_writes']}   load {os.getloadavg()[0]:.1f}", flush=True)
                    times[label]["deploy"].append(float(row["deploy"]))
                    times[label]["noop"].append(float(row["noop"]))
        finally:
            subprocess.run(["git", "-C", str(repo), "worktree", "remove", "--force", str(tree)], check=False)
    base, this = times[f"baseline {args.baseline_rev}"], times["this tree"]
    print(f"\n{args.stacks} stacks, concurrency {args.concurrency}, {args.rounds} alternated round(s) each")
    for key, name in (("deploy", "deploy"), ("noop", "no-op")):
        mid, mid_base = statistics.median(this[key]), statistics.median(base[key])
        print(f"this tree / {args.baseline_rev} ({name}): median {mid:.2f} s / {mid_base:.2f} s = "
              f"{mid / mid_base:.2f}x; best {min(this[key]):.2f} s / {min(base[key]):.2f} s = "
              f"{min(this[key]) / min(base[key]):.2f}x   (target <= {args.target:.2f}x)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stacks", type=int, default=50)
    parser.add_argument("--concurrency", type=int, default=None, help="8 (16 with --aws-like)")
    parser.add_argument("--skip-sceptre", action="store_true", help="Only formwright and the floor.")
    parser.add_argument("--aws-like", action="store_true",
                        help="Through the fault proxy with AWS-like timings (concurrency 16 unless given).")
    parser.add_argument("--throttle", type=float, default=0.0, help="--aws-like: share of calls throttled.")
    parser.add_argument("--server-errors", type=float, default=0.0, help="--aws-like: share answered 5xx.")
    parser.add_argument("--baseline-rev", metavar="REV",
                        help="Compare formwright's deploy and no-op with the tree at git revision REV.")
    parser.add_argument("--rounds", type=int, default=1, help="--baseline-rev: alternations (medians shown).")
    parser.add_argument("--target", type=float, default=1.2, help="--baseline-rev: the ratio aimed at.")
    parser.add_argument("--formwright-only", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.concurrency is None:
        # on AWS a stack's worker mostly waits: enough workers for a whole DAG level (10 of 50 stacks)
        args.concurrency = 16 if args.aws_like else 8
    if args.aws_like:
        aws_like(args)
        return
    if args.baseline_rev:
        against_baseline(args)
        return
    if args.formwright_only:
        with tempfile.TemporaryDirectory(prefix="fw-bench-") as tmp:
            print(json.dumps(formwright_row(Path(tmp), args)))
        return

    from startup import compile_bytecode  # bench/ is the script's folder: the one bytecode helper

    from formwright.cloud import local

    compile_bytecode()  # as `pip install` does: else every run compiles formwright (PYTHONDONTWRITEBYTECODE)
    with tempfile.TemporaryDirectory(prefix="fw-bench-") as tmp:
        root = Path(tmp)
        os.environ["FORMWRIGHT_HOME"] = str(root / "home")
        cloud, _ = local.start()
        try:
            env = cloud_env(cloud.endpoint)
            rows: dict[str, dict[str, float | int | str]] = {}
            width = max(1, args.stacks // 5)

            body = json.dumps(TEMPLATE)
            floor_argv = [sys.executable, "-c", FLOOR, cloud.endpoint, str(args.stacks), str(width),
                          str(args.concurrency), body]
            wall, _ = timed(floor_argv, env)
            again, out2 = timed(floor_argv, env)
            rows["boto3 floor"] = {"deploy": wall, "noop": again, "noop_writes": json.loads(out2)["writes"]}

            rows["formwright"] = formwright_deploys(root, args, env)

            if not args.skip_sceptre:
                sceptre = ensure_sceptre()
                sc_project = make_sceptre(root, args.stacks, "us-east-1")
                launch = [str(sceptre), "--dir", str(sc_project), "launch", "-y",
                          "--max-concurrency", str(args.concurrency), "bench"]
                wall, _ = timed(launch, env)
                again, _ = timed(launch, env)
                rows["sceptre"] = {"deploy": wall, "noop": again, "noop_writes": "?"}
        finally:
            local.stop()

    print(
        f"\n{args.stacks} stacks x 5 resources, DAG depth 5, concurrency {args.concurrency}, "
        "one local cloud\n"
    )
    print(f"{'tool':<14}{'deploy s':>10}{'no-op s':>10}{'no-op writes':>14}")
    for name, row in rows.items():
        print(f"{name:<14}{row['deploy']:>10.2f}{row['noop']:>10.2f}{row['noop_writes']!s:>14}")
    fw, floor = rows["formwright"], rows["boto3 floor"]
    print(f"\nformwright / floor (deploy): {fw['deploy'] / floor['deploy']:.2f}x   (target <= 1.5x)")
    if "sceptre" in rows:
        print(
            f"sceptre / formwright (deploy): {rows['sceptre']['deploy'] / fw['deploy']:.1f}x   "
            "(target >= 20x)"
        )
        print(f"sceptre / formwright (no-op): {rows['sceptre']['noop'] / fw['noop']:.1f}x")
    print(f"formwright no-op: {fw['noop']:.2f} s wall, {fw['noop_writes']} write calls, "
          f"{fw['noop_calls']} calls in all   (target <= 1 s, 0 writes)")


if __name__ == "__main__":
    main()
