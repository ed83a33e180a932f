"""The package proxy: booted instances reach Debian's registry through it, and nothing else beyond the bridge.

An instance's network namespace has no default route (boot.py): it reaches the host's bridge address and the
other instances, nothing more. Its apt is told to use this proxy (`/etc/apt/apt.conf.d/01formwright-proxy`),
which the local cloud runs on the bridge's host address, at a port of its own (each local cloud on the
machine has its own). The proxy forwards plain HTTP requests (GET, HEAD) and HTTPS tunnels (CONNECT to port
443) to Debian's registry only: the hosts the image's apt sources name, `deb.debian.org` and
`security.debian.org`. Anything else is answered 403, naming the host. A redirect is handed back to apt as
it is, so it too goes through the same check. The host's own proxy settings (`http_proxy`) are honoured
for plain HTTP.
"""

from __future__ import annotations

import http.client
import re
import select
import socket
import threading
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from formwright.cloud.instances import boot

DEBIAN_HOSTS = frozenset({"deb.debian.org", "security.debian.org"})
APT_CONFIG = "etc/apt/apt.conf.d/01formwright-proxy"
HOP_BY_HOP = {"connection", "keep-alive", "proxy-connection", "proxy-authorization", "proxy-authenticate",
              "te", "trailers", "transfer-encoding", "upgrade"}



class _ProxyServer(ThreadingHTTPServer):
    """The proxy's listener, with the hosts it forwards to."""

    daemon_threads = True
    allowed: frozenset[str] = frozenset()


_server: dict[str, _ProxyServer] = {}
_lock = threading.Lock()


def registry_hosts() -> frozenset[str]:
    """The hosts of Debian's registry: those the image's apt sources name, and Debian's own."""
    sources = boot.image_dir() / "etc/apt"
    named = set(DEBIAN_HOSTS)
    for path in [sources / "sources.list", *sorted(sources.glob("sources.list.d/*"))]:
        try:
            text = path.read_text(errors="replace")
        except OSError:
            continue
        named.update(m.lower() for m in re.findall(r"\bhttps?://([^/\s:]+)", text))
    return frozenset(named)


def ensure_running() -> str:
    """Start the proxy on the bridge's host address once per local cloud; its URL (as an instance uses it)."""
    with _lock:
        if "server" not in _server:
            boot.ensure_bridge()
            try:
                server = _ProxyServer((boot.HOST_ADDRESS, 0), _Handler)
            except OSError as err:
                raise boot.BootRefused(f"the package proxy cannot listen on {boot.HOST_ADDRESS}: {err}") \
                    from None
            server.allowed = registry_hosts()
            threading.Thread(target=server.serve_forever, name="package-proxy", daemon=True).start()
            _server["server"] = server
        port = _server["server"].server_address[1]
    return f"http://{boot.HOST_ADDRESS}:{port}/"


def configure_apt(root: Path, url: str) -> None:
    """Send the downloads of the apt in `root` (an instance's) through the proxy at `url`."""
    (root / APT_CONFIG).write_text(
        f"// formwright local cloud: packages come from Debian's registry through the host's proxy\n"
        f'Acquire::http::Proxy "{url}";\nAcquire::https::Proxy "{url}";\n')


class _Handler(BaseHTTPRequestHandler):
    """One request of an instance: forwarded when it is for Debian's registry, refused otherwise."""

    server: _ProxyServer

    protocol_version = "HTTP/1.0"  # one request per connection: the body ends when the connection closes

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the local cloud's log is not the place for every package download."""

    def _refuse(self, host: str) -> None:
        body = (f"formwright local cloud: the package proxy reaches only Debian's registry "
                f"({', '.join(sorted(self.server.allowed))}); {host or 'this request'} is not part of it\n")
        self.send_response(403, "Forbidden by the local cloud's package proxy")
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body.encode())))
        self.end_headers()
        self.wfile.write(body.encode())

    def _forward(self) -> None:
        target = urlsplit(self.path)
        host = (target.hostname or "").lower()
        if target.scheme != "http" or host not in self.server.allowed or target.port not in (None, 80):
            self._refuse(host)
            return
        upstream = urllib.request.getproxies().get("http")
        via = urlsplit(upstream) if upstream else None
        server, port = (via.hostname or host, via.port or 80) if via else (host, 80)
        connection = http.client.HTTPConnection(server, port, timeout=60)
        path = self.path if via else (target.path or "/") + (f"?{target.query}" if target.query else "")
        headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_BY_HOP}
        headers["Host"] = target.netloc
        try:
            connection.request(self.command, path, headers=headers)
            reply = connection.getresponse()
            self.send_response(reply.status, reply.reason)
            for key, value in reply.getheaders():
                if key.lower() not in HOP_BY_HOP:
                    self.send_header(key, value)
            self.send_header("Connection", "close")
            self.end_headers()
            while self.command != "HEAD" and (chunk := reply.read(65536)):
                self.wfile.write(chunk)
        except OSError as err:
            self.send_error(502, f"the local cloud's package proxy could not reach {host}: {err}")
        finally:
            connection.close()

    do_GET = _forward  # noqa: N815 - http.server's naming
    do_HEAD = _forward  # noqa: N815

    def do_CONNECT(self) -> None:  # noqa: N802 - http.server's naming
        """An HTTPS tunnel to Debian's registry (port 443) only."""
        host, _, port = self.path.rpartition(":")
        if host.lower() not in self.server.allowed or port != "443":
            self._refuse(host)
            return
        try:
            remote = socket.create_connection((host, 443), timeout=60)
        except OSError as err:
            self.send_error(502, f"the local cloud's package proxy could not reach {host}: {err}")
            return
        self.send_response(200, "Connection established")
        self.end_headers()
        _pipe(self.connection, remote)


def _pipe(one: socket.socket, other: socket.socket) -> None:
    """Copy bytes both ways until either side closes."""
    with other:
        while True:
            ready, _, _ = select.select([one, other], [], [], 60)
            if not ready:
                return
            for source in ready:
                data = source.recv(65536)
                if not data:
                    return
                (other if source is one else one).sendall(data)
