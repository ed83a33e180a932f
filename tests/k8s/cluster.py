"""A real Kubernetes API server for the tests: Debian's etcd and a kube-apiserver built by `make k8s`
(tests/k8s/build-apiserver.sh), started on free loopback ports with RBAC on, and the kubectl of the same
release.

Identities come from a static token file: `admin` (system:masters) for the test itself, and one token per
service account the tests act as. The API server's RBAC authorizer matches a ServiceAccount subject by the
user name `system:serviceaccount:<namespace>:<name>` and the groups `system:serviceaccounts[:<namespace>]`
(Kubernetes' RBAC reference, "Referring to subjects"), so a token carrying that name is held to exactly the
permissions the install's RoleBinding gives the service account, as the pod's own token would be.
"""

from __future__ import annotations

import datetime
import ipaddress
import json
import os
import shutil
import socket
import ssl
import subprocess
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CACHE = Path(os.environ.get("FORMWRIGHT_K8S_CACHE") or Path.home() / ".cache" / "formwright" / "k8s")
APISERVER = CACHE / "bin" / "kube-apiserver"
KUBECTL = CACHE / "bin" / "kubectl"
ADMIN_TOKEN = "formwright-test-admin"


def unavailable() -> str | None:
    """Why a real API server cannot be started here, or None when it can."""
    if not APISERVER.exists() or not KUBECTL.exists():
        why = (CACHE / "unavailable").read_text().strip() if (CACHE / "unavailable").exists() else ""
        return f"kube-apiserver is not built ({why or 'run make k8s'})"
    if shutil.which("etcd") is None:
        return "etcd is not installed (make k8s installs Debian's etcd-server)"
    return None


def free_port() -> int:
    """A TCP port on 127.0.0.1 nobody listens on now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _certificate(folder: Path) -> tuple[Path, Path]:
    """A self-signed serving certificate for 127.0.0.1 and localhost, and its key."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import rsa
    from cryptography.x509.oid import NameOID

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kube-apiserver")])
    now = datetime.datetime.now(datetime.UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=2))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost"),
                                                        x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                           critical=False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    cert_path, key_path = folder / "serving.crt", folder / "serving.key"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return cert_path, key_path


def service_account_user(namespace: str, name: str) -> tuple[str, list[str]]:
    """The user name and groups the API server gives a service account's token."""
    return (f"system:serviceaccount:{namespace}:{name}",
            ["system:serviceaccounts", f"system:serviceaccounts:{namespace}"])


# The identities the tests act as: token -> (user, groups). Fixed before the server starts (a token file is
# read once).
IDENTITIES: dict[str, tuple[str, list[str]]] = {
    ADMIN_TOKEN: ("admin", ["system:masters"]),
    "formwright-sync-system": service_account_user("formwright-system", "formwright-sync"),
    "formwright-sync-shard-a": service_account_user("shard-a", "formwright-sync"),
    "formwright-sync-shard-b": service_account_user("shard-b", "formwright-sync"),
    "formwright-sync-trimmed": service_account_user("trimmed", "formwright-sync"),
}


@dataclass
class ApiServer:
    """A running etcd + kube-apiserver pair, and how to reach it."""

    url: str
    folder: Path
    ca: Path
    processes: list[subprocess.Popen] = field(default_factory=list)

    def kubeconfig(self, token: str = ADMIN_TOKEN) -> Path:
        """A kubeconfig file for the identity of `token` (written once per token)."""
        path = self.folder / f"kubeconfig-{token}"
        if not path.exists():
            config = {
                "apiVersion": "v1", "kind": "Config", "current-context": "test",
                "clusters": [{"name": "test", "cluster": {"server": self.url,
                                                          "certificate-authority": str(self.ca)}}],
                "users": [{"name": "user", "user": {"token": token}}],
                "contexts": [{"name": "test", "context": {"cluster": "test", "user": "user"}}],
            }
            path.write_text(json.dumps(config))
        return path

    def kubectl(self, *args: str, token: str = ADMIN_TOKEN, check: bool = True, stdin: str | None = None,
                cwd: Path | None = None) -> subprocess.CompletedProcess:
        """Run the real kubectl against this server as `token`'s identity."""
        proc = subprocess.run([str(KUBECTL), f"--kubeconfig={self.kubeconfig(token)}", *args],
                              input=stdin, capture_output=True, text=True, timeout=120, cwd=cwd)
        if check and proc.returncode != 0:
            raise AssertionError(f"kubectl {' '.join(args)} failed ({proc.returncode}): {proc.stderr}")
        return proc

    def request(self, method: str, path: str, body: Any = None, *, token: str = ADMIN_TOKEN,
                content_type: str = "application/json") -> Any:
        """One REST call (what kubectl would send); the decoded answer, None for 404."""
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.url + path, data=data, method=method,
                                     headers={"Authorization": f"Bearer {token}",
                                              "Content-Type": content_type})
        context = ssl.create_default_context(cafile=str(self.ca))
        try:
            with urllib.request.urlopen(req, timeout=30, context=context) as reply:  # noqa: S310 - loopback
                return json.loads(reply.read() or b"null")
        except urllib.error.HTTPError as err:
            if err.code == 404:
                return None
            raise

    def ready(self) -> bool:
        """True once the server answers /readyz with 200."""
        req = urllib.request.Request(self.url + "/readyz", headers={"Authorization": f"Bearer {ADMIN_TOKEN}"})
        try:
            with urllib.request.urlopen(req, timeout=5,  # noqa: S310 - loopback
                                        context=ssl.create_default_context(cafile=str(self.ca))) as reply:
                return reply.status == 200
        except (OSError, urllib.error.URLError):
            return False

    def stop(self) -> None:
        """Stop kube-apiserver, then etcd."""
        for proc in reversed(self.processes):
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(20)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait(10)


