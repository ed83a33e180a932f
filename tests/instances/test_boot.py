"""Instances that really boot in the local cloud (`local_cloud: {instances: boot}`), through the CLI.

Marked slow: the Debian image is built once per machine (`make instances-image`, cached outside the clone)
and each instance's root is an overlay of it. Skipped, with the reason, only where root, `unshare` or the
image cannot be had.

Where the behaviour comes from:
- UserData is a `#!` script run as root once, in cloud-init's final stage ("scripts-user": the script is kept
  as /var/lib/cloud/instance/scripts/part-001); its output goes to /var/log/cloud-init-output.log
  (cloud-init's default `output: {all: '| tee -a /var/log/cloud-init-output.log'}`) and to the console.
- GetConsoleOutput's Output is the console text, base64-encoded by the API ("The console output,
  base64-encoded", EC2 API Reference, GetConsoleOutput); boto3 decodes it (botocore's decode_console_output).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests.instances.conftest import (
    PrivateCloud,
    free_subnet,
    get,
    image_or_skip,
    instance_template,
    processes_in,
)

pytestmark = [pytest.mark.slow, pytest.mark.cloud]


USER_DATA = """#!/bin/sh
echo "hello from $(hostname)" > /root/marker
mkdir -p /srv/www && echo "served by the booted instance" > /srv/www/index.html
cd /srv/www && nohup python3 -m http.server 8080 --bind 0.0.0.0 >/var/log/web.log 2>&1 &
echo userdata-done
"""


def _template(subnet: str, address: str) -> dict:
    return instance_template(subnet, address, USER_DATA)


def test_user_data_listener_answers_from_the_host_and_delete_removes_everything(
        tmp_path: Path, run_cli, cloud) -> None:
    image_or_skip()
    third = free_subnet()
    address = f"10.213.{third}.13"
    (tmp_path / "web.json").write_text(json.dumps(_template(f"10.213.{third}.0/24", address)))
    (tmp_path / "formwright.yaml").write_text(
        "name: boot\nregion: us-east-1\nstacks:\n  web: {template: web.json}\n"
        "local_cloud:\n  instances: boot\n")
    deployed = run_cli("deploy", str(tmp_path), "-y", "--output", "json")
    assert deployed.code == 0, deployed.err + deployed.out
    ec2 = cloud.client("ec2")
    found = ec2.describe_instances()["Reservations"][0]["Instances"][0]
    assert found["PrivateIpAddress"] == address
    instance_id = found["InstanceId"]
    state = Path(os.environ["FORMWRIGHT_HOME"]) / "instances" / instance_id
    root = state / "root"

    assert get(f"http://{address}:8080/index.html") == "served by the booted instance\n"
    assert (root / "root/marker").read_text() == f"hello from ip-{address.replace('.', '-')}\n"
    log = (root / "var/log/cloud-init-output.log").read_text()
    assert "userdata-done" in log
    console = ec2.get_console_output(InstanceId=instance_id)["Output"]
    assert "userdata-done" in console
    assert "Debian GNU/Linux 12" in (root / "etc/os-release").read_text()  # what every AMI is here
    pids = processes_in(root)
    assert pids, "the instance's processes run chrooted in its root"

    deleted = run_cli("delete", str(tmp_path), "-y", "--output", "json")
    assert deleted.code == 0, deleted.err + deleted.out
    assert [p for p in pids if Path(f"/proc/{p}").exists()] == []
    assert not state.exists()
    netns = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=True).stdout
    assert f"fw-{instance_id}" not in netns


def test_an_address_outside_the_instance_network_fails_the_instance_by_name(
        tmp_path: Path, run_cli, cloud) -> None:
    image_or_skip()
    template = _template("10.213.7.0/24", "10.213.7.9")
    template["Resources"]["Net"]["Properties"]["CidrBlock"] = "10.50.0.0/16"
    template["Resources"]["Sub"]["Properties"]["CidrBlock"] = "10.50.7.0/24"
    template["Resources"]["Web"]["Properties"]["PrivateIpAddress"] = "10.50.7.9"
    (tmp_path / "web.json").write_text(json.dumps(template))
    (tmp_path / "formwright.yaml").write_text(
        "name: away\nregion: us-east-1\nstacks:\n  web: {template: web.json}\n"
        "local_cloud: {instances: boot}\n")
    deployed = run_cli("deploy", str(tmp_path), "-y")
    assert deployed.code != 0
    events = cloud.client("cloudformation").describe_stack_events(StackName="away-web")["StackEvents"]
    failed = [e for e in events if e["ResourceStatus"] == "CREATE_FAILED"]
    assert failed and "10.50.7.9 is outside the local cloud's instance network 10.213.0.0/16" in \
        failed[0]["ResourceStatusReason"]


def test_terminate_and_local_cloud_stop_leave_nothing_running(tmp_path: Path) -> None:
    """A second local cloud in a private home: TerminateInstances stops one instance, `local-cloud stop` the
    other (its SIGTERM makes the server exit, which stops every instance first)."""
    image_or_skip()
    private = PrivateCloud(tmp_path / "home")
    cli = private.cli
    answer = private.start()
    assert answer["instances_boot"] is True and answer["instances_boot_reason"] is None
    pids: dict[str, list[int]] = {}
    roots: dict[str, Path] = {}
    try:
        third = free_subnet()
        template = _template(f"10.213.{third}.0/24", f"10.213.{third}.21")
        second = dict(template["Resources"]["Web"], Properties={
            **template["Resources"]["Web"]["Properties"], "PrivateIpAddress": f"10.213.{third}.22"})
        template["Resources"]["Other"] = second
        (tmp_path / "web.json").write_text(json.dumps(template))
        (tmp_path / "formwright.yaml").write_text(
            "name: two\nregion: us-east-1\nstacks:\n  web: {template: web.json}\n"
            "local_cloud: {instances: boot}\n")
        deployed = cli("deploy", str(tmp_path), "-y")
        assert deployed.returncode == 0, deployed.stderr + deployed.stdout
        ec2 = private.ec2()
        instances = {i["PrivateIpAddress"]: i["InstanceId"]
                     for r in ec2.describe_instances()["Reservations"] for i in r["Instances"]}
        roots = {ip: tmp_path / "home" / "instances" / iid / "root" for ip, iid in instances.items()}
        for ip in instances:
            assert get(f"http://{ip}:8080/index.html") == "served by the booted instance\n"
        pids = {ip: processes_in(root) for ip, root in roots.items()}
        first = f"10.213.{third}.21"
        ec2.terminate_instances(InstanceIds=[instances[first]])
        assert [p for p in pids[first] if Path(f"/proc/{p}").exists()] == []
        assert not roots[first].exists()
    finally:
        stopped = cli("local-cloud", "stop")
    assert stopped.returncode == 0, stopped.stderr
    left = [p for group in pids.values() for p in group if Path(f"/proc/{p}").exists()]
    assert left == []
    assert not any(root.exists() for root in roots.values())


def test_without_the_image_start_says_why_and_the_deploy_is_refused_with_the_reason(tmp_path: Path) -> None:
    """A local cloud whose cache holds no image (XDG_CACHE_HOME empty): the limit is said at start and the
    change set fails naming it; no instance is created."""
    private = PrivateCloud(tmp_path / "home")
    private.env["XDG_CACHE_HOME"] = str(tmp_path / "empty-cache")
    cli = private.cli
    started = cli("local-cloud", "start")
    try:
        assert started.returncode == 0, started.stderr
        said_at_start = " ".join(started.stdout.split())
        assert "booting instances (local_cloud: {instances: boot}): refused here: the instance image is " \
               "not built" in said_at_start
        (tmp_path / "web.json").write_text(json.dumps(_template("10.213.9.0/24", "10.213.9.9")))
        (tmp_path / "formwright.yaml").write_text(
            "name: none\nregion: us-east-1\nstacks:\n  web: {template: web.json}\n"
            "local_cloud: {instances: boot}\n")
        deployed = cli("deploy", str(tmp_path), "-y")
        said = " ".join((deployed.stdout + deployed.stderr).split())
        assert deployed.returncode != 0
        assert "The local cloud cannot boot instance Web (AWS::EC2::Instance)" in said
        assert "make instances-image" in said and "Remove `instances: boot` to keep the stub mode" in said
    finally:
        cli("local-cloud", "stop")
