"""S3 helpers shared by the engine (large templates) and the TOSCA plugin (artifacts)."""

from __future__ import annotations

import hashlib
from typing import Any

from botocore.exceptions import ClientError

from formwright.cloud.errors import error_code
from formwright.cloud.regions import dns_suffix, object_url, partition_id  # noqa: F401 - at home there
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
            raise _forbidden(s3, bucket) from None
    kwargs: dict[str, Any] = {"Bucket": bucket}
    if region != "us-east-1":
        kwargs["CreateBucketConfiguration"] = {"LocationConstraint": region}
    try:
        s3.create_bucket(**kwargs)
    except ClientError as err:
        if error_code(err) not in ("BucketAlreadyOwnedByYou",):
            raise CloudError(f"cannot create bucket '{bucket}': {error_code(err) or err}") from None
    return True


def _forbidden(s3: Any, bucket: str) -> CloudError:
    """HeadBucket answers 403 both for another account's bucket and for ours without s3:ListBucket;
    ListBuckets (our own buckets) tells them apart when we may call it."""
    try:
        ours = any(b.get("Name") == bucket for b in s3.list_buckets().get("Buckets", []))
    except ClientError:
        return CloudError(f"bucket '{bucket}': access denied (HTTP 403)", hint="either another account owns "
                          "it, or this one lacks s3:ListBucket on it; s3:ListAllMyBuckets would tell which")
    if ours:
        return CloudError(f"bucket '{bucket}' is this account's, but access to it is denied",
                          hint="grant s3:ListBucket, s3:GetObject and s3:PutObject on it to the caller")
    return CloudError(f"bucket '{bucket}' is owned by another account", hint="it cannot be used: set "
                      "`artifact_bucket:` to a bucket of this account")


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
