"""The rules of instances/refusals.py on their own (fast: no local cloud, no boot)."""

from __future__ import annotations

import pytest

from formwright.cloud.instances import refusals

DEBIAN = frozenset({"apache2", "php", "php-mysql", "git", "mariadb-server"})


@pytest.fixture(autouse=True)
def _debian(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(refusals, "debian_packages", lambda: DEBIAN)  # the image's lists, pinned


def test_a_yum_name_is_its_debian_equivalent_or_the_same_name_or_none() -> None:
    assert refusals.apt_name("httpd") == "apache2"
    assert refusals.apt_name("php-mysqlnd") == "php-mysql"
    assert refusals.apt_name("git") == "git"
    assert refusals.apt_name("amazon-linux-extras") is None


def test_packages_are_refused_by_name_in_any_config_but_configsets() -> None:
    init = {"configSets": {"default": ["web"]},
            "web": {"packages": {"apt": {"nginx": []}, "yum": {"httpd": [], "php": []}}},
            "extra": {"packages": {"yum": {"amazon-linux-extras": [], "git": []}}}}
    reason = refusals.packages_refusal({"AWS::CloudFormation::Init": init})
    assert reason == ("AWS::CloudFormation::Init config extra packages: yum packages amazon-linux-extras "
                      "have no Debian package the local instance (Debian GNU/Linux 12, apt) can install in "
                      "their place; list them under `apt` by their Debian names")
    del init["extra"]
    assert refusals.packages_refusal({"AWS::CloudFormation::Init": init}) is None
    assert refusals.packages_refusal(None) is None
    windows = {"AWS::CloudFormation::Init": {"config": {"packages": {"msi": {"app": "https://x/app.msi"}}}}}
    assert "msi packages (app) cannot install" in refusals.packages_refusal(windows)


def test_instance_types_by_processor_and_accelerator(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(refusals.platform, "machine", lambda: "x86_64")
    assert refusals.instance_type_refusal("t3.micro") is None
    assert "arm64 processors" in refusals.instance_type_refusal("m6g.large")
    assert "x86_64_mac processors" in refusals.instance_type_refusal("mac1.metal")
    assert "inference accelerators" in refusals.instance_type_refusal("inf1.xlarge")
    monkeypatch.setattr(refusals.platform, "machine", lambda: "aarch64")  # on an arm64 host it turns around
    assert refusals.instance_type_refusal("m6g.large") is None
    assert "x86_64 processors and this host's is arm64" in refusals.instance_type_refusal("t3.micro")


def test_a_public_image_parameter_is_judged_by_its_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(refusals.platform, "machine", lambda: "x86_64")
    windows = "/aws/service/ami-windows-latest/Windows_Server-2022-English-Full-Base"
    assert refusals.parameter_refusal(windows) == (
        f"ImageId the public image {windows} is a Windows image: every local instance is Debian GNU/Linux "
        "12, which cannot run Windows")
    assert refusals.parameter_refusal("/aws/service/debian/release/12/latest/amd64") is None
    assert "is an arm64 image and this host's processor is x86_64" in refusals.parameter_refusal(
        "/aws/service/canonical/ubuntu/server/22.04/stable/current/arm64/hvm/ebs-gp2/ami-id")
