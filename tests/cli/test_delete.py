"""delete checks before it acts: termination protection on any stack stops it before the first delete, the
dependents it adds are listed before the prompt, and a declined prompt changes nothing (issue #16, item 7)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

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


def test_a_declined_prompt_lists_dependents_and_changes_nothing(tmp_path: Path, local_cloud, cloud) -> None:
    folder = project(tmp_path, protect=False)
    env = {**os.environ}
    deploy = [sys.executable, "-m", "formwright", "deploy", str(folder), "-y"]
    assert subprocess.run(deploy, env=env, capture_output=True, check=False, timeout=300).returncode == 0
    # a real terminal: the prompt only asks when stdin is one
    main, child = os.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "formwright", "delete", str(folder), "-s", "network"],
                            stdin=child, stdout=child, stderr=child, env=env)
    os.close(child)
    seen = b""
    deadline = time.monotonic() + 120
    while b"[y/N]" not in seen and time.monotonic() < deadline:
        seen += os.read(main, 4096)
    os.write(main, b"n\n")
    code = proc.wait(timeout=60)
    try:
        while True:
            chunk = os.read(main, 4096)
            if not chunk:
                break
            seen += chunk
    except OSError:
        pass
    text = seen.decode(errors="replace")
    assert "del-app (depends on network)" in text
    assert code == 4 and "Cancelled; nothing changed." in text
    names = {s["StackName"] for s in cloud.client("cloudformation").describe_stacks()["Stacks"]}
    assert {"del-network", "del-app"} <= names
