"""What the booting-instance tests share: the image (built or skipped), a template, a private local cloud."""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import boto3
import pytest

from formwright.cloud.instances import boot

# A Linux AMI of moto's catalog (amzn-ami-hvm-2017.09.1 x86_64): it boots as the local Debian, as every
# Linux image of the host's architecture does (docs/local-cloud.md, "Which image an ImageId is").
LINUX_AMI = "ami-760aaa0f"


def image_or_skip() -> None:
    """Build the cached image when this machine can (the first run is slow), or skip with the reason."""
    if os.geteuid() != 0:
        pytest.skip("booting instances needs root")
    if shutil.which("unshare") is None:
        pytest.skip("booting instances needs `unshare` (util-linux)")
    no_debootstrap = shutil.which("debootstrap") is None and not Path("/usr/sbin/debootstrap").exists()
    if boot.unavailable() and no_debootstrap:
        pytest.skip("no instance image and no debootstrap to build it (apt-get install -y debootstrap)")
    if boot.unavailable():
        built = subprocess.run(["sh", str(boot.image_script())], capture_output=True, text=True, check=False)
        if built.returncode != 0:
            pytest.skip(f"the instance image could not be built: {built.stderr.strip()[-300:]}")
    reason = boot.unavailable()
    if reason:
        pytest.skip(reason)


def free_subnet() -> int:
    """A third octet for a /24 of 10.213.0.0/16 (another local cloud on this machine may boot instances)."""
    return random.randint(1, 250)  # noqa: S311 - not security


def instance_template(subnet: str, address: str, user_data: str, **props: object) -> dict:
    """A VPC, a subnet and one instance `Web` at `address` running `user_data` (extra properties: `props`)."""
    return {
        "Resources": {
            "Net": {"Type": "AWS::EC2::VPC", "Properties": {"CidrBlock": "10.213.0.0/16"}},
            "Sub": {"Type": "AWS::EC2::Subnet",
                    "Properties": {"VpcId": {"Ref": "Net"}, "CidrBlock": subnet}},
            "Web": {"Type": "AWS::EC2::Instance",
                    "Properties": {"ImageId": LINUX_AMI, "InstanceType": "t3.micro",
                                   "SubnetId": {"Ref": "Sub"}, "PrivateIpAddress": address,
                                   "UserData": {"Fn::Base64": user_data}, **props}},
        },
        "Outputs": {"Address": {"Value": {"Fn::GetAtt": ["Web", "PrivateIp"]}}},
    }


def write_project(folder: Path, name: str, template: dict) -> Path:
    """A project booting its instances, of one stack `web` with `template`."""
    (folder / "web.json").write_text(json.dumps(template))
    (folder / "formwright.yaml").write_text(
        f"name: {name}\nregion: us-east-1\nstacks:\n  web: {{template: web.json}}\n"
        "local_cloud: {instances: boot}\n")
    return folder


def get(url: str, wait: float = 60.0) -> str:
    """The body at `url` once it answers (no proxy: the address is on the local cloud's private bridge)."""
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    deadline = time.monotonic() + wait
    while True:
        try:
            with opener.open(url, timeout=2) as reply:
                return reply.read().decode()
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)


def wait_for(path: Path, wait: float = 120.0) -> str:
    """The text of `path` once it exists (an instance's UserData writes it)."""
    deadline = time.monotonic() + wait
    while not path.exists():
        if time.monotonic() > deadline:
            raise AssertionError(f"{path} was not written within {wait:.0f} s")
        time.sleep(0.2)
    time.sleep(0.2)  # the writer's last line
    return path.read_text()


def processes_in(root: Path) -> list[int]:
    """Pids whose root folder is `root` (the instance's chroot), as the local cloud finds them."""
    return boot.processes_in(root)


def mounted(folder: Path) -> bool:
    """Whether something of the host is mounted at or under `folder`."""
    return bool(boot.mounts_under(folder))


class PrivateCloud:
    """A local cloud of its own home, driven through the CLI (`cli`), with an EC2 client on it."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self.env = {**os.environ, "FORMWRIGHT_HOME": str(home), "FORMWRIGHT_TARGET": "local"}
        self.answer: dict = {}

    def cli(self, *args: str) -> subprocess.CompletedProcess:
        """Run `formwright ARGS` against this local cloud."""
        return subprocess.run([sys.executable, "-m", "formwright", *args], env=self.env, capture_output=True,
                              text=True, timeout=300, stdin=subprocess.DEVNULL, check=False)

    def start(self, *flags: str) -> dict:
        """`local-cloud start --output json FLAGS`'s answer."""
        started = self.cli("local-cloud", "start", "--output", "json", *flags)
        assert started.returncode == 0, started.stderr
        self.answer = json.loads(started.stdout)
        return self.answer

    def ec2(self):
        """An EC2 client of this local cloud."""
        return boto3.client("ec2", endpoint_url=self.answer["endpoint"], region_name="us-east-1",
                            aws_access_key_id="testing", aws_secret_access_key="testing")  # noqa: S106


@pytest.fixture
def private_cloud(tmp_path: Path) -> Iterator[PrivateCloud]:
    """A started local cloud in a private home, stopped (and its instances removed) at the end."""
    cloud = PrivateCloud(tmp_path / "home")
    cloud.start()
    try:
        yield cloud
    finally:
        cloud.cli("local-cloud", "stop")
