"""S3 helpers shared by the engine (large templates) and the TOSCA plugin (artifacts)."""

from __future__ import annotations

import hashlib
from typing import Any

from botocore.exceptions import ClientError

from formwright.cloud.errors import error_code
from formwright.errors import CloudError


def _owner(owner: str | None) -> dict[str, str]:
    # The managed bucket's name is predictable: every call checks it belongs to our account, so a
    # bucket someone else made under that name is never written to or read from.
    return {"ExpectedBucketOwner": owner} if owner else {}


def ensure_bucket(s3: Any, bucket: str, region: str, owner: str | None = None) -> bool:
    """Create `bucket` in `region` unless it exists (and is `owner`'s); True when it was created now."""
    try:
        s3.head_bucket(Bucket=bucket, **_owner(owner))
        return False
    except ClientError as err:
        if error_code(err) in ("403", "AccessDenied"):
            raise CloudError(f"bucket '{bucket}' exists but is not this account's", hint="it cannot be used; "
                             "delete it if it is yours, or use another account") from None
    kwargs: dict[str, Any] = {"Bucket": bucket}
    if region != "us-east-1":
        kwargs["CreateBucketConfiguration"] = {"LocationConstraint": region}
    try:
        s3.create_bucket(**kwargs)
    except ClientError as err:
        if error_code(err) not in ("BucketAlreadyOwnedByYou",):
            raise CloudError(f"cannot create bucket '{bucket}': {error_code(err) or err}") from None
    return True


def put_if_changed(s3: Any, bucket: str, key: str, data: bytes, owner: str | None = None) -> bool:
    """Upload `data` unless the object already holds exactly it (same MD5 ETag); True when uploaded."""
    digest = hashlib.md5(data, usedforsecurity=False).hexdigest()
    try:
        head = s3.head_object(Bucket=bucket, Key=key, **_owner(owner))
        if head.get("ETag", "").strip('"') == digest:
            return False
    except ClientError:
        pass
    try:
        s3.put_object(Bucket=bucket, Key=key, Body=data, **_owner(owner))
    except ClientError as err:
        raise CloudError(f"cannot upload '{key}' to bucket '{bucket}': {error_code(err) or err}") from None
    return True
