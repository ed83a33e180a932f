"""Putting artifacts in their bucket: only those not there already (same MD5), so an unchanged artifact is
never uploaded again."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from formwright.cloud.s3 import put_if_changed
from formwright.packaging.artifacts import Artifact


def upload_artifacts(s3: Any, bucket: str, artifacts: Iterable[Artifact], *, owner: str | None = None) -> int:
    """Upload each artifact unless the bucket holds it already; the number uploaded."""
    return sum(1 for artifact in artifacts
               if put_if_changed(s3, bucket, artifact.key, artifact.data, owner=owner))
