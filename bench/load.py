"""Load benchmark: the local cloud under parallel clients (issue 30), its throughput printed.

Runs tests/localcloud/load.py (8 clients creating, updating and deleting 40 stacks, with change sets
left unexecuted and reads between) on a fresh local cloud in a private FORMWRIGHT_HOME, checks the
final state as the test does, and prints stack operations and API calls per second. There is no peer
to compare with: before the state lock this load failed with HTTP 500s (issue 30).

    .venv/bin/python bench/load.py [--clients 8] [--rounds 30] [--stacks 40]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent


def load_driver():
    """tests/localcloud/load.py (loaded by path: tests/ is not a package)."""
    path = HERE.parent / "tests" / "localcloud" / "load.py"
    spec = importlib.util.spec_from_file_location("load_driver", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["load_driver"] = module  # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def main() -> None:
    """Run the load once and print its throughput."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--stacks", type=int, default=40)
    args = parser.parse_args()
    driver = load_driver()
    with tempfile.TemporaryDirectory(prefix="fw-bench-load-") as tmp:
        os.environ["FORMWRIGHT_HOME"] = tmp
        from formwright.cloud import local

        cloud, _ = local.start(reset=True, snapshot_interval=0)
        try:
            outcome = driver.run(cloud.endpoint, clients=args.clients, rounds=args.rounds, stacks=args.stacks)
            wrong = driver.check(cloud.endpoint, outcome)
        finally:
            local.stop()
    print(f"{args.clients} clients x {args.rounds} rounds on {args.stacks} stacks: "
          f"{outcome.operations} stack operations, {outcome.calls} calls in {outcome.seconds:.1f} s")
    print(f"throughput: {outcome.operations / outcome.seconds:.1f} stack operations/s, "
          f"{outcome.calls / outcome.seconds:.1f} calls/s")
    print(f"HTTP 5xx: {len(outcome.server_errors)}, failed operations: {len(outcome.failures)}, "
          f"state differences and stuck names: {len(wrong)}")
    for line in [*outcome.server_errors, *outcome.failures, *wrong][:10]:
        print(f"  {line}")


if __name__ == "__main__":
    main()
