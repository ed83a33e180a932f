"""GitRepository `secretRef` over SSH in the daemon, against a real OpenSSH server: `sshd` from the
openssh-server package (`make test-deps` installs it with apt where it can) started on 127.0.0.1 on a free
port as the test's user, with its own host key and authorized_keys in a temporary folder. Nothing is faked:
git clones over ssh:// with the Secret's `identity` and `known_hosts` (Flux's git Secret keys,
source-controller docs, "Secret reference"), and the daemon applies the template to the local cloud.

A `known_hosts` that names another key is refused: ssh's StrictHostKeyChecking=yes, the object
ArtifactFailed with ssh's own "Host key verification failed" (as source-controller refuses a host key
that does not match), and the other object is applied all the same.
"""

from __future__ import annotations

import base64
import getpass
import os
import shutil
import socket
import subprocess
import threading
from pathlib import Path

import pytest

from formwright.engine.cfn import CloudFormation
from formwright.sync.daemon import Daemon

from .conftest import QUEUE, Repo
from .harness import wait_for

pytestmark = pytest.mark.cloud
SSHD = shutil.which("sshd") or "/usr/sbin/sshd"


def _keygen(path: Path, comment: str) -> str:
    """A new ed25519 key at `path`; returns the public key line."""
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", str(path)],
                   check=True, timeout=30)
    return path.with_suffix(".pub").read_text().strip()


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def sshd(tmp_path):
    """A real sshd on 127.0.0.1 for this user: (port, client key path, host public key line)."""
    if not os.path.exists(SSHD):
        pytest.skip("sshd is not installed (apt-get install openssh-server; `make test-deps` does): "
                    "the SSH clone was NOT tested")
    home = tmp_path / "sshd"
    home.mkdir(mode=0o700)
    host_public = _keygen(home / "host_key", "host")
    client_public = _keygen(home / "client_key", "flux")
    (home / "authorized_keys").write_text(client_public + "\n")
    port = _free_port()
    config = home / "sshd_config"
    config.write_text(f"""\
ListenAddress 127.0.0.1:{port}
HostKey {home / "host_key"}
PidFile {home / "sshd.pid"}
AuthorizedKeysFile {home / "authorized_keys"}
PasswordAuthentication no
KbdInteractiveAuthentication no
PubkeyAuthentication yes
PermitRootLogin prohibit-password
UsePAM no
StrictModes no
""")
    if os.geteuid() == 0:  # sshd run by root wants its privilege-separation folder (the service makes it)
        Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)
    server = subprocess.Popen([SSHD, "-D", "-e", "-f", str(config)], stdout=subprocess.DEVNULL,
                              stderr=subprocess.PIPE)
    try:
        wait_for(lambda: server.poll() is not None or _accepts(port), "sshd listening", timeout=30)
        if server.poll() is not None:
            pytest.fail(f"sshd did not start: {server.stderr.read().decode() if server.stderr else ''}")
        yield port, home / "client_key", host_public
    finally:
        server.terminate()
        server.wait(10)


def _accepts(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
    except OSError:
        return False


def _objects(url: str, identity: str, known_hosts: str, name: str) -> str:
    def b64(text: str) -> str:
        return base64.b64encode(text.encode()).decode()

    return f"""\
apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata: {{name: {name}, namespace: default}}
spec: {{url: "{url}", ref: {{branch: main}}, interval: 1m, secretRef: {{name: {name}-ssh}}}}
---
apiVersion: v1
kind: Secret
metadata: {{name: {name}-ssh, namespace: default}}
data: {{identity: {b64(identity)}, known_hosts: {b64(known_hosts)}}}
---
apiVersion: cloudformation.contrib.fluxcd.io/v1alpha1
kind: CloudFormationStack
metadata: {{name: {name}, namespace: default}}
spec:
  stackName: sync-{name}
  templatePath: template.yaml
  sourceRef: {{kind: GitRepository, name: {name}}}
  interval: 1h
  retryInterval: 1h
"""


def test_daemon_clones_over_ssh_with_the_secrets_key_and_refuses_a_wrong_host_key(tmp_path, sshd, cloud):
    port, client_key, host_public = sshd
    repo = Repo(tmp_path / "repo")
    sha = repo.commit({"template.yaml": QUEUE})
    url = f"ssh://{getpass.getuser()}@127.0.0.1:{port}{repo.path}"
    host = f"[127.0.0.1]:{port}"
    key_type, key = host_public.split()[:2]
    other = _keygen(tmp_path / "impostor", "impostor").split()
    folder = tmp_path / "objects"
    folder.mkdir()
    identity = client_key.read_text()
    (folder / "good.yaml").write_text(_objects(url, identity, f"{host} {key_type} {key}\n", "good"))
    spoofed_hosts = f"{host} {other[0]} {other[1]}\n"  # the host with another key
    (folder / "spoofed.yaml").write_text(_objects(url, identity, spoofed_hosts, "spoofed"))

    lines: list[str] = []
    daemon = Daemon(folder, cloud, workers=2, reload_interval=0.2, drift=False, log=lines.append,
                    state_dir=tmp_path / "state")
    thread = threading.Thread(target=daemon.run_forever, kwargs={"install_signals": False})
    thread.start()
    try:
        good = wait_for(lambda: (s := daemon._status_of("default/good")) and s.is_ready and s, "good Ready")
        spoofed = wait_for(lambda: (s := daemon._status_of("default/spoofed")) and s.ready == "False" and s,
                           "spoofed refused")
    finally:
        daemon.stop()
        thread.join(60)
    assert good.last_applied_revision == f"main@sha1:{sha}"
    assert CloudFormation(cloud.client("cloudformation")).describe("sync-good").status == "CREATE_COMPLETE"
    assert spoofed.reason == "ArtifactFailed" and "Host key verification failed" in spoofed.message, spoofed
    assert any("Host key verification failed" in line for line in lines), lines
    assert CloudFormation(cloud.client("cloudformation")).describe("sync-spoofed") is None
