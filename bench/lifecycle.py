"""Benchmark of the lifecycle journal, on its own local cloud.

1. A 50-stack instance create against the plain engine deploy of the same project (target: the
   journal and lifecycle cost at most 10 % more wall time). Runs alternate; the best of each is compared.
2. 100 instances of a 3-stack project created, then `formwright instance list` (target: ≤ 0.5 s).

Usage: .venv/bin/python bench/lifecycle.py [--runs 3] [--instances 100]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TEMPLATE = """\
AWSTemplateFormatVersion: "2010-09-09"
Parameters:
  Label:
    Type: String
    Default: none
Resources:
  Queue:
    Type: AWS::SQS::Queue
Outputs:
  Name:
    Value: !Ref Label
"""


def write_project(folder: Path, stacks: int, width: int = 10) -> Path:
    """`stacks` stacks in layers of `width`, each taking an output of one stack in the layer before."""
    (folder / "templates").mkdir(parents=True, exist_ok=True)
    (folder / "templates" / "queue.yaml").write_text(TEMPLATE)
    lines = ["name: bench", 'version: "1.0"', "region: us-east-1", "policies:", "  multiple_instances: true",
             "stacks:"]
    for i in range(stacks):
        lines += [f"  s{i}:", "    template: templates/queue.yaml",
                  f'    stack_name: "{{{{ instance.name }}}}-s{i}"']
        if i >= width:
            lines += ["    parameters:", f"      Label: !ref s{i - width}.outputs.Name"]
    (folder / "formwright.yaml").write_text("\n".join(lines) + "\n")
    return folder


def plain_deploy(source: Path, name: str, target) -> float:
    """The engine alone: load, prepare, deploy on the DAG."""
    from formwright.engine.group import StackGroup
    from formwright.engine.stack import prepare_stacks
    from formwright.model.project import load_project

    started = time.perf_counter()
    project = load_project(source, context={"instance": {"name": name, "version": "1.0"}})
    group = StackGroup(project, prepare_stacks(project, target=target), target, max_concurrency=8)
    results = group.deploy()
    elapsed = time.perf_counter() - started
    assert all(r.ok for r in results.values()), [r.error for r in results.values() if not r.ok]
    return elapsed


def lifecycle_create(home: Path, name: str, target) -> float:
    """The same project as an instance (--max-concurrency 8): snapshot, journal, events, revision."""
    from formwright.lifecycle.operations import Lifecycle

    started = time.perf_counter()
    # like for like with the engine's 8 workers (an instance works one stack at a time unless asked)
    lifecycle = Lifecycle(home, target, max_concurrency=8)
    try:
        outcome = lifecycle.create(name, home, {})
    finally:
        lifecycle.close()
    assert outcome.status == "done"
    return time.perf_counter() - started


def main() -> None:
    """Run both benchmarks and print the figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--instances", type=int, default=100)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="fw-bench-") as tmp:
        os.environ["FORMWRIGHT_HOME"] = str(Path(tmp) / "home")
        os.environ["FORMWRIGHT_TARGET"] = "local"
        from formwright.cloud import local
        from formwright.cloud.session import Target

        record, _ = local.start()
        try:
            target = Target("local", "us-east-1", record.endpoint)
            big = write_project(Path(tmp) / "big", 50)
            plain, life = [], []
            for run in range(args.runs):
                plain.append(plain_deploy(big, f"plain{run}", target))
                life.append(lifecycle_create(big, f"life{run}", target))
            best_plain, best_life = min(plain), min(life)
            print(
                f"50-stack create: engine deploy best {best_plain:.2f} s "
                f"(median {statistics.median(plain):.2f}), "
                f"instance create best {best_life:.2f} s (median {statistics.median(life):.2f}); "
                f"overhead {100 * (best_life / best_plain - 1):+.1f} % (target <= +10 %)"
            )

            small = write_project(Path(tmp) / "small", 3, width=1)
            started = time.perf_counter()
            from formwright.lifecycle.operations import Lifecycle

            lifecycle = Lifecycle(small, target)
            for i in range(args.instances):
                lifecycle.create(f"i{i:03d}", small, {})
            lifecycle.close()
            created = time.perf_counter() - started
            listed = []
            for _ in range(3):
                t0 = time.perf_counter()
                proc = subprocess.run(
                    [
                        str(Path(sys.executable).parent / "formwright"),
                        "instance",
                        "list",
                        str(small),
                        "--output",
                        "json",
                    ],
                    capture_output=True,
                    text=True,
                    timeout=60,
                    check=True,
                )
                listed.append(time.perf_counter() - t0)
            assert proc.stdout.count('"name"') == args.instances
            t0 = time.perf_counter()
            lifecycle = Lifecycle(small)
            assert len(lifecycle.instances()) == args.instances
            lifecycle.close()
            in_process = time.perf_counter() - t0
            print(
                f"{args.instances} instances of 3 stacks created in {created:.1f} s "
                f"({created / args.instances:.2f} s each); "
                f"`formwright instance list`: best {min(listed):.3f} s "
                f"wall (process start included; target <= 0.5 s), in-process {in_process * 1000:.1f} ms"
            )
        finally:
            local.stop()


if __name__ == "__main__":
    main()
