"""Issue #17: one writer per project and target. Two `deploy`s (or a deploy and a delete) on the same
project used to run at once and both report the same stacks created.

Real processes and a real lock file: the holder is a child process; SIGKILL shows the stale case.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from formwright.engine.group import lock_key
from formwright.errors import LockHeldError
from formwright.state.lock import project_lock, project_lock_path

TEMPLATE = "Resources:\n  Q:\n    Type: AWS::SQS::Queue\nOutputs:\n  Arn: {Value: !GetAtt Q.Arn}\n"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "q.yaml").write_text(TEMPLATE)
    (tmp_path / "formwright.yaml").write_text(
        "name: locked\nregion: us-east-1\nstacks:\n  q: {template: q.yaml}\n")
    return tmp_path


def _key(project: Path, cloud) -> str:
    """The lock's name of the project on the local cloud (no environment)."""
    from formwright.model import load_project

    return lock_key(load_project(project), cloud)


def _holder(project: Path, key: str) -> subprocess.Popen:
    """A child process that takes the project's lock on the target `key` and sleeps."""
    code = textwrap.dedent(f"""
        import sys, time
        from pathlib import Path
        from formwright.state.lock import project_lock
        with project_lock(Path({str(project / '.formwright')!r}), {key!r}, "deploy"):
            print("held", flush=True)
            time.sleep(120)
    """)
    child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None and child.stdout.readline().strip() == "held"
    return child


def test_second_writer_exits_3_naming_the_holder(project: Path, run_cli, cloud) -> None:
    holder = _holder(project, _key(project, cloud))
    try:
        for command in (["deploy", str(project), "-y"], ["delete", str(project), "-y"]):
            refused = run_cli(*command)
            assert refused.code == 3, refused.err
            assert f"locked by deploy (pid {holder.pid} on" in refused.err
            assert "Traceback" not in refused.err
        assert cloud.client("cloudformation").describe_stacks()["Stacks"] == []  # nothing was done
    finally:
        holder.kill()
        holder.wait()


def test_stale_lock_of_a_killed_holder_is_taken_over_with_a_note(project: Path, run_cli, cloud) -> None:
    holder = _holder(project, _key(project, cloud))
    os.kill(holder.pid, signal.SIGKILL)
    holder.wait()
    record = project_lock_path(project / ".formwright", _key(project, cloud))
    assert record.read_text()  # its record is left behind
    done = run_cli("deploy", str(project), "-y")
    assert done.code == 0, done.err
    assert f"took over a stale lock of deploy (pid {holder.pid} on" in done.err and "is gone" in done.err
    assert record.read_text() == ""  # released cleanly


def test_two_deploys_at_once_one_waits_out_with_exit_3(project: Path, run_cli, cloud) -> None:
    command = [sys.executable, "-m", "formwright", "deploy", str(project), "-y"]
    procs = [subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                              stdin=subprocess.DEVNULL) for _ in range(2)]
    codes = sorted(p.wait(timeout=300) for p in procs)
    # either they overlapped (one refused with 3) or ran one after the other (the second unchanged)
    assert codes in ([0, 0], [0, 3])
    stacks = cloud.client("cloudformation").describe_stacks()["Stacks"]
    assert [s["StackName"] for s in stacks] == ["locked-q"]


def test_lock_is_reentrant_in_one_process_and_exclusive_across(tmp_path: Path) -> None:
    with project_lock(tmp_path, "t", "outer"), project_lock(tmp_path, "t", "inner"):
        code = ("from pathlib import Path\nfrom formwright.state.lock import project_lock\n"
                f"with project_lock(Path({str(tmp_path)!r}), 't', 'x'): pass")
        child = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
        assert child.returncode != 0 and "LockHeldError" in child.stderr
    with project_lock(tmp_path, "t", "again"):  # released: taken again at once
        assert LockHeldError.exit_code == 3
