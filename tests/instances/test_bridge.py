"""The instance bridge keeps one MAC whatever ports come and go.

Left to the kernel, a Linux bridge takes the lowest MAC of its ports and changes it when that port goes: an
instance that cached the old MAC (its neighbour entry for 10.213.0.1) then cannot reach the host until it
re-resolves. Seen in the TOSCA corpus's runs column: one instance's cfn-signal timed out while the others'
got through. Needs root (a veth on the host), as booting instances does."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from formwright.cloud.instances import boot


def _mac(device: str) -> str:
    return Path("/sys/class/net", device, "address").read_text().strip()


def test_the_bridge_mac_stays_when_a_port_with_a_lower_mac_comes_and_goes() -> None:
    if os.geteuid() != 0 or shutil.which("ip") is None:
        pytest.skip("a veth on the host bridge needs root and iproute2")
    boot.ensure_bridge()
    assert _mac(boot.BRIDGE) == boot.BRIDGE_MAC
    host, peer = f"fwt{os.getpid() % 100000}", f"fwp{os.getpid() % 100000}"
    subprocess.run(["ip", "link", "add", host, "address", "00:00:00:00:00:01", "type", "veth",
                    "peer", "name", peer], check=True)
    try:
        subprocess.run(["ip", "link", "set", host, "master", boot.BRIDGE, "up"], check=True)
        assert _mac(boot.BRIDGE) == boot.BRIDGE_MAC  # not the new port's lower MAC
    finally:
        subprocess.run(["ip", "link", "del", host], check=False)
    assert _mac(boot.BRIDGE) == boot.BRIDGE_MAC
