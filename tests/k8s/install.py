"""The operator as deploy/k8s installs it, run on this machine against a real API server.

There is no kubelet or container engine here, so the Deployment's pods cannot be started. Instead each
replica is a child process started from the very Deployment `kubectl kustomize` renders from the files a
user applies: its `command` (`kopf run -m formwright.sync.k8s.operator …`) with the `$(VAR)` references
expanded from the generated ConfigMap and the container's `env`, as the kubelet expands them (Kubernetes'
"Define a command and arguments" page), the identity of the Deployment's ServiceAccount (a token the API
server maps to `system:serviceaccount:<ns>:<name>`, see cluster.py), and the local cloud as its AWS.
What differs from a pod, and why: `FORMWRIGHT_TARGET=local` and the endpoint (the local cloud instead of
AWS), the state folder (a temporary folder instead of the emptyDir), the liveness port (a free port, since
two replicas share this machine's loopback).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import yaml

from .cluster import KUBECTL, ApiServer, free_port

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy" / "k8s"


def render(kustomization: Path) -> list[dict]:
    """What `kubectl kustomize` makes of a kustomization folder (the objects `apply -k` sends)."""
    out = subprocess.run([str(KUBECTL), "kustomize", str(kustomization)], capture_output=True, text=True,
                         check=True, timeout=60).stdout
    return [doc for doc in yaml.safe_load_all(out) if doc]


def _expand(text: str, env: dict[str, str]) -> str:
    """`$(VAR)` expanded as the kubelet expands a container's command (an unknown name stays as written)."""
    return re.sub(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)", lambda m: env.get(m.group(1), m.group(0)), text)


@dataclass
class Replica:
    """One operator process, its log file, and how to stop it."""

    process: subprocess.Popen
    log: Path

    def text(self) -> str:
        """Everything the replica logged so far."""
        return self.log.read_text(errors="replace") if self.log.exists() else ""

    def stop(self, kill: bool = False) -> None:
        """SIGTERM (a pod's graceful stop) or SIGKILL (a crashed node)."""
        if self.process.poll() is None:
            (self.process.kill if kill else self.process.terminate)()
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)


def replica(server: ApiServer, overlay: Path, token: str, folder: Path, *, env: dict[str, str] | None = None,
            name: str = "replica", extra_args: list[str] | None = None) -> Replica:
    """Start one replica of the overlay's Deployment as a child process with `token`'s identity."""
    objects = render(overlay)
    deployment = next(o for o in objects if o["kind"] == "Deployment")
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    config_maps = {o["metadata"]["name"]: o.get("data") or {} for o in objects if o["kind"] == "ConfigMap"}
    pod_env: dict[str, str] = {}
    for source in container.get("envFrom") or []:
        pod_env.update(config_maps[source["configMapRef"]["name"]])
    for item in container.get("env") or []:
        pod_env[item["name"]] = _expand(str(item.get("value", "")), pod_env)
    folder.mkdir(parents=True, exist_ok=True)
    # the local cloud is found through FORMWRIGHT_HOME, which the local_cloud fixture set in os.environ
    pod_env.update({"FORMWRIGHT_SYNC_STATE": str(folder / "state"), "FORMWRIGHT_TARGET": "local",
                    **(env or {})})
    argv = [_expand(arg, pod_env) for arg in container["command"] + (container.get("args") or [])]
    assert argv[0] == "kopf", argv
    argv = [sys.executable, "-m", "kopf", *argv[1:]]
    argv = [f"--liveness=http://127.0.0.1:{free_port()}/healthz" if a.startswith("--liveness=") else a
            for a in argv] + list(extra_args or [])
    log = folder / f"{name}.log"
    child_env = {**os.environ, **pod_env, "KUBECONFIG": str(server.kubeconfig(token))}
    with open(log, "wb") as out:
        process = subprocess.Popen(argv, env=child_env, stdout=out, stderr=subprocess.STDOUT,
                                   start_new_session=True, cwd=folder)
    return Replica(process, log)
