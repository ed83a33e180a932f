"""`sts_proxy`: STS between the CLI and the local cloud, recording what is asked of it.

The CLI reaches it with `--target aws` and botocore's AWS_ENDPOINT_URL_STS (every other service goes to the
local cloud through AWS_ENDPOINT_URL). It passes each call on to the local cloud's STS and records the
parameters, so a test sees what formwright sent (an MFA code, an external id). With `refuse` set to a role
ARN it answers AssumeRole of that role as real STS answers a caller the role's trust policy does not name
(HTTP 403, Code AccessDenied, "User: … is not authorized to perform: sts:AssumeRole on resource: …", the STS
API reference): moto's STS assumes any role, so that refusal cannot come from the local cloud itself.
"""

from __future__ import annotations

import http.server
import threading
import urllib.parse
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest


@dataclass
class StsProxy:
    """The proxy's endpoint, the calls it saw (their form parameters) and the role it refuses."""

    endpoint: str = ""
    calls: list[dict[str, str]] = field(default_factory=list)
    refuse: str | None = None

    @property
    def actions(self) -> list[str]:
        """The STS actions asked, in order."""
        return [call.get("Action", "") for call in self.calls]


def _denied(role: str) -> bytes:
    return ('<ErrorResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><Error><Type>Sender</Type>'
            "<Code>AccessDenied</Code><Message>User: arn:aws:iam::123456789012:user/dev is not authorized to "
            f"perform: sts:AssumeRole on resource: {role}</Message></Error>"
            "<RequestId>c6104cbe-af31-11e0-8154-cbc7ccf896c7</RequestId></ErrorResponse>").encode()


@pytest.fixture
def sts_proxy(cloud) -> Iterator[StsProxy]:
    """A recording STS proxy in front of the local cloud (see the module's docstring)."""
    proxy = StsProxy()

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server's name
            body = self.rfile.read(int(self.headers.get("content-length", 0)))
            params = {k: v[0] for k, v in urllib.parse.parse_qs(body.decode()).items()}
            proxy.calls.append(params)
            if params.get("Action") == "AssumeRole" and params.get("RoleArn") == proxy.refuse:
                status, reply = 403, _denied(proxy.refuse)
            else:
                forward = urllib.request.Request(cloud.endpoint + self.path, data=body, method="POST",
                                                 headers=dict(self.headers.items()))
                with urllib.request.urlopen(forward, timeout=30) as answer:
                    status, reply = answer.status, answer.read()
            self.send_response(status)
            self.send_header("Content-Type", "text/xml")
            self.send_header("Content-Length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    proxy.endpoint = f"http://127.0.0.1:{server.server_address[1]}"
    yield proxy
    server.shutdown()
    server.server_close()
