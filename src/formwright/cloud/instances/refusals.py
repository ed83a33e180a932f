"""What a local instance cannot be, said by name before it boots (docs/local-cloud.md, "Booting instances").

Every local instance is the cached Debian 12 root, run by the host's kernel on the host's processor. So:
- its image: the ImageId is looked up as EC2 would, in the local cloud's image catalog (DescribeImages: moto's
  public AMIs and the images registered or created in the local cloud, each with its `Platform` and
  `Architecture`), or, for an id the local cloud made up for one of AWS's public image parameters
  (`/aws/service/...`, `PUBLIC_IMAGES`), in the parameter's name. A Windows image, or one of
  another architecture than the host's, is refused; an id found nowhere is a Linux image of the host's
  architecture, and boots as Debian;
- its instance type: looked up in EC2's list of instance types (moto's copy of DescribeInstanceTypes). A type
  not in it, one whose processors are of another architecture (Graviton's arm64 on an amd64 host; Mac), or
  one with GPUs, FPGAs or inference or media accelerators is refused;
- its `AWS::CloudFormation::Init` packages: `apt` ones install; a `yum` name installs as the Debian package
  `apt_name` gives (a known equivalent, or a Debian package of the same name), otherwise it is refused by
  name; `rpm` files and `msi` installers cannot install on Debian and are refused.
"""

from __future__ import annotations

import functools
import platform
from typing import Any

from formwright.cloud.instances.boot import image_dir

# Processor names as EC2 writes them, by what the host's kernel says it is (platform.machine()).
EC2_ARCHITECTURE = {"x86_64": "x86_64", "amd64": "x86_64", "aarch64": "arm64", "arm64": "arm64"}

# The stand-in image ids the local cloud makes for AWS's public image parameters (moto_server's
# patch_public_images), with the parameter each stands for: its name says the system and architecture.
PUBLIC_IMAGES: dict[str, str] = {}

# yum names of Amazon Linux / RHEL packages whose Debian package has another name (refused here when there is
# none; cfn-init in the instance installs the mapped name: helpers.py hands it this table).
YUM_TO_APT = {
    "httpd": "apache2", "httpd24": "apache2", "procps-ng": "procps", "iproute": "iproute2",
    "httpd-tools": "apache2-utils", "mod_ssl": "apache2", "mod_php": "libapache2-mod-php",
    "php-mysqlnd": "php-mysql", "php-pdo": "php-common", "mysql": "default-mysql-client",
    "mysql-server": "default-mysql-server", "mariadb": "mariadb-client", "mariadb105": "mariadb-client",
    "mariadb105-server": "mariadb-server", "mysql-devel": "default-libmysqlclient-dev",
    "postgresql-server": "postgresql", "postgresql": "postgresql-client", "gcc-c++": "g++",
    "python3-devel": "python3-dev", "openssl-devel": "libssl-dev", "zlib-devel": "zlib1g-dev",
    "bind-utils": "dnsutils", "vim-enhanced": "vim", "sqlite": "sqlite3", "redis": "redis-server",
    "redis6": "redis-server", "java-17-amazon-corretto": "openjdk-17-jdk-headless",
    "java-17-openjdk": "openjdk-17-jre-headless", "tomcat": "tomcat10", "python-pip": "python3-pip",
    "ruby-devel": "ruby-dev", "nodejs": "nodejs", "npm": "npm",
}


def host_architecture() -> str:
    """The host's processor architecture, named as EC2 names it."""
    machine = platform.machine().lower()
    return EC2_ARCHITECTURE.get(machine, machine)


def refusal(instance: Any, metadata: Any = None) -> str | None:
    """Why this moto instance cannot boot as a local instance, or None."""
    return (_image(instance) or instance_type_refusal(str(instance.instance_type))
            or packages_refusal(metadata))


def _image(instance: Any) -> str | None:
    image = str(instance.image_id)
    found = instance.ec2_backend.describe_images(filters={"image-id": image})
    if found:
        return _system(f"{image} ({found[0].name})", found[0].platform, found[0].architecture)
    parameter = PUBLIC_IMAGES.get(image)
    if parameter is None:
        return None  # an image the local cloud does not know: Linux of the host's architecture (Debian)
    return parameter_refusal(parameter, image)


