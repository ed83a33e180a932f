"""Uploading an artifact's files/ folder to the artifact bucket (created when missing)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from formwright.errors import CloudError


def ensure_bucket(s3: Any, bucket: str, region: str) -> None:
    """Create `bucket` unless it exists (in `region`)."""
    from botocore.exceptions import ClientError

    try:
        s3.head_bucket(Bucket=bucket)
        return
    except ClientError:
        pass
    try:
        if region == "us-east-1":
            s3.create_bucket(Bucket=bucket)
        else:
            s3.create_bucket(Bucket=bucket, CreateBucketConfiguration={"LocationConstraint": region})
    except ClientError as err:
        code = err.response.get("Error", {}).get("Code", "")
        if code not in ("BucketAlreadyOwnedByYou",):
            raise CloudError(f"cannot create artifact bucket '{bucket}': {code or err}") from None


def upload_files(s3: Any, bucket: str, files: Path, region: str) -> int:
    """Upload every file under `files` with its relative path as key; return how many."""
    from botocore.exceptions import ClientError

    ensure_bucket(s3, bucket, region)
    count = 0
    for path in sorted(p for p in files.rglob("*") if p.is_file()):
        key = path.relative_to(files).as_posix()
        try:
            s3.upload_file(str(path), bucket, key)
        except ClientError as err:
            raise CloudError(f"cannot upload '{key}' to bucket '{bucket}': {err}") from None
        count += 1
    return count
