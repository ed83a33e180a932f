"""`local_cloud: {instances: boot}`: the setting, its tag, the reasons booting is refused (fast, no boot)."""

from __future__ import annotations

from pathlib import Path

import pytest

from formwright.cloud import local
from formwright.cloud.emulator import checks
from formwright.cloud.instances import boot
from formwright.errors import ProjectError
from formwright.model import load_project

TEMPLATE = "Resources:\n  Q: {Type: AWS::SQS::Queue}\n"


def _project(root: Path, local_cloud: str) -> Path:
    (root / "a.yaml").write_text(TEMPLATE)
    (root / "formwright.yaml").write_text(f"name: p\nstacks:\n  a: {{template: a.yaml}}\n{local_cloud}")
    return root


def test_instances_boot_is_read_and_stub_is_the_default(tmp_path: Path) -> None:
    booting = load_project(_project(tmp_path, "local_cloud:\n  instances: boot\n"))
    assert booting.local_cloud_instances == "boot"
    assert load_project(_project(tmp_path, "")).local_cloud_instances == "stub"


def test_a_bad_instances_value_names_its_line(tmp_path: Path) -> None:
    with pytest.raises(ProjectError) as err:
        load_project(_project(tmp_path, "local_cloud:\n  instances: yes-please\n"))
    assert "`local_cloud.instances` must be `boot` or `stub`" in err.value.message
    assert err.value.line == 5


def test_the_tag_goes_only_to_the_local_cloud() -> None:
    class Target:
        kind = "local"

    assert local.instances_tags(Target(), "boot") == [{"Key": local.INSTANCES_TAG, "Value": "boot"}]
    assert local.instances_tags(Target(), "stub") == []
    Target.kind = "aws"
    assert local.instances_tags(Target(), "boot") == []


def test_not_root_is_refused_with_the_reason(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(boot.os, "geteuid", lambda: 1000)  # the suite runs as root: a user is pretended
    assert "needs root" in boot.unavailable()
    reason = checks.cannot_boot({"Web": {"Type": "AWS::EC2::Instance"}})
    assert "cannot boot instance Web" in reason and "needs root" in reason
    assert "Remove `instances: boot` to keep the stub mode" in reason
    assert checks.cannot_boot({"Q": {"Type": "AWS::SQS::Queue"}}) is None
    group = checks.cannot_boot({"G": {"Type": "AWS::AutoScaling::AutoScalingGroup"}})
    assert "cannot boot the instances of G (AWS::AutoScaling::AutoScalingGroup)" in group


def test_a_missing_image_says_how_to_build_it(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(boot.os, "geteuid", lambda: 0)
    assert "make instances-image" in boot.unavailable()


def test_an_address_outside_the_network_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(boot, "CLAIMS", tmp_path)
    with pytest.raises(boot.BootRefused, match="outside the local cloud's instance network"):
        boot._claim("172.31.0.5", "i-1")
    with pytest.raises(boot.BootRefused, match="host address"):
        boot._claim(boot.HOST_ADDRESS, "i-1")
    boot._claim("10.213.0.9", "i-1")
    with pytest.raises(boot.BootRefused, match="already used by booting instance i-1"):
        boot._claim("10.213.0.9", "i-2")
