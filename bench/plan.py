"""Plan benchmark (issue 22): a 50-stack project, one change at the head of its DAG, planned by this tree
and by `--baseline-rev` (today's plan), each on its own fresh local cloud.

The project is bench/deploy.py's stacks on a tree with one head (stack i takes an output of stack
(i-1)//3: every stack depends on s0, 4 levels for 50), deployed; then the head s0 gets a tag on one of
its queues (an update in place: its `Chain` output cannot change).
Printed: each tree's plan time (process start to exit, best of `--rounds`), the ratio (target <= 1.3x
the baseline's), and how many of the head's dependents each planned with resource detail: from a change
set or their applied inputs, not "(known after apply)" from the template alone (today 0; goal: all
whose inputs are known, here every one).

    .venv/bin/python bench/plan.py [--stacks 50] [--baseline-rev main] [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from deploy import FW, TEMPLATE, cloud_env, make_formwright, timed  # noqa: E402 - bench/deploy.py's


def tree(i: int) -> int | None:
    """The stack whose output stack i takes: (i-1)//3, so that every stack depends on s0."""
    return (i - 1) // 3 if i else None


def head_change(project: Path) -> None:
    """Give the head stack s0 its own template, with a tag on QueueA (Replacement False)."""
    template = json.loads(json.dumps(TEMPLATE))
    template["Resources"]["QueueA"]["Properties"] = {"Tags": [{"Key": "bench", "Value": "head"}]}
    (project / "head.json").write_text(json.dumps(template))
    config = project / "formwright.yaml"
    head = "  s0:\n    template: "
    config.write_text(config.read_text().replace(f"{head}stack.json", f"{head}head.json", 1))


def precise(plan: dict[str, Any]) -> bool:
    """True when a stack was planned with resource detail: no parameter known only after apply."""
    return not plan.get("unknown_parameters") and "known after apply" not in (plan.get("note") or "")


def one_tree(args: argparse.Namespace) -> dict[str, Any]:
    """Deploy the project, change its head, time the plan (this process's formwright)."""
    import formwright
    from formwright.cloud import local

    with tempfile.TemporaryDirectory(prefix="fw-bench-plan-") as tmp:
        root = Path(tmp)
        os.environ["FORMWRIGHT_HOME"] = str(root / "home")
        cloud, _ = local.start()
        try:
            env = cloud_env(cloud.endpoint)
            project = make_formwright(root, args.stacks, tree)
            timed([*FW, "deploy", str(project), "-y", "--output", "json"], env)
            head_change(project)
            walls, plans = [], {}
            for _ in range(args.rounds):
                wall, out = timed([*FW, "plan", str(project), "--output", "json"], env)
                walls.append(wall)
                plans = json.loads(out)["plans"]
        finally:
            local.stop()
    dependents = [name for name in plans if name != "s0"]
    return {"plan": min(walls), "dependents": len(dependents),
            "precise": sum(precise(plans[name]) for name in dependents),
            "head": plans["s0"]["kind"], "module": str(Path(formwright.__file__).resolve())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stacks", type=int, default=50)
    parser.add_argument("--baseline-rev", metavar="REV", default="main",
                        help="The tree to compare with (default main: today's plan).")
    parser.add_argument("--rounds", type=int, default=3, help="Plans timed per tree (best kept).")
    parser.add_argument("--one-tree", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one_tree:
        print(json.dumps(one_tree(args)))
        return
    repo = HERE.parent
    rows: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="fw-bench-base-") as tmp:
        tree = Path(tmp) / "baseline"
        subprocess.run(["git", "-C", str(repo), "worktree", "add", "--detach", "-q", str(tree),
                        args.baseline_rev], check=True)
        try:
            for label, src in ((f"baseline {args.baseline_rev}", tree / "src"), ("this tree", repo / "src")):
                # the child imports formwright from `src` (PYTHONPATH wins over the editable install), and
                # so do the CLI and local-cloud processes it starts
                env = {**os.environ, "PYTHONPATH": os.pathsep.join(
                    [str(src), *filter(None, [os.environ.get("PYTHONPATH")])])}
                _, out = timed([sys.executable, __file__, "--one-tree", "--stacks", str(args.stacks),
                                "--rounds", str(args.rounds)], env)
                row = json.loads(out.strip().splitlines()[-1])
                if not str(row["module"]).startswith(str(src.resolve())):
                    raise SystemExit(f"{label}: formwright was imported from {row['module']}, not {src}")
                rows[label] = row
                print(f"{label:<22} plan {row['plan']:6.2f} s   head {row['head']}   dependents planned with "
                      f"resource detail: {row['precise']}/{row['dependents']}", flush=True)
        finally:
            subprocess.run(["git", "-C", str(repo), "worktree", "remove", "--force", str(tree)], check=False)
    base, this = rows[f"baseline {args.baseline_rev}"], rows["this tree"]
    print(f"\n{args.stacks} stacks, one change at the head, best of {args.rounds} plan(s) each")
    print(f"this tree / {args.baseline_rev} (plan): {this['plan']:.2f} s / {base['plan']:.2f} s = "
          f"{this['plan'] / base['plan']:.2f}x   (target <= 1.3x)")
    print(f"dependents planned with resource detail: {this['precise']} (baseline {base['precise']}) of "
          f"{this['dependents']}")


if __name__ == "__main__":
    main()
