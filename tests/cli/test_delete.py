"""delete checks before it acts: termination protection on any stack stops it before the first delete, the
dependents it adds are listed before the prompt, and a declined prompt changes nothing (issue #16, item 7)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

QUEUE = "Resources:\n  Q:\n    Type: AWS::SQS::Queue\nOutputs:\n  Name:\n    Value: !GetAtt Q.QueueName\n"
APP = "Parameters:\n  Up:\n    Type: String\nResources:\n  Q:\n    Type: AWS::SQS::Queue\n"


def project(folder: Path, protect: bool) -> Path:
    (folder / "q.yaml").write_text(QUEUE)
    (folder / "app.yaml").write_text(APP)
    (folder / "formwright.yaml").write_text(
        "name: del\nstacks:\n"
        f"  network: {{template: q.yaml, termination_protection: {str(protect).lower()}}}\n"
        "  app: {template: app.yaml, parameters: {Up: !ref network.outputs.Name}}\n")
    return folder


def test_protection_anywhere_stops_the_delete_before_it_starts(tmp_path: Path, run_cli, cloud) -> None:
    folder = project(tmp_path, protect=True)
    assert run_cli("deploy", str(folder), "-y").code == 0
    result = run_cli("delete", str(folder), "-s", "network", "-y")
    assert result.code == 2
    assert "termination protection is on for del-network" in result.err
    assert "nothing was deleted" in result.err
    names = {s["StackName"] for s in cloud.client("cloudformation").describe_stacks()["Stacks"]}
    assert {"del-network", "del-app"} <= names  # the dependent was not deleted first


def reading_the_terminal(pid: int) -> bool:
    """The process's main thread waits in a read of its terminal (Linux's wait channel)."""
    return Path(f"/proc/{pid}/wchan").read_text() in ("wait_woken", "n_tty_read")


def at_the_prompt(args: list[str], answer: bytes | None) -> tuple[int, str]:
    """Run formwright on a real terminal (the prompt only asks when stdin is one), wait for its [y/N]
    prompt, then type `answer`, or press Ctrl-C when it is None (SIGINT, as the terminal sends it)."""
    main, child = os.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "formwright", *args],
                            stdin=child, stdout=child, stderr=child, env={**os.environ})
    os.close(child)
    seen = b""
    deadline = time.monotonic() + 120  # a bound against a hang, not a timing assertion
    while b"[y/N]" not in seen and time.monotonic() < deadline:
        seen += os.read(main, 4096)
    if answer is None:
        # SIGINT once it is blocked reading the terminal: one landing between the prompt's last write and
        # that read is handled only when the read returns (CPython checks signals between bytecodes), a
        # window no hand on a keyboard hits
        while not reading_the_terminal(proc.pid) and time.monotonic() < deadline:
            time.sleep(0.01)
        proc.send_signal(signal.SIGINT)
    else:
        os.write(main, answer)
    code = proc.wait(timeout=60)
    try:
        while chunk := os.read(main, 4096):
            seen += chunk
    except OSError:  # EIO: the child closed the terminal
        pass
    os.close(main)
    return code, seen.decode(errors="replace")


@pytest.mark.parametrize(("answer", "exit_code"), [(b"n\n", 4), (None, 130)], ids=["no", "ctrl-c"])
def test_a_declined_prompt_lists_dependents_and_changes_nothing(answer: bytes | None, exit_code: int,
                                                                tmp_path: Path, run_cli, cloud) -> None:
    folder = project(tmp_path, protect=False)
    assert run_cli("deploy", str(folder), "-y").code == 0
    code, text = at_the_prompt(["delete", str(folder), "-s", "network"], answer)
    assert "del-app (depends on network)" in text
    # exit codes as `formwright delete --help` documents them: 4 declined, 130 interrupted
    assert code == exit_code and "Cancelled; nothing changed." in text and "Aborted!" not in text
    names = {s["StackName"] for s in cloud.client("cloudformation").describe_stacks()["Stacks"]}
    assert {"del-network", "del-app"} <= names
