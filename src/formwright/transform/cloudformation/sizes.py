"""Sizes: TOSCA scalar-unit sizes, and choosing an EC2 instance type for num_cpus / mem_size."""

from __future__ import annotations

from formwright.errors import InputError
from formwright.tosca.model import Location

# (type, vCPUs, memory GiB), smallest first: the first that fits both wins.
INSTANCE_TYPES = (
    ("t3.micro", 2, 1), ("t3.small", 2, 2), ("t3.medium", 2, 4), ("t3.large", 2, 8), ("t3.xlarge", 4, 16),
    ("t3.2xlarge", 8, 32), ("m5.4xlarge", 16, 64), ("m5.8xlarge", 32, 128), ("m5.12xlarge", 48, 192),
    ("m5.16xlarge", 64, 256), ("m5.24xlarge", 96, 384),
)
DEFAULT_INSTANCE_TYPE = "t3.micro"


def _scalar(value: object, unit: str, where: Location | None) -> float:
    from toscaparser.elements.scalarunit import ScalarUnit_Size

    if isinstance(value, (int, float)):
        return float(value)
    try:
        return float(ScalarUnit_Size(str(value)).get_num_from_scalar_unit(unit))
    except Exception:  # noqa: BLE001 - tosca-parser's ValueError subclasses
        raise InputError(f"'{value}' is not a size (like '2 GB')", file=where.file if where else None,
                         line=where.line if where else None) from None


def gigabytes(value: object, where: Location | None) -> float:
    """A TOSCA size (`"10 GB"`, or a bare number of GB) in gigabytes."""
    return _scalar(value, "GB", where)


def megabytes(value: object, where: Location | None) -> float:
    """A TOSCA size (`"512 MB"`, or a bare number of MB) in megabytes."""
    return _scalar(value, "MB", where)


def instance_type(cpus: int | None, memory_mb: float | None, where: Location | None) -> str:
    """The smallest instance type with at least `cpus` vCPUs and `memory_mb` of memory."""
    need_cpu = cpus or 1
    need_gib = (memory_mb or 0) / 1024
    for name, vcpus, gib in INSTANCE_TYPES:
        if vcpus >= need_cpu and gib + 1e-9 >= need_gib:
            return name
    raise InputError(f"no instance type has {need_cpu} vCPUs and {need_gib:g} GiB of memory",
                     file=where.file if where else None, line=where.line if where else None)
