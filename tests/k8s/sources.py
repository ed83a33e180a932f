"""The Flux source-controller's part, played by the tests: artifacts (tar.gz files) served over HTTP on
127.0.0.1, and a GitRepository's `status.artifact` written as the controller writes it."""

from __future__ import annotations

import functools
import hashlib
import http.server
import io
import tarfile
import threading
from pathlib import Path

from .cluster import ApiServer


def tarball(files: dict[str, str]) -> bytes:
    """A tar.gz of `files`, laid out as the source-controller packs an artifact (paths from the root)."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w:gz") as archive:
        for name, text in files.items():
            data = text.encode()
            member = tarfile.TarInfo(name)
            member.size = len(data)
            archive.addfile(member, io.BytesIO(data))
    return out.getvalue()


class Storage:
    """The source-controller's artifact storage: tarballs served over HTTP on 127.0.0.1."""

    def __init__(self, folder: Path) -> None:
        folder.mkdir(parents=True, exist_ok=True)
        self.folder = folder
        handler = functools.partial(_Quiet, directory=str(folder))
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def publish(self, files: dict[str, str], revision: str) -> dict:
        """Store an artifact of `files`; the `status.artifact` the source-controller would write."""
        data = tarball(files)
        return self.store(f"{hashlib.sha256(data).hexdigest()[:16]}.tar.gz", data, revision)

    def store(self, name: str, data: bytes, revision: str) -> dict:
        """Store `data` (any bytes, a broken archive too) as artifact `name`; its `status.artifact`."""
        (self.folder / name).write_bytes(data)
        return {"url": f"{self.url}/{name}", "digest": "sha256:" + hashlib.sha256(data).hexdigest(),
                "revision": revision, "path": name}

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


def set_artifact(server: ApiServer, namespace: str, name: str, artifact: dict) -> None:
    """Write a GitRepository's status as the source-controller does (the status subresource)."""
    ready = {"type": "Ready", "status": "True", "reason": "Succeeded", "message": "stored artifact",
             "lastTransitionTime": "2026-01-01T00:00:00Z"}
    path = f"/apis/source.toolkit.fluxcd.io/v1/namespaces/{namespace}/gitrepositories/{name}/status"
    server.request("PATCH", path, {"status": {"artifact": artifact, "conditions": [ready]}},
                   content_type="application/merge-patch+json")


