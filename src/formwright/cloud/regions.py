"""AWS regions and partitions, from botocore's own partition data (no cloud call)."""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path
from typing import Any


@functools.cache
def _partitions() -> list[dict[str, Any]]:
    import importlib.util

    # found, not imported: checking a --region flag must not cost botocore's ~0.1 s import (transform)
    spec = importlib.util.find_spec("botocore")
    assert spec is not None and spec.origin is not None
    data = json.loads((Path(spec.origin).parent / "data" / "partitions.json").read_text())
    return list(data["partitions"])


def partition_of(region: str) -> dict[str, Any] | None:
    """botocore's partition record (`id`, `outputs.dnsSuffix` …) for a region name, or None."""
    for partition in _partitions():
        if region in partition["regions"] or re.fullmatch(partition["regionRegex"], region):
            return partition
    return None


def partition_id(region: str) -> str:
    """The region's partition (aws, aws-cn, aws-us-gov, …) from botocore's partition data."""
    partition = partition_of(region)
    return str(partition["id"]) if partition else "aws"


def dns_suffix(region: str) -> str:
    """The DNS suffix of the region's partition: amazonaws.com, amazonaws.com.cn, …"""
    partition = partition_of(region)
    return str(partition["outputs"]["dnsSuffix"]) if partition else "amazonaws.com"


def object_url(bucket: str, key: str, region: str) -> str:
    """The HTTPS URL of an S3 object as CloudFormation takes it (TemplateURL), in the region's partition."""
    return f"https://s3.{region}.{dns_suffix(region)}/{bucket}/{key}"


@functools.cache
def known_regions() -> list[str]:
    """Every region botocore's partition data names (all partitions; not the `aws-global` pseudo ones)."""
    return [name for partition in _partitions() for name in partition["regions"]
            if not name.endswith("-global")]


def is_region(region: str) -> bool:
    """True for a region some AWS partition has: botocore's list, not its regionRegex, so that a typo
    (`us-east-7`, `us-eest-1`) is refused before any call instead of reaching an endpoint that is not one."""
    return region in known_regions()


def nearest_regions(region: str) -> str:
    """A hint naming the known regions nearest to a mistyped one (or a few examples)."""
    import difflib

    close = difflib.get_close_matches(region, known_regions(), n=3, cutoff=0.6)
    if close:
        return "did you mean " + " or ".join(close) + "?"
    return "a region of an AWS partition, e.g. us-east-1, eu-west-1"
