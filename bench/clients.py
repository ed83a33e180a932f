"""Client benchmark: making formwright's CloudFormation client, against plain botocore (issue 29).

Each run is a fresh process (botocore keeps what it loaded for the process's life), which imports
botocore and formwright first, untimed, then times the session and `create_client("cloudformation")`,
then an STS client beside it, then another target's session and client (another region or account,
or an assumed role's session). Three sides, in one run:

- plain botocore: `botocore.session.Session().create_client(...)`, the peer;
- formwright, cold: `Target.client("cloudformation")` with an empty cache (`$FORMWRIGHT_HOME/cache/botocore`,
  cloud/botocore_data.py), as on a first run or after botocore is upgraded;
- formwright, warm: the same with the cache filled by an earlier run, as on every later run.

CPU time of the process (user + system) is printed, less sensitive than wall time to other work on a
shared machine.

    .venv/bin/python bench/clients.py [--runs 9]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

from startup import compile_bytecode, load_note

CHILD = textwrap.dedent("""
    import json, sys, time
    import botocore.session
    from formwright.cloud.session import Target

    def cpu():
        return time.process_time() * 1000

    side = sys.argv[1]
    start = cpu()
    def maker(region):
        if side == "botocore":
            core = botocore.session.Session()
            core.set_credentials("a", "b")
            return lambda service: core.create_client(service, region_name=region,
                                                      endpoint_url="http://127.0.0.1:1")
        target = Target("local", region, "http://127.0.0.1:1")
        target.core()
        return target.client

    make = maker("us-east-1")
    session = cpu()
    make("cloudformation")
    client = cpu()
    make("sts")
    sts = cpu()
    maker("eu-west-1")("cloudformation")  # another region's (or account's) session and client
    other = cpu()
    print(json.dumps({"session": session - start, "client": client - session, "sts": sts - client,
                      "other": other - sts}))
""")


def one_run(side: str, home: Path) -> dict[str, float]:
    """The CPU milliseconds of one fresh process on `side` (botocore, cold or warm)."""
    if side == "cold":
        shutil.rmtree(home / "cache", ignore_errors=True)
    env = {**os.environ, "FORMWRIGHT_HOME": str(home)}
    proc = subprocess.run([sys.executable, "-c", CHILD, side], capture_output=True, text=True, env=env,
                          check=False)
    if proc.returncode:
        sys.exit(f"the {side} run failed:\n{proc.stderr}")
    return json.loads(proc.stdout)


def main() -> None:
    """Run each side `--runs` times, interleaved, and print the medians with the ratios to botocore."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=9)
    args = parser.parse_args()
    compile_bytecode()
    sides = ("botocore", "cold", "warm")
    runs: dict[str, list[dict[str, float]]] = {side: [] for side in sides}
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)  # a private FORMWRIGHT_HOME: never the user's cache
        one_run("warm", home)  # a first run: compiles nothing into the numbers
        for _ in range(args.runs):
            for side in sides:
                runs[side].append(one_run(side, home))

    def median(side: str, part: str) -> float:
        return statistics.median(run[part] for run in runs[side])

    names = {"botocore": "plain botocore", "cold": "formwright, cold cache", "warm": "formwright, warm cache"}
    print(f"CPU ms, median of {args.runs} fresh processes each")
    print(f"{'':24s} {'session':>8s} {'create_client(cfn)':>19s} {'session + client':>17s} {'then sts':>9s} "
          f"{'2nd target':>11s}")
    for side in sides:
        client, total = median(side, "client"), median(side, "client") + median(side, "session")
        ratio = "" if side == "botocore" else (
            f"   {client / median('botocore', 'client'):.2f}x / "
            f"{total / (median('botocore', 'client') + median('botocore', 'session')):.2f}x botocore")
        print(f"{names[side]:24s} {median(side, 'session'):8.1f} {client:19.1f} {total:17.1f} "
              f"{median(side, 'sts'):9.1f} {median(side, 'other'):11.1f}{ratio}")
    print(load_note())


if __name__ == "__main__":
    main()
