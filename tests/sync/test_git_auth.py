"""GitRepository `secretRef` in the daemon: HTTPS basic auth against a real git server (git http-backend
behind a small HTTP server on 127.0.0.1 that asks for a password), and the SSH key set-up (a real clone over
SSH against sshd: test_git_ssh.py).

Flux's git Secret keys (source-controller docs, "Secret reference"): `username` and `password` for HTTPS
basic auth; `identity` (a private key) and `known_hosts` for SSH. The SSH test here checks the command git
is given and the key file's permissions.
"""

from __future__ import annotations

import base64
import os
import subprocess
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from formwright.sync.objects import load_objects
from formwright.sync.source import GitFetcher, SourceError, Sources

from .conftest import QUEUE, Repo

USER, PASSWORD = "flux", "s3cret"


class GitOverHTTP(BaseHTTPRequestHandler):
    """`git http-backend` (smart HTTP) for the repositories under `root`, behind basic auth."""

    root: Path

    def log_message(self, *args: object) -> None:  # quiet
        pass

    def _serve(self) -> None:
        expected = "Basic " + base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
        if self.headers.get("Authorization") != expected:
            self.send_response(401)
            self.send_header("WWW-Authenticate", 'Basic realm="git"')
            self.end_headers()
            return
        path, _, query = self.path.partition("?")
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        env = dict(os.environ, GIT_PROJECT_ROOT=str(self.root), GIT_HTTP_EXPORT_ALL="1", PATH_INFO=path,
                   QUERY_STRING=query, REQUEST_METHOD=self.command,
                   CONTENT_TYPE=self.headers.get("Content-Type", ""), REMOTE_USER=USER)
        done = subprocess.run(["git", "http-backend"], input=body, env=env, capture_output=True, timeout=30,
                              check=False)
        head, _, payload = done.stdout.partition(b"\r\n\r\n")
        headers = [line.split(":", 1) for line in head.decode().split("\r\n") if ":" in line]
        status = next((int(v.split()[0]) for k, v in headers if k.lower() == "status"), 200)
        self.send_response(status)
        for key, value in headers:
            if key.lower() != "status":
                self.send_header(key, value.strip())
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    do_GET = _serve
    do_POST = _serve


@pytest.fixture
def server(tmp_path):
    handler = type("Handler", (GitOverHTTP,), {"root": tmp_path})
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


def objects(folder: Path, url: str, secret: str | None) -> Path:
    folder.mkdir(exist_ok=True)
    text = f"""\
apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata: {{name: repo, namespace: default}}
spec:
  url: {url}
  ref: {{branch: main}}
  interval: 1m
  secretRef: {{name: git-auth}}
"""
    if secret is not None:
        text += f"""---
apiVersion: v1
kind: Secret
metadata: {{name: git-auth, namespace: default}}
data:
  username: {base64.b64encode(USER.encode()).decode()}
stringData:
  password: {secret}
"""
    (folder / "objects.yaml").write_text(text)
    return folder


def test_https_basic_auth_from_the_secret(tmp_path, server):
    repo = Repo(tmp_path / "repo")
    sha = repo.commit({"template.yaml": QUEUE})
    url = f"{server}/repo/.git"
    good = load_objects(objects(tmp_path / "good", url, PASSWORD)).sources["default/repo"]
    artifact, _ = Sources(tmp_path / "state").get(good)
    assert artifact.revision == f"main@sha1:{sha}" and (artifact.path / "template.yaml").read_text() == QUEUE

    wrong = load_objects(objects(tmp_path / "wrong", url, "nope")).sources["default/repo"]
    with pytest.raises(SourceError, match=r"Authentication failed|401|could not read"):
        Sources(tmp_path / "state2").get(wrong)
    missing = load_objects(objects(tmp_path / "missing", url, None)).sources["default/repo"]
    with pytest.raises(SourceError, match=r"secret 'default/git-auth' of GitRepository 'default/repo' not "):
        Sources(tmp_path / "state3").get(missing)
    # the password never reaches a command line or a file
    assert PASSWORD not in "".join(p.read_text(errors="replace") for p in (tmp_path / "state").rglob("*")
                                   if p.is_file() and "checkouts" not in p.parts and "mirrors" not in p.parts)


def test_ssh_identity_and_known_hosts_from_the_secret(tmp_path):
    folder = tmp_path / "objects"
    folder.mkdir()
    (folder / "objects.yaml").write_text("""\
apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata: {name: repo}
spec: {url: "ssh://git@example.com/org/repo.git", interval: 1m, secretRef: {name: ssh}}
---
apiVersion: v1
kind: Secret
metadata: {name: ssh}
stringData:
  identity: "-----BEGIN OPENSSH PRIVATE KEY-----\\nkey\\n-----END OPENSSH PRIVATE KEY-----"
  known_hosts: "example.com ssh-ed25519 AAAA"
""")
    repo = load_objects(folder).sources["default/repo"]
    env = GitFetcher(tmp_path / "state").auth_env(repo)
    key = tmp_path / "state" / "auth" / "default_repo" / "identity"
    hosts = key.with_name("known_hosts")
    assert env["GIT_SSH_COMMAND"] == (f"ssh -i {key} -o IdentitiesOnly=yes -o BatchMode=yes "
                                      f"-o UserKnownHostsFile={hosts} -o StrictHostKeyChecking=yes")
    assert key.stat().st_mode & 0o777 == 0o600 and "BEGIN OPENSSH" in key.read_text()


def test_git_errors_keep_the_reason_before_git_s_fatal_line():
    from formwright.sync.source import git_error

    ssh = ("Host key verification failed.\nfatal: Could not read from remote repository.\n\n"
           "Please make sure you have the correct access rights\nand the repository exists.\n")
    assert git_error(ssh) == "Host key verification failed.; Could not read from remote repository."
    assert git_error("hint: x\nfatal: repository 'https://h/r' not found\n") == \
        "repository 'https://h/r' not found"
