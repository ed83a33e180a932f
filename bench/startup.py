"""Start-up benchmark: `formwright --help`, `--version` and `status` against `python -c pass` and
`python -c "import boto3"`, each as a fresh process.

Targets (issue 16): `--help` and `--version` <= 0.2 s, `status` <= 0.5 s on a quiet machine. `status`
runs against the embedded local cloud (started here if none runs) on a one-stack project. formwright's
bytecode is compiled first, as `pip install` does: with PYTHONDONTWRITEBYTECODE set (as on the shared
build machines) an editable install would otherwise compile every formwright module on every run.

    .venv/bin/python bench/startup.py [--runs 7]
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PY = sys.executable
FW = [PY, "-m", "formwright"]
if (Path(PY).parent / "formwright").exists():
    FW = [str(Path(PY).parent / "formwright")]  # the console script, as a user runs it


def compile_bytecode() -> None:
    """Write formwright's .pyc files (what `pip install` does for an installed package)."""
    import compileall

    import formwright

    compileall.compile_dir(Path(formwright.__file__).parent, quiet=1)


def timed(command: list[str], runs: int, cwd: Path | None = None) -> tuple[float, float]:
    """The median wall time of `runs` runs (each must succeed) and their mean CPU time (user + system of
    the command's whole process tree: less sensitive than wall time to other work on a shared machine)."""
    times = []
    cpu_before = _children_cpu()
    for _ in range(runs):
        start = time.perf_counter()
        proc = subprocess.run(command, capture_output=True, text=True, cwd=cwd, check=False)
        times.append(time.perf_counter() - start)
        if proc.returncode not in (0,):
            sys.exit(f"{' '.join(command)} failed ({proc.returncode}):\n{proc.stdout}{proc.stderr}")
    return statistics.median(times), (_children_cpu() - cpu_before) / runs


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def load_note() -> str:
    """The load average, and whether the machine was too busy for the targets to mean much."""
    load = os.getloadavg()[0]
    busy = "; the targets assume a quiet machine" if load > (os.cpu_count() or 1) else ""
    return f"load average {load:.1f} on {os.cpu_count()} cores{busy}"


def main() -> None:
    """Time each command, print a table with the ratios to the two floors and the targets."""
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    compile_bytecode()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        # a local cloud of the bench's own (a private FORMWRIGHT_HOME), stopped at the end: never the user's
        os.environ["FORMWRIGHT_HOME"] = str(folder / "home")
        subprocess.run([*FW, "local-cloud", "start"], capture_output=True, check=True)
        try:
            (folder / "t.yaml").write_text("Resources:\n  Q:\n    Type: AWS::SQS::Queue\n")
            (folder / "formwright.yaml").write_text("name: startup\nstacks:\n  q: {template: t.yaml}\n")
            floor, _ = timed([PY, "-c", "pass"], args.runs)
            boto3, _ = timed([PY, "-c", "import boto3"], args.runs)
            rows = [("formwright --help", timed([*FW, "--help"], args.runs), 0.2),
                    ("formwright --version", timed([*FW, "--version"], args.runs), 0.2),
                    ("formwright status", timed([*FW, "status"], args.runs, cwd=folder), 0.5)]
        finally:
            subprocess.run([*FW, "local-cloud", "stop"], capture_output=True, check=False)
    print(f"python -c pass:          {floor:.3f} s")
    print(f"python -c 'import boto3': {boto3:.3f} s")
    for name, (seconds, cpu), target in rows:
        verdict = "met" if seconds <= target else "NOT met"
        print(f"{name:22s} {seconds:.3f} s (CPU {cpu:.3f} s)  {seconds / floor:5.1f}x python  "
              f"{seconds / boto3:4.2f}x boto3  target <= {target} s: {verdict}")
    print(load_note())


if __name__ == "__main__":
    main()
