"""Drift benchmark: `formwright drift` vs sceptre's `drift detect` on the same 50 stacks, one local cloud.

Deploys N stacks (default 50, 5 resources each: two queues, a topic, two SSM parameters) with formwright,
untimed, under the names sceptre gives its stacks (`sc-bench-s<i>`), changes one SSM parameter of every
tenth stack out of band (boto3), then times, alternately and `--rounds` times (best kept):

- `formwright drift DIR --output json`: a detection per stack, in parallel, each polled at the engine's
  cadence, then each stack's resources counted by drift status (ListStackResources: NOT_CHECKED is only
  there) and a drifted stack's drifted resources read (DescribeStackResourceDrifts);
- `sceptre drift detect bench`: the same stacks, sceptre's own concurrency;
- `sceptre drift show bench` (sceptre's detect again, then the resource drifts), for reference;
- two floors, the least any client does for the same answer (FLOOR_DRIVER): each detection started
  (DetectStackDrift, a pool of `--concurrency` threads), then each waited for in the order started
  (DescribeStackDriftDetectionStatus at once, then every 0.1 s) and a drifted stack's drifted resources
  read (DescribeStackResourceDrifts), nothing else: the "boto3 floor" with boto3 as the tools use it, and
  the "http floor (no SDK)", the same calls over http.client with the XML read by regular expressions
  (`python -S`, unsigned: the local cloud checks no signature), what a client without a Python SDK (a Go
  or Rust binary) would pay. Each prints when it made its first call, so its start-up is shown;
- `python -c "import boto3"`: the start-up every boto3 client pays before it does anything.

Every run must find the same drifted stacks and resources as formwright (asserted). The ratios printed:
sceptre / formwright (target >= 5x), sceptre / floor and formwright / floor for each floor, and sceptre over
the http floor's time after its start-up (the ceiling below).

First on the local cloud as it is (a detection is complete when DetectStackDrift returns, so nobody waits),
then through tests/aws/fault_proxy.py with each detection DETECTION_IN_PROGRESS for each of `--detection`
seconds in turn (one proxy each), as CloudFormation detects asynchronously (formwright at AWS's cadence;
sceptre polls every 10 s). Each tool and floor runs as its own process (each pays its own start-up);
formwright's bytecode is compiled first, as `pip install` does (sceptre's was, in its venv).

What bounds the ratio: on the local cloud nobody waits, so a run is its start-up plus its calls, and the
calls are served one at a time (the local cloud holds one lock over every request: ~2 ms of server time
each, ~0.2 s for the ~105 calls of 50 stacks, whatever the client's concurrency). sceptre takes about 0.7 s
to start (`sceptre --help`) and the rest of its 1.1-1.5 s (on a quiet machine) on its calls. A boto3 client
pays `import boto3` (~0.26 s with the interpreter) and making its client (~0.07 s) before its first call,
then a few ms a call of its own on top of the server's: it cannot go below ~0.3 + 0.2 s, under 3x sceptre,
and the boto3 floor takes ~0.65-0.8 s (~2x). Only the http floor (no SDK; its start-up: 60 ms) comes near 5x
(4-7x in our runs: more when the machine is busy, as sceptre's start-up is CPU work and the http floor's
time mostly the server's); the line "the http floor's time after its start-up" is about the server's own
time (that client does little), and sceptre over it about the ceiling of any client on this machine.

With detections taking D seconds sceptre's first status read finds each in progress and sleeps 10 s, so it
takes about start-up + 10 s (for any D up to 10 s) where a client that polls takes about start-up + D + its
calls: the ratio is at most (start-up + 10 s) / (start-up + D), which is why it is printed for several D.
The proxy adds a few ms a call (it answered ~40 ms late until it set TCP_NODELAY: Nagle against delayed
ACKs); AWS's own calls take tens of ms, which formwright pays on its status reads and listings of 50 stacks,
so the ratio against AWS is lower than here.

    .venv/bin/python bench/drift.py [--stacks 50] [--rounds 2] [--concurrency 8] [--detection 1,2,5]
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

sys.path.insert(0, str(Path(__file__).resolve().parent))
from startup import compile_bytecode

from deploy import FW, TEMPLATE, cloud_env, ensure_sceptre, load_fault_proxy, timed

# The floors (see the module docstring): FLOOR_HEAD + a layer of calls + FLOOR_DRIVER, run as `python -c`
FLOOR_HEAD = r'''
import json, os, sys, time
from concurrent.futures import ThreadPoolExecutor
ENDPOINT, COUNT, CONCURRENCY = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
'''
FLOOR_DRIVER = r'''
stacks = [f"sc-bench-s{i}" for i in range(COUNT)]
first_call = time.time()
def finish(stack_detection):
    stack, detection = stack_detection
    while True:
        state, drift = status(detection)
        if state != "DETECTION_IN_PROGRESS":
            return stack, drifted(stack) if drift == "DRIFTED" else None
        time.sleep(0.1)
with ThreadPoolExecutor(CONCURRENCY) as pool:
    detections = list(pool.map(detect, stacks))
    found = {stack: ids for stack, ids in pool.map(finish, zip(stacks, detections)) if ids is not None}
print(json.dumps({"first_call": first_call, "drifted": found}), flush=True)
os._exit(0)  # no interpreter teardown (~0.1 s of freeing boto3's modules), as formwright skips it
'''
# boto3, as the tools use it (credentials from the environment)
BOTO3_CALLS = r'''
import boto3
from botocore.config import Config
cf = boto3.client("cloudformation", endpoint_url=ENDPOINT, region_name="us-east-1",
                  config=Config(max_pool_connections=CONCURRENCY))
def detect(stack):
    return cf.detect_stack_drift(StackName=stack)["StackDriftDetectionId"]
def status(detection):
    answer = cf.describe_stack_drift_detection_status(StackDriftDetectionId=detection)
    return answer["DetectionStatus"], answer.get("StackDriftStatus")
def drifted(stack):
    page = cf.describe_stack_resource_drifts(StackName=stack,
                                             StackResourceDriftStatusFilters=["MODIFIED", "DELETED"])
    return [d["LogicalResourceId"] for d in page["StackResourceDrifts"]]
'''
# No SDK: the query API over http.client, one kept-alive connection per thread, the XML read with
# regular expressions, unsigned (the local cloud does not check signatures; SigV4 is an HMAC: microseconds)
HTTP_CALLS = r'''
import http.client, re, threading, urllib.parse
URL, LOCAL = urllib.parse.urlsplit(ENDPOINT), threading.local()
AUTH = ("AWS4-HMAC-SHA256 Credential=bench/20260101/us-east-1/cloudformation/aws4_request, "
        "SignedHeaders=host, Signature=0")
def call(action, **params):
    if not hasattr(LOCAL, "conn"):
        LOCAL.conn = http.client.HTTPConnection(URL.hostname, URL.port)
    body = urllib.parse.urlencode({"Action": action, "Version": "2010-05-15", **params})
    LOCAL.conn.request("POST", "/", body, {"Content-Type": "application/x-www-form-urlencoded",
                                           "Authorization": AUTH})
    answer = LOCAL.conn.getresponse()
    text = answer.read().decode()
    assert answer.status == 200, text
    return text
def tag(xml, name):
    found = re.search(f"<{name}>([^<]*)</{name}>", xml)
    return found.group(1) if found else None
def detect(stack):
    return tag(call("DetectStackDrift", StackName=stack), "StackDriftDetectionId")
def status(detection):
    xml = call("DescribeStackDriftDetectionStatus", StackDriftDetectionId=detection)
    return tag(xml, "DetectionStatus"), tag(xml, "StackDriftStatus")
def drifted(stack):
    only = {"StackResourceDriftStatusFilters.member.1": "MODIFIED",
            "StackResourceDriftStatusFilters.member.2": "DELETED"}
    xml = call("DescribeStackResourceDrifts", StackName=stack, **only)
    return re.findall("<LogicalResourceId>([^<]*)</LogicalResourceId>", xml)
'''
IMPORT_BOTO3 = "python -c 'import boto3'"
HTTP_FLOOR = "http floor (no SDK)"
FLOORS = {"boto3 floor": ([], BOTO3_CALLS), HTTP_FLOOR: (["-S"], HTTP_CALLS)}


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
    start = time.perf_counter()
    proc = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=1800)
    wall = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(argv[:4])} failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    return wall, proc.stdout, proc.returncode


def formwright_answer(out: str) -> dict[str, list[str]]:
    """`formwright drift --output json` as the floors answer: each drifted stack's CloudFormation name and
    its drifted resources' logical ids."""
    answer = json.loads(out)
    stacks = answer["stacks"]
    return {stacks[name]["stack_name"]: sorted(r["logical_id"] for r in stacks[name]["drifted"])
            for name in answer["drifted"]}


