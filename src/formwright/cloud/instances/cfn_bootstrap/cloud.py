"""The local cloud as the helpers reach it: its CloudFormation query API, S3 objects and handle URLs.

The endpoint and default region are written into the instance at boot (/opt/aws/etc/formwright-cloud.json);
`--url` overrides the endpoint as the real helpers' option does. Requests carry an Authorization header
naming the service and region (the local cloud routes by it, and checks no signature). S3 URLs of AWS's
forms (https://BUCKET.s3[.REGION].amazonaws.com/KEY, https://s3[.REGION].amazonaws.com/BUCKET/KEY) are read
from the local cloud's S3.
"""

from __future__ import annotations

import json
import os
import re
import time
import urllib.error
import urllib.parse
import urllib.request
import xml.etree.ElementTree as ElementTree
from typing import Any

CONFIG = "/opt/aws/etc/formwright-cloud.json"
S3_HOST = re.compile(r"^(?:(?P<bucket>.+)\.)?s3(?:[.-](?P<region>[a-z0-9-]+))?\.amazonaws\.com$")


class CloudError(Exception):
    """An error the local cloud answered (`Code: Message`, as the helpers print it)."""


def settings() -> dict[str, Any]:
    """What the local cloud wrote at boot: `url` (environment FORMWRIGHT_CLOUD_URL overrides it), `region`,
    `yum_to_apt` (the Debian package standing for a yum one)."""
    try:
        with open(os.environ.get("FORMWRIGHT_CLOUD_CONFIG", CONFIG)) as handle:
            found = json.load(handle)
    except (OSError, ValueError):
        found = {}
    if os.environ.get("FORMWRIGHT_CLOUD_URL"):
        found["url"] = os.environ["FORMWRIGHT_CLOUD_URL"]
    return {**found, "url": str(found.get("url") or "http://10.213.0.1:5000"),
            "region": str(found.get("region") or "us-east-1")}


def _opener() -> urllib.request.OpenerDirector:
    return urllib.request.build_opener(urllib.request.ProxyHandler({}))  # the local cloud is never proxied


def call(action: str, params: dict[str, str], region: str | None = None, url: str | None = None,
         retries: int = 3) -> ElementTree.Element:
    """One CloudFormation query API call; the answer's XML root (namespace removed), or CloudError."""
    where = settings()
    region = region or where["region"]
    body = urllib.parse.urlencode({"Action": action, "Version": "2010-05-15", **params}).encode()
    headers = {"Content-Type": "application/x-www-form-urlencoded; charset=utf-8",
               "Authorization": _authorization("cloudformation", region),
               "X-Amz-Date": time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())}
    request = urllib.request.Request((url or where["url"]).rstrip("/") + "/", data=body, headers=headers)
    for attempt in range(retries + 1):
        try:
            with _opener().open(request, timeout=30) as reply:
                return _xml(reply.read())
        except urllib.error.HTTPError as err:
            root = _xml(err.read())
            code = root.findtext(".//Code") or str(err.code)
            raise CloudError(f"{code}: {root.findtext('.//Message') or err.reason}") from None
        except OSError as err:
            if attempt == retries:
                raise CloudError(f"could not reach the local cloud at {url or where['url']}: {err}") from None
            time.sleep(1 + attempt)
    raise AssertionError("unreachable")


def _authorization(service: str, region: str) -> str:
    """An Authorization header naming the service and region (the local cloud routes by it; it checks no
    signature, so none is made)."""
    stamp = time.strftime("%Y%m%d", time.gmtime())
    return f"AWS4-HMAC-SHA256 Credential=cfn-bootstrap/{stamp}/{region}/{service}/aws4_request, " \
           "SignedHeaders=host, Signature=0"


def _xml(data: bytes) -> ElementTree.Element:
    try:
        root = ElementTree.fromstring(data)
    except ElementTree.ParseError:
        return ElementTree.Element("Empty")
    for element in root.iter():
        element.tag = element.tag.rsplit("}", 1)[-1]
    return root


def metadata(stack: str, resource: str, region: str | None = None, url: str | None = None) -> Any:
    """The resource's Metadata (DescribeStackResource, as the real cfn-init reads it)."""
    root = call("DescribeStackResource", {"StackName": stack, "LogicalResourceId": resource}, region, url)
    text = root.findtext(".//StackResourceDetail/Metadata")
    return json.loads(text) if text else {}


def local_url(url: str) -> str:
    """`url` as read here: an S3 URL goes to the local cloud's S3 (path style); others are unchanged."""
    parts = urllib.parse.urlsplit(url)
    found = S3_HOST.match(parts.hostname or "")
    if not found:
        return url
    path = parts.path if not found.group("bucket") else f"/{found.group('bucket')}{parts.path}"
    return str(settings()["url"]).rstrip("/") + path + (f"?{parts.query}" if parts.query else "")


def s3_bucket(url: str) -> str | None:
    """The bucket an S3 URL names, else None."""
    parts = urllib.parse.urlsplit(url)
    found = S3_HOST.match(parts.hostname or "")
    if not found:
        return None
    return found.group("bucket") or parts.path.lstrip("/").split("/", 1)[0]


def fetch(url: str, signed: bool = False) -> bytes:
    """The body at `url` (S3 URLs from the local cloud; `signed`: with the instance's credentials, as an
    AWS::CloudFormation::Authentication block of type S3 gives them, else anonymously)."""
    headers = {}
    if signed:
        headers["Authorization"] = _authorization("s3", str(settings()["region"]))
    try:
        with _opener().open(urllib.request.Request(local_url(url), headers=headers), timeout=60) as reply:
            return bytes(reply.read())
    except OSError as err:
        raise CloudError(f"Failed to retrieve {url}: {err}") from None


def put(url: str, body: bytes) -> None:
    """PUT `body` to a pre-signed URL (a WaitConditionHandle) with no Content-Type, as the user guide asks."""
    request = urllib.request.Request(url, data=body, method="PUT", headers={"Content-Type": ""})
    try:
        with _opener().open(request, timeout=30):
            return
    except urllib.error.HTTPError as err:
        root = _xml(err.read())
        code, message = root.findtext(".//Code") or err.code, root.findtext(".//Message") or err.reason
        raise CloudError(f"{code}: {message}") from None
    except OSError as err:
        raise CloudError(f"could not reach {url}: {err}") from None
