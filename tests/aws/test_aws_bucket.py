"""`artifact_bucket:` chooses the bucket large templates go to (on the local cloud), and a 403 from
HeadBucket is told apart: another account's bucket, or ours without s3:ListBucket (HeadBucket answers 403
for both, per the S3 API reference; ListBuckets lists only the caller's own buckets). Stubber stands in
for S3 in the 403 cases: the local cloud does not enforce IAM policies."""

from __future__ import annotations

import json

import boto3
import pytest
from botocore.stub import Stubber

from formwright.cloud.s3 import ensure_bucket
from formwright.errors import CloudError


def test_artifact_bucket_takes_the_large_template(cloud, run_cli, tmp_path) -> None:
    # over the 51,200-byte TemplateBody limit: it must go through TemplateURL, into the chosen bucket
    template = {"Metadata": {"Pad": "x" * 60_000}, "Resources": {"Q": {"Type": "AWS::SQS::Queue"}}}
    (tmp_path / "big.json").write_text(json.dumps(template))
    (tmp_path / "formwright.yaml").write_text(
        "name: big\nstacks:\n  s: {template: big.json, artifact_bucket: my-artifacts}\n")
    result = run_cli("deploy", str(tmp_path), "-y", "--output", "json")
    assert result.code == 0, result.err
    s3 = cloud.client("s3")
    keys = [o["Key"] for o in s3.list_objects_v2(Bucket="my-artifacts").get("Contents", [])]
    assert len(keys) == 1 and keys[0].startswith("big/s/")
    buckets = {b["Name"] for b in s3.list_buckets()["Buckets"]}
    assert not any(name.startswith("formwright-") for name in buckets)  # the managed one was not needed


def forbidden_s3(listed: list[str] | None):
    s3 = boto3.client("s3", region_name="us-east-1", aws_access_key_id="x", aws_secret_access_key="x")
    stubber = Stubber(s3)
    stubber.add_client_error("head_bucket", "403", "Forbidden", http_status_code=403)
    if listed is None:
        stubber.add_client_error("list_buckets", "AccessDenied", "Access Denied", http_status_code=403)
    else:
        stubber.add_response("list_buckets", {"Buckets": [{"Name": n} for n in listed]})
    return s3, stubber


@pytest.mark.parametrize(("listed", "says"), [
    (["theirs-or-ours"], "is this account's, but access to it is denied"),
    (["another"], "is owned by another account"),
    (None, "either another account owns it, or this one lacks s3:ListBucket"),
])
def test_a_403_on_head_bucket_tells_whose_bucket_it_is(listed, says) -> None:
    s3, stubber = forbidden_s3(listed)
    with stubber, pytest.raises(CloudError) as err:
        ensure_bucket(s3, "theirs-or-ours", "us-east-1", owner="123456789012")
    assert says in str(err.value)