def parameter_refusal(parameter: str, image: str | None = None) -> str | None:
    """Why the image an AWS public image parameter names (`/aws/service/...`: its name says the system and
    the architecture) cannot boot as a local instance, or None."""
    lowered = parameter.lower()
    where = f"{image} (the public image parameter {parameter})" if image else f"the public image {parameter}"
    return _system(where, "windows" if "windows" in lowered else None,
                   "arm64" if "arm64" in lowered else "x86_64")


def _system(where: str, os_name: Any, arch: Any) -> str | None:
    host = host_architecture()
    if str(os_name or "").lower() == "windows":
        return (f"ImageId {where} is a Windows image: every local instance is Debian GNU/Linux 12, which "
                "cannot run Windows")
    if arch and arch != host:
        return (f"ImageId {where} is an {arch} image and this host's processor is {host}: a local instance "
                "runs on the host's processor")
    return None


def instance_type_refusal(name: str) -> str | None:
    """Why an instance type cannot be a local instance's, or None."""
    from moto.ec2.models.instance_types import INSTANCE_TYPES

    kind = INSTANCE_TYPES.get(name)
    if kind is None:
        return (f"InstanceType {name} is not an EC2 instance type the local cloud knows (moto's copy of "
                "DescribeInstanceTypes)")
    host = host_architecture()
    architectures = (kind.get("ProcessorInfo") or {}).get("SupportedArchitectures") or []
    if host not in architectures:
        return (f"InstanceType {name} has {'/'.join(architectures)} processors and this host's is {host}: "
                "a local instance runs on the host's processor")
    for key, what in (("GpuInfo", "GPUs"), ("FpgaInfo", "FPGAs"), ("InferenceAcceleratorInfo",
                      "inference accelerators"), ("NeuronInfo", "Neuron accelerators"),
                      ("MediaAcceleratorInfo", "media accelerators")):
        if kind.get(key):
            return f"InstanceType {name} has {what}, which a local instance cannot have"
    return None


def packages_refusal(metadata: Any) -> str | None:
    """Why the packages of an instance's AWS::CloudFormation::Init cannot install on Debian, or None."""
    init = metadata.get("AWS::CloudFormation::Init") if isinstance(metadata, dict) else None
    if not isinstance(init, dict):
        return None
    for config_name, config in init.items():
        packages = config.get("packages") if isinstance(config, dict) else None
        if config_name == "configSets" or not isinstance(packages, dict):
            continue
        where = f"AWS::CloudFormation::Init config {config_name} packages"
        for manager in ("rpm", "msi"):
            if packages.get(manager):
                names = ", ".join(sorted(packages[manager]))
                return (f"{where}: {manager} packages ({names}) cannot install on a local instance, which is "
                        "Debian GNU/Linux 12 (apt)")
        missing = sorted(n for n in packages.get("yum") or {} if apt_name(n) is None)
        if missing:
            return (f"{where}: yum packages {', '.join(missing)} have no Debian package the local instance "
                    "(Debian GNU/Linux 12, apt) can install in their place; list them under `apt` by their "
                    "Debian names")
    return None


def apt_name(yum_name: str) -> str | None:
    """The Debian package that stands for a yum package: a known equivalent, or the Debian package of the
    same name (in the image's package list); None when there is none."""
    mapped = YUM_TO_APT.get(yum_name, yum_name)
    known = debian_packages()
    return mapped if mapped in known or not known else None  # an image without package lists: apt will say


@functools.cache
def debian_packages() -> frozenset[str]:
    """The names of the packages in the image's Debian package lists (as its `apt-get` sees them)."""
    names: set[str] = set()
    lists = image_dir() / "var/lib/apt/lists"
    for packages in lists.glob("*_Packages") if lists.is_dir() else []:
        with open(packages, encoding="utf-8", errors="replace") as handle:
            names.update(line[9:].strip() for line in handle if line.startswith("Package: "))
    return frozenset(names)
