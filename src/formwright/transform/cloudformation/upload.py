"""Uploading an artifact's files/ folder to the artifact bucket (created when missing).

files/ is content-addressed (`<sha256 prefix>/<name>`, each distinct content once), and the key of a
file in the bucket is its path under files/, which is the key the template's cfn-init metadata and
Beanstalk source bundles name.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from formwright.cloud.s3 import ensure_bucket, put_if_changed


def upload_files(s3: Any, bucket: str, files: Path, region: str, owner: str | None = None) -> int:
    """Upload every file under `files` with its relative path as key, skipping unchanged ones;
    return how many."""
    ensure_bucket(s3, bucket, region, owner)
    count = 0
    for path in sorted(p for p in files.rglob("*") if p.is_file()):
        if put_if_changed(s3, bucket, path.relative_to(files).as_posix(), path.read_bytes(), owner):
            count += 1
    return count