def compare(env: dict[str, str], endpoint: str, fw_project: Path, sc_project: Path, sceptre: Path,
            changed: list[str], args: argparse.Namespace) -> dict[str, float]:
    """Best wall time of each tool and floor over the rounds, run alternately (and each floor's start-up to
    its first call, and `import boto3`'s); each must find the drifted stacks formwright finds."""
    fw_argv = [*FW, "drift", str(fw_project), "--output", "json", "--max-concurrency", str(args.concurrency)]
    sc = [str(sceptre), "--dir", str(sc_project), "--output", "json", "drift"]
    runs = {"formwright drift": fw_argv, "sceptre drift detect": [*sc, "detect", "bench"],
            "sceptre drift show": [*sc, "show", "bench"]}
    for name, (flags, calls) in FLOORS.items():
        runs[name] = [sys.executable, *flags, "-c", FLOOR_HEAD + calls + FLOOR_DRIVER, endpoint,
                      str(args.stacks), str(args.concurrency)]
    runs[IMPORT_BOTO3] = [sys.executable, "-c", "import boto3"]
    best: dict[str, float] = {}
    answer: dict[str, list[str]] = {}
    for _ in range(args.rounds):
        for name, argv in runs.items():
            began = time.time()  # the floors say when they made their first call, on this clock
            wall, out, code = run(argv, env)
            best[name] = min(best.get(name, wall), wall)
            if name == "formwright drift":
                answer = formwright_answer(out)
                assert code == 1 and sorted(answer) == [f"sc-bench-{s}" for s in sorted(changed)], (code, out)
            elif name == "sceptre drift detect":
                drifted = sum('"DRIFTED"' in line for line in out.splitlines())
                assert drifted >= len(changed), out[-2000:]
            elif name in FLOORS:
                floor = json.loads(out)
                found = {stack: sorted(ids) for stack, ids in floor["drifted"].items()}
                assert found == answer, (name, found, answer)
                startup = floor["first_call"] - began
                best[f"{name} start-up"] = min(best.get(f"{name} start-up", startup), startup)
    return best