def start(folder: Path, extra: list[str] | None = None) -> ApiServer:
    """Start etcd and kube-apiserver (RBAC authorization, token authentication) under `folder`, with
    `extra` flags for kube-apiserver."""
    folder.mkdir(parents=True, exist_ok=True)
    cert, key = _certificate(folder)
    tokens = folder / "tokens.csv"
    tokens.write_text("".join(f'{token},{user},{user},"{",".join(groups)}"\n'
                              for token, (user, groups) in IDENTITIES.items()))
    client_port, peer_port, secure_port = free_port(), free_port(), free_port()
    etcd_log = open(folder / "etcd.log", "wb")  # noqa: SIM115 - closed with the process
    etcd = subprocess.Popen(
        ["etcd", "--name=test", f"--data-dir={folder / 'etcd'}",
         f"--listen-client-urls=http://127.0.0.1:{client_port}",
         f"--advertise-client-urls=http://127.0.0.1:{client_port}",
         f"--listen-peer-urls=http://127.0.0.1:{peer_port}",
         f"--initial-advertise-peer-urls=http://127.0.0.1:{peer_port}",
         f"--initial-cluster=test=http://127.0.0.1:{peer_port}"],
        stdout=etcd_log, stderr=subprocess.STDOUT, start_new_session=True)
    server = ApiServer(f"https://127.0.0.1:{secure_port}", folder, cert, [etcd])
    apiserver_log = open(folder / "kube-apiserver.log", "wb")  # noqa: SIM115 - closed with the process
    server.processes.append(subprocess.Popen(
        [str(APISERVER), f"--etcd-servers=http://127.0.0.1:{client_port}", "--bind-address=127.0.0.1",
         f"--secure-port={secure_port}", "--insecure-port=0", f"--tls-cert-file={cert}",
         f"--tls-private-key-file={key}", f"--token-auth-file={tokens}", "--authorization-mode=RBAC",
         f"--service-account-key-file={key}", f"--service-account-signing-key-file={key}",
         "--service-account-issuer=https://kubernetes.default.svc",
         "--service-cluster-ip-range=10.250.0.0/24",
         "--disable-admission-plugins=ServiceAccount", f"--cert-dir={folder / 'certs'}", *(extra or [])],
        stdout=apiserver_log, stderr=subprocess.STDOUT, start_new_session=True))
    deadline = time.monotonic() + 120
    while True:
        if server.ready():
            break
        if any(p.poll() is not None for p in server.processes) or time.monotonic() > deadline:
            server.stop()
            tail = (folder / "kube-apiserver.log").read_text(errors="replace")[-2000:]
            raise RuntimeError(f"kube-apiserver did not become ready:\n{tail}")
        time.sleep(0.5)
    _wait_for_rbac(server, deadline)
    return server


def _wait_for_rbac(server: ApiServer, deadline: float) -> None:
    """Wait until the bootstrap ClusterRoles exist (the server creates them just after it first answers)."""
    while time.monotonic() < deadline:
        try:
            if server.request("GET", "/apis/rbac.authorization.k8s.io/v1/clusterroles/system:basic-user"):
                return
        except (OSError, urllib.error.URLError):
            pass
        time.sleep(0.5)
    raise RuntimeError("kube-apiserver did not create its bootstrap RBAC roles")
