"""AWS regions and partitions, from botocore's own partition data (no cloud call)."""

from __future__ import annotations

import functools
import json
import re
from pathlib import Path
from typing import Any


@functools.cache
def _partitions() -> list[dict[str, Any]]:
    import botocore

    data = json.loads((Path(botocore.__file__).parent / "data" / "partitions.json").read_text())
    return list(data["partitions"])


def partition_of(region: str) -> dict[str, Any] | None:
    """botocore's partition record (`id`, `outputs.dnsSuffix` …) for a region name, or None."""
    for partition in _partitions():
        if region in partition["regions"] or re.fullmatch(partition["regionRegex"], region):
            return partition
    return None


def is_region(region: str) -> bool:
    """True for a region name some AWS partition has or could have (botocore's regionRegex)."""
    return not region.endswith("-global") and partition_of(region) is not None
