"""Packages reach a booted instance only through the local cloud's proxy on the bridge (through the CLI).

Marked slow: it boots an instance that installs a package from Debian's registry (the network is needed).
apt's proxy setting is `Acquire::http::Proxy` (apt.conf(5), "http"); with it apt sends the whole URL to the
proxy and resolves no name itself, so the instance needs no DNS.
"""

from __future__ import annotations

import os
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from tests.instances.conftest import free_subnet, image_or_skip, instance_template, wait_for, write_project

pytestmark = [pytest.mark.slow, pytest.mark.cloud]

# `hello` is a 53 kB package of Debian's main archive. The direct connection goes to an address of
# deb.debian.org's CDN (Fastly, 151.101.0.0/16): reachable from the host, never from an instance.
USER_DATA = """#!/bin/sh
apt-get install -y --no-install-recommends hello && hello > /root/hello.txt
python3 - <<'PY' > /root/direct.txt 2>&1
import socket
try:
    socket.create_connection(("151.101.2.132", 80), timeout=5)
    print("direct: connected")
except OSError as err:
    print(f"direct: {err}")
PY
grep -h Proxy /etc/apt/apt.conf.d/01formwright-proxy > /root/proxy.txt
echo done > /root/done
"""


def test_apt_installs_through_the_proxy_and_nothing_else_is_reachable(tmp_path: Path, run_cli, cloud) -> None:
    image_or_skip()
    third = free_subnet()
    address = f"10.213.{third}.15"
    write_project(tmp_path, "pkgs", instance_template(f"10.213.{third}.0/24", address, USER_DATA))
    deployed = run_cli("deploy", str(tmp_path), "-y")
    assert deployed.code == 0, deployed.err + deployed.out
    instance_id = cloud.client("ec2").describe_instances()["Reservations"][0]["Instances"][0]["InstanceId"]
    root = Path(os.environ["FORMWRIGHT_HOME"]) / "instances" / instance_id / "root"
    try:
        wait_for(root / "root/done", wait=240)
        log = (root / "var/log/cloud-init-output.log").read_text()
        assert (root / "root/hello.txt").read_text() == "Hello, world!\n", log
        proxy = (root / "root/proxy.txt").read_text()
        assert 'Acquire::http::Proxy "http://10.213.0.1:' in proxy
        assert "Get:1 http://deb.debian.org/debian bookworm/main amd64 hello" in log
        assert "direct: [Errno 101] Network is unreachable" in (root / "root/direct.txt").read_text()

        url = proxy.split('"')[1]  # the proxy itself refuses what is not Debian's registry, naming the host
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({"http": url}))
        with pytest.raises(urllib.error.HTTPError) as refused:
            opener.open("http://example.com/", timeout=10)
        assert refused.value.code == 403
        assert "example.com is not part of it" in refused.value.read().decode()
    finally:
        run_cli("delete", str(tmp_path), "-y")
