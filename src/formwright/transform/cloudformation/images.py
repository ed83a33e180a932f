"""The image of an instance, from its `os` capability, as an AWS public SSM parameter.

No AWS call at transform time: the template declares an `AWS::SSM::Parameter::Value<AWS::EC2::Image::Id>`
parameter per distinct operating system whose default is the public parameter path AWS (or the
distribution's publisher) keeps pointing at the current image; CloudFormation resolves it at deploy
time. The paths follow the EC2 user guide "Reference AMIs using Systems Manager parameters" and the
publishers' pages (Canonical: /aws/service/canonical/ubuntu/..., Debian: /aws/service/debian/...,
Windows: /aws/service/ami-windows-latest/...). Red Hat, CentOS and Fedora publish no such parameter:
their instances get Amazon Linux 2023 (same package manager) with a warning; the parameter can be
overridden at deploy time with the image of choice.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from formwright.tosca.model import Node

AMAZON_LINUX = "/aws/service/ami-amazon-linux-latest/al2023-ami-kernel-default-{arch}"
AMAZON_LINUX_2 = "/aws/service/ami-amazon-linux-latest/amzn2-ami-hvm-{arch}-gp2"
UBUNTU = "/aws/service/canonical/ubuntu/server/{version}/stable/current/{arch}/hvm/{volume}/ami-id"
DEBIAN = "/aws/service/debian/release/{version}/latest/{arch}"
WINDOWS = "/aws/service/ami-windows-latest/Windows_Server-{version}-English-Full-Base"
UBUNTU_DEFAULT, DEBIAN_DEFAULT, WINDOWS_DEFAULT = "22.04", "12", "2022"
_ARM = ("arm64", "aarch64", "arm")


@dataclass(frozen=True)
class Image:
    """The operating system of an instance: its family (`apt`, `yum`, `windows`), a parameter name,
    the SSM path, and a note when the requested system has no public parameter."""

    family: str
    name: str
    path: str
    label: str
    note: str | None = None


def _text(value: object) -> str:
    return "" if value is None or isinstance(value, (dict, list)) else str(value).strip().lower()


def image_of(node: Node) -> Image:
    """The image of Compute `node` from its `os` capability (Amazon Linux 2023 when it says nothing)."""
    os = node.capabilities.get("os") or {}
    kind, distribution = _text(os.get("type")), _text(os.get("distribution"))
    version, arch = _text(os.get("version")), _text(os.get("architecture"))
    arm = arch in _ARM
    if kind == "windows" or distribution.startswith("windows"):
        year = next(iter(re.findall(r"20\d\d", version)), WINDOWS_DEFAULT)
        return Image("windows", f"ImageIdWindows{year}", WINDOWS.format(version=year),
                     f"Windows Server {year}")
    if distribution == "ubuntu":
        number = version if re.fullmatch(r"\d\d\.\d\d", version) else UBUNTU_DEFAULT
        volume = "ebs-gp3" if number >= "24.04" else "ebs-gp2"
        path = UBUNTU.format(version=number, arch="arm64" if arm else "amd64", volume=volume)
        return Image("apt", f"ImageIdUbuntu{number.replace('.', '')}{'Arm' if arm else ''}", path,
                     f"Ubuntu {number}")
    if distribution == "debian":
        major = version.split(".")[0] if version[:1].isdigit() else DEBIAN_DEFAULT
        return Image("apt", f"ImageIdDebian{major}{'Arm' if arm else ''}",
                     DEBIAN.format(version=major, arch="arm64" if arm else "amd64"), f"Debian {major}")
    arch_name = "arm64" if arm else "x86_64"
    if distribution in ("rhel", "redhat", "red hat", "centos", "fedora"):
        note = (f"os distribution '{distribution}' has no public SSM image parameter: the instance gets "
                "Amazon Linux 2023 (also yum/dnf)")
        return Image("yum", f"ImageId{'Arm' if arm else ''}", AMAZON_LINUX.format(arch=arch_name),
                     "Amazon Linux 2023", note)
    amazon = distribution in ("amazon", "amazonlinux", "amazon linux", "amzn", "amzn2")
    if amazon and version.startswith("2") and not version.startswith("2023"):
        return Image("yum", f"ImageIdAmazonLinux2{'Arm' if arm else ''}",
                     AMAZON_LINUX_2.format(arch=arch_name), "Amazon Linux 2")
    return Image("yum", f"ImageId{'Arm' if arm else ''}", AMAZON_LINUX.format(arch=arch_name),
                 "Amazon Linux 2023")
