"""S3 helpers shared by the engine (large templates) and the TOSCA plugin (artifacts)."""

from __future__ import annotations

import hashlib
from typing import Any

from botocore.exceptions import ClientError

from formwright.cloud.errors import error_code
from formwright.errors import CloudError


def ensure_bucket(s3: Any, bucket: str, region: str) -> bool:
    """Create `bucket` in `region` unless it exists; True when it was created now."""
    try:
        s3.head_bucket(Bucket=bucket)
        return False
    except ClientError:
        pass
    kwargs: dict[str, Any] = {"Bucket": bucket}
    if region != "us-east-1":
        kwargs["CreateBucketConfiguration"] = {"LocationConstraint": region}
    try:
        s3.create_bucket(**kwargs)
    except ClientError as err:
        if error_code(err) not in ("BucketAlreadyOwnedByYou",):
            raise CloudError(f"cannot create bucket '{bucket}': {error_code(err) or err}") from None
    return True


def put_if_changed(s3: Any, bucket: str, key: str, data: bytes) -> bool:
    """Upload `data` unless the object already holds exactly it (same MD5 ETag); True when uploaded."""
    digest = hashlib.md5(data, usedforsecurity=False).hexdigest()
    try:
        head = s3.head_object(Bucket=bucket, Key=key)
        if head.get("ETag", "").strip('"') == digest:
            return False
    except ClientError:
        pass
    try:
        s3.put_object(Bucket=bucket, Key=key, Body=data)
    except ClientError as err:
        raise CloudError(f"cannot upload '{key}' to bucket '{bucket}': {error_code(err) or err}") from None
    return True
