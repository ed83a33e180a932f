"""deploy/k8s/README.md's install commands, run as written against a real kube-apiserver.

Two kinds of line cannot run here, and are left out by name: `podman` (no container engine on this machine)
and `kubectl rollout status` (it waits for the Deployment's pods, and there is no kubelet to run them;
tests/k8s/test_operator.py starts the operator from the same Deployment instead).
"""

from __future__ import annotations

import re
import shlex

import pytest

from . import install

pytestmark = pytest.mark.k8s

FIXTURE_CRD = install.ROOT / "tests" / "k8s" / "fixtures" / "gitrepository-crd.yaml"


def install_commands() -> list[str]:
    """The lines of the first ```sh block under "## Install"."""
    text = (install.DEPLOY / "README.md").read_text()
    section = text[text.index("## Install"):]
    block = re.search(r"```sh\n(.*?)```", section, re.S)
    assert block, "deploy/k8s/README.md has no ```sh block under ## Install"
    return [line.split("#")[0].strip() for line in block.group(1).splitlines() if line.split("#")[0].strip()]


def test_the_install_section_runs_as_written(apiserver):
    commands = install_commands()
    assert any(c.startswith("kubectl apply -k deploy/k8s/overlays/") for c in commands)
    # Flux's source-controller is a prerequisite the README names; its GitRepository CRD stands in for it
    apiserver.kubectl("apply", "-f", str(FIXTURE_CRD))
    ran, left_out = [], []
    for command in commands:
        argv = shlex.split(command)
        if argv[0] == "podman" or "rollout" in argv:
            left_out.append(command)
            continue
        assert argv[0] == "kubectl", command
        proc = apiserver.kubectl(*argv[1:], check=False, cwd=install.ROOT)
        if proc.returncode != 0 and "ensure CRDs are installed first" in proc.stderr:
            # a CRD and an object of it in one apply: kubectl's own advice is to apply again once served
            apiserver.kubectl("wait", "--for=condition=Established", "--all", "crd", "--timeout=60s")
            proc = apiserver.kubectl(*argv[1:], check=False, cwd=install.ROOT)
        assert proc.returncode == 0, f"{command}: {proc.stderr}"
        ran.append((command, proc.stdout))
    assert [c for c in left_out if not c.startswith("podman")] == [
        "kubectl -n formwright-system rollout status deploy/formwright-sync"]
    listing = ran[-1][1]
    assert ran[-1][0] == "kubectl get cfnstack -A"
    assert "formwright-sample-queue" in listing and "queue" in listing
