"""Instances a SIGKILLed local cloud left running are removed by the next `local-cloud stop` or `start`.

SIGKILL runs no exit handler, so the local cloud cannot stop its instances itself: they keep running, with
their overlay root mounted, their veth on the bridge and their network namespace. The next stop or start of
the same home finds them by their folders and removes processes, mounts, roots, veths and namespaces
(through the CLI; slow: it boots instances).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from formwright.cloud.instances import boot
from tests.instances.conftest import (
    PrivateCloud,
    free_subnet,
    get,
    image_or_skip,
    instance_template,
    mounted,
    processes_in,
    write_project,
)

pytestmark = [pytest.mark.slow, pytest.mark.cloud]

USER_DATA = """#!/bin/sh
mkdir -p /srv && echo up > /srv/index.html
cd /srv && nohup python3 -m http.server 8080 >/dev/null 2>&1 &
"""


def _boot_and_kill(private: PrivateCloud, folder: Path, name: str) -> tuple[str, Path, list[int]]:
    """Deploy one instance, reach it, SIGKILL the local cloud; the instance id, its state folder, its pids."""
    private.start()
    third = free_subnet()
    address = f"10.213.{third}.19"
    write_project(folder, name, instance_template(f"10.213.{third}.0/24", address, USER_DATA))
    deployed = private.cli("deploy", str(folder), "-y")
    assert deployed.returncode == 0, deployed.stderr + deployed.stdout
    instance_id = next(i["InstanceId"] for r in private.ec2().describe_instances()["Reservations"]
                       for i in r["Instances"] if i.get("PrivateIpAddress") == address)
    assert get(f"http://{address}:8080/index.html") == "up\n"
    state = private.home / "instances" / instance_id
    pids = processes_in(state / "root")
    os.kill(private.answer["pid"], signal.SIGKILL)
    deadline = time.monotonic() + 30
    while Path(f"/proc/{private.answer['pid']}").exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert [p for p in pids if Path(f"/proc/{p}").exists()] == pids, "the killed cloud's instance runs on"
    assert mounted(state / "root")
    return instance_id, state, pids


def _gone(instance_id: str, state: Path, pids: list[int]) -> None:
    namespace, veth = boot.names(instance_id)
    assert [p for p in pids if Path(f"/proc/{p}").exists()] == []
    assert not mounted(state) and not state.exists()
    assert namespace not in subprocess.run(["ip", "netns", "list"], capture_output=True, text=True,
                                           check=True).stdout
    assert not Path("/sys/class/net", veth).exists()
    claims = boot.CLAIMS.iterdir() if boot.CLAIMS.is_dir() else []
    assert instance_id not in [c.read_text().strip() for c in claims if c.is_file()]


def test_stop_and_start_remove_what_a_killed_local_cloud_left(tmp_path: Path) -> None:
    image_or_skip()
    private = PrivateCloud(tmp_path / "home")
    try:
        left = _boot_and_kill(private, tmp_path, "killed-then-stopped")
        stopped = private.cli("local-cloud", "stop", "--output", "json")
        assert stopped.returncode == 0, stopped.stderr
        assert json.loads(stopped.stdout)["left_instances_removed"] == [left[0]]
        _gone(*left)

        left = _boot_and_kill(private, tmp_path, "killed-then-started")
        started = private.cli("local-cloud", "start")
        assert started.returncode == 0, started.stderr
        assert f"removed 1 booted instance(s) a killed local cloud left running: {left[0]}" in \
            " ".join(started.stdout.split())
        _gone(*left)
    finally:
        private.cli("local-cloud", "stop")