def report(title: str, best: dict[str, float]) -> None:
    """The walls and the ratios."""
    print(f"\n{title}")
    for name in ("formwright drift", "sceptre drift detect", "sceptre drift show", *FLOORS, IMPORT_BOTO3):
        first = f"   (start-up to its first call {best[f'{name} start-up']:.2f} s)" if name in FLOORS else ""
        print(f"  {name:<26}{best[name]:>6.2f} s{first}")
    fw, detect = best["formwright drift"], best["sceptre drift detect"]
    print(f"  sceptre drift detect / formwright drift: {detect / fw:.1f}x   (target >= 5x)")
    for name in FLOORS:
        print(f"  sceptre drift detect / {name}: {detect / best[name]:.1f}x   "
              f"formwright drift / {name}: {fw / best[name]:.2f}x")
    after_start = best[HTTP_FLOOR] - best[f"{HTTP_FLOOR} start-up"]
    print(f"  sceptre drift detect / the http floor's time after its start-up ({after_start:.2f} s, what "
          f"even a client that starts at once pays): {detect / after_start:.1f}x")
    print(f"  sceptre drift show / formwright drift: {best['sceptre drift show'] / fw:.1f}x")


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
    compile_bytecode()  # as `pip install` does: else each run compiles formwright (PYTHONDONTWRITEBYTECODE)
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
            results["local cloud (detections finish at once)"] = compare(env, cloud.endpoint, fw_project,
                                                                         sc_project, sceptre, changed, args)
            proxy_module = load_fault_proxy()
            for detection in (d for d in args.detection if d):
                faults = proxy_module.Faults(stale_after_execute=False, drift_in_progress=detection)
                with proxy_module.FaultProxy(cloud.endpoint, faults) as proxy:
                    title = (f"AWS-like: through tests/aws/fault_proxy.py, each detection in progress for "
                             f"{detection:g} s (formwright at AWS's cadence)")
                    aws_env = cloud_env(proxy.endpoint, target="aws")
                    results[title] = aws_like[detection] = compare(aws_env, proxy.endpoint, fw_project,
                                                                   sc_project, sceptre, changed, args)
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
