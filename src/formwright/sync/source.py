"""Git sources: a bare mirror per repository, a checkout per revision, shared fetches.

Fetching uses the git CLI (no shell, a timeout, output captured), so https, ssh, file:// and local
paths work as they do for git itself; credentials come from the user's git configuration. A
checkout is the revision's tree extracted with `git archive` through tarfile's `data` filter, so
nothing in it points outside it; paths inside are read with `resolve_inside` (no `..`, no symlink
out). `Sources` fetches each repository at most once per interval, whoever asks.
"""

from __future__ import annotations

import hashlib
import io
import os
import re
import shutil
import subprocess
import tarfile
import threading
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from formwright.errors import FormwrightError, InputError
from formwright.sandbox import Sandbox
from formwright.sync.objects import GitRepository

GIT_TIMEOUT = 300.0
KEEP_CHECKOUTS = 6


class SourceError(FormwrightError):
    """The source could not be fetched or read (Flux's ArtifactFailed)."""


@dataclass(frozen=True)
class Artifact:
    """One revision of a source, checked out: `main@sha1:<sha>` and the folder holding its tree."""

    source: str
    revision: str
    path: Path

    @property
    def sha(self) -> str:
        """The commit (or digest) part of the revision."""
        return self.revision.rsplit(":", 1)[-1]


def safe_name(text: str) -> str:
    """A file-system friendly form of a key (`ns/name` → `ns_name`)."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text)


def run_git(args: list[str], *, cwd: Path | None = None, timeout: float = GIT_TIMEOUT,
            binary: bool = False, env_extra: dict[str, str] | None = None) -> bytes:
    """Run git without a shell; a failure becomes a one-line SourceError with git's message."""
    env = dict(os.environ, GIT_TERMINAL_PROMPT="0", LC_ALL="C", **(env_extra or {}))
    try:
        done = subprocess.run(
            ["git", *args], cwd=cwd, capture_output=True, timeout=timeout, env=env, check=False
        )
    except FileNotFoundError:
        raise SourceError("the git program is not installed", hint="install git") from None
    except subprocess.TimeoutExpired:
        raise SourceError(f"git {args[0]} timed out after {timeout:.0f} s") from None
    if done.returncode != 0:
        message = git_error(done.stderr.decode(errors="replace")) or f"exit code {done.returncode}"
        raise SourceError(f"git {_subcommand(args)} failed: {message}")
    return done.stdout


def git_error(stderr: str) -> str:
    """git's reason on one line: what came before its first `fatal:`/`error:` line, and that line (ssh says
    "Host key verification failed." before git's "fatal: Could not read from remote repository.")."""
    lines = [ln.strip() for ln in stderr.splitlines()
             if ln.strip() and not ln.startswith(("hint:", "warning:"))]
    for at, line in enumerate(lines):
        if line.startswith(("fatal:", "error:")):
            lines = lines[:at + 1]
            break
    return "; ".join(ln.removeprefix("fatal: ") for ln in lines)


def _subcommand(args: list[str]) -> str:
    """The git command of `args` (after options such as `--git-dir DIR` and `-c KEY=VALUE`)."""
    at = 0
    while at < len(args) and args[at].startswith("-"):
        at += 2 if args[at] in ("--git-dir", "-c", "-C") else 1
    return args[at] if at < len(args) else "git"


def _safe_members(members: list[tarfile.TarInfo], dest: str) -> list[tarfile.TarInfo]:
    """The members tarfile's `data` filter accepts (links out of the tree and devices are dropped)."""
    kept = []
    for member in members:
        try:
            tarfile.data_filter(member, dest)
        except tarfile.FilterError:
            continue
        kept.append(member)
    return kept


def extract_tree(data: bytes, dest: Path, *, mode: Literal["r:", "r:gz", "r:*"] = "r:") -> None:
    """Extract a tar (or tar.gz with mode `r:gz`) to `dest` atomically, dropping unsafe members."""
    if dest.exists():
        return
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.parent / f".{dest.name}.{os.getpid()}.{threading.get_ident()}"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode=mode) as archive:
            members = _safe_members(archive.getmembers(), str(tmp))
            archive.extractall(tmp, members=members, filter="data")
        try:
            os.rename(tmp, dest)
        except OSError:
            if not dest.exists():
                raise
    except tarfile.TarError as err:
        raise SourceError(f"cannot unpack the source: {err}") from None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def resolve_inside(root: Path, relative: str, *, what: str = "path", revision: str = "") -> Path:
    """`root/relative`, refusing anything that resolves outside `root` (`..`, symlinks)."""
    if Path(relative).is_absolute() or ".." in Path(relative).parts:
        raise InputError(f"{what} '{relative}' must stay inside the repository")
    target = Sandbox(root).confine(relative, what=what)
    if not target.exists():
        at = f" at {revision}" if revision else ""
        raise SourceError(f"{what} '{relative}' not found in the source{at}")
    return target


def revision_of(ref_kind: str, ref_name: str, sha: str) -> str:
    """Flux's revision string: `<branch>@sha1:<sha>`, `<tag>@sha1:<sha>`, or `sha1:<sha>`."""
    return f"sha1:{sha}" if ref_kind == "commit" else f"{ref_name}@sha1:{sha}"


# Answers git's prompts from the environment, so a password never appears in a command line or a URL.
ASKPASS = """#!/bin/sh
case "$1" in
  Username*) printf '%s' "$FORMWRIGHT_GIT_USERNAME" ;;
  *) printf '%s' "$FORMWRIGHT_GIT_PASSWORD" ;;
esac
"""


class GitFetcher:
    """A bare mirror per repository under `root/mirrors`, checkouts under `root/checkouts`."""

    def __init__(self, root: Path) -> None:
        self.root = root

    def auth_env(self, repo: GitRepository) -> dict[str, str]:
        """The environment that gives git the credentials of the repository's secretRef, as Flux reads
        the Secret: `username` + `password` (HTTPS basic auth) or `identity` (+ `known_hosts`) for SSH."""
        if not repo.secret_name:
            return {}
        auth = repo.auth
        if not auth:
            raise SourceError(f"secret '{repo.namespace}/{repo.secret_name}' of GitRepository '{repo.key}' "
                              "not found", hint="add the v1 Secret to the objects folder")
        env: dict[str, str] = {}
        private = self.root / "auth" / safe_name(repo.key)
        private.mkdir(parents=True, exist_ok=True, mode=0o700)
        if "username" in auth or "password" in auth:
            askpass = self.root / "auth" / "askpass.sh"
            if not askpass.exists():
                askpass.write_text(ASKPASS)
                askpass.chmod(0o700)
            env.update(GIT_ASKPASS=str(askpass), FORMWRIGHT_GIT_USERNAME=auth.get("username", ""),
                       FORMWRIGHT_GIT_PASSWORD=auth.get("password", ""))
        if "identity" in auth:
            key = private / "identity"
            _write_private(key, auth["identity"].rstrip("\n") + "\n")
            options = f"-i {key} -o IdentitiesOnly=yes -o BatchMode=yes"
            if auth.get("known_hosts"):
                hosts = private / "known_hosts"
                _write_private(hosts, auth["known_hosts"])
                options += f" -o UserKnownHostsFile={hosts} -o StrictHostKeyChecking=yes"
            env["GIT_SSH_COMMAND"] = f"ssh {options}"
        if not env:
            raise SourceError(f"secret '{repo.namespace}/{repo.secret_name}' has neither username/password "
                              "nor identity",
                              hint="Flux's git Secret keys: username, password; or identity, known_hosts")
        return env

    def fetch(self, repo: GitRepository) -> Artifact:
        """Fetch the ref, resolve it to a commit, make sure a checkout of it exists."""
        mirror = self.root / "mirrors" / safe_name(repo.key)
        if not (mirror / "HEAD").exists():
            mirror.mkdir(parents=True, exist_ok=True)
            run_git(["init", "--quiet", "--bare", str(mirror)])
        url = repo.url
        ref = repo.ref
        if ref.commit:
            kind, name = "commit", ref.commit
            refspecs = [f"+refs/heads/{ref.branch}:refs/heads/{ref.branch}" if ref.branch
                        else "+refs/heads/*:refs/heads/*"]
        elif ref.tag:
            kind, name = "tag", ref.tag
            refspecs = [f"+refs/tags/{ref.tag}:refs/tags/{ref.tag}"]
        else:
            kind, name = "branch", ref.branch or "master"
            refspecs = [f"+refs/heads/{name}:refs/heads/{name}"]
        run_git(["--git-dir", str(mirror), "-c", "credential.helper=", "fetch", "--quiet", "--no-tags",
                 "--force", url, *refspecs], env_extra=self.auth_env(repo))
        wanted = {"commit": name, "tag": f"refs/tags/{name}", "branch": f"refs/heads/{name}"}[kind]
        try:
            sha = run_git(["--git-dir", str(mirror), "rev-parse", "--verify", "--quiet",
                           f"{wanted}^{{commit}}"]).decode().strip()
        except SourceError:
            raise SourceError(f"{kind} '{name}' not found in {url}") from None
        checkout = self.root / "checkouts" / safe_name(repo.key) / sha
        if not checkout.exists():
            tree = run_git(["--git-dir", str(mirror), "archive", "--format=tar", sha])
            extract_tree(tree, checkout)
            prune(checkout.parent, keep=KEEP_CHECKOUTS)
        if kind == "commit" and ref.branch:
            kind, name = "branch", ref.branch
        return Artifact(repo.key, revision_of(kind, name, sha), checkout)


def _write_private(path: Path, text: str) -> None:
    """Write `text` readable by this user only (created 0600, never world-readable in between)."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(text)


def fetch_artifact(source: str, url: str, digest: str, revision: str, root: Path,
                   opener: Callable[[str], bytes] | None = None) -> Artifact:
    """A Flux source-controller artifact (a tar.gz at `url`), its `sha256:<hex>` digest verified."""
    algorithm, _, expected = digest.partition(":")
    if algorithm not in ("sha256", "sha384", "sha512") or not expected:
        raise SourceError(f"artifact digest '{digest}' is not <sha256|sha384|sha512>:<hex>")
    checkout = root / "checkouts" / safe_name(source) / f"{algorithm}-{expected[:40]}"
    if not checkout.exists():
        data = (opener or _download)(url)
        actual = hashlib.new(algorithm, data).hexdigest()
        if actual != expected:
            raise SourceError(
                f"artifact digest mismatch for {url}: expected {digest}, got {algorithm}:{actual}"
            )
        extract_tree(data, checkout, mode="r:*")
        prune(checkout.parent, keep=KEEP_CHECKOUTS)
    return Artifact(source, revision or digest, checkout)


def _download(url: str) -> bytes:
    try:
        with urllib.request.urlopen(url, timeout=60) as reply:  # noqa: S310 - source-controller URL
            return bytes(reply.read())
    except OSError as err:
        raise SourceError(f"cannot download the artifact {url}: {err}") from None


def prune(folder: Path, *, keep: int) -> None:
    """Remove all but the `keep` newest checkouts in `folder`."""
    entries = [p for p in folder.iterdir() if p.is_dir() and not p.name.startswith(".")]
    entries.sort(key=lambda p: p.stat().st_mtime, reverse=True)
    for old in entries[keep:]:
        shutil.rmtree(old, ignore_errors=True)


@dataclass
class _Entry:
    lock: threading.Lock = field(default_factory=threading.Lock)
    artifact: Artifact | None = None
    fetched_at: float = float("-inf")
    error: SourceError | None = None
    spec: tuple = ()
    fetches: int = 0


class Sources:
    """Shared, rate-limited fetches: each repository at most once per its interval, whoever asks."""

    ERROR_TTL = 1.0

    def __init__(self, root: Path, fetcher: GitFetcher | None = None,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.root = root
        self.fetcher = fetcher or GitFetcher(root)
        self.clock = clock
        self._entries: dict[str, _Entry] = {}
        self._lock = threading.Lock()

    def _entry(self, key: str) -> _Entry:
        with self._lock:
            return self._entries.setdefault(key, _Entry())

    def get(self, repo: GitRepository, *, force: bool = False) -> tuple[Artifact, bool]:
        """The current artifact and whether this call fetched a new revision."""
        entry = self._entry(repo.key)
        spec = (repo.url, repo.ref, repo.credentials)
        with entry.lock:
            age = self.clock() - entry.fetched_at
            fresh = entry.spec == spec and not force
            if fresh and entry.artifact is not None and age < repo.interval:
                return entry.artifact, False
            if fresh and entry.error is not None and age < self.ERROR_TTL:
                raise entry.error
            before = entry.artifact.revision if entry.artifact else None
            entry.fetched_at, entry.spec = self.clock(), spec
            entry.fetches += 1
            try:
                entry.artifact = self.fetcher.fetch(repo)
                entry.error = None
            except FormwrightError as err:
                entry.error = err if isinstance(err, SourceError) else SourceError(str(err))
                raise entry.error from None
            return entry.artifact, entry.artifact.revision != before

    def latest(self, key: str) -> Artifact | None:
        """The last artifact fetched for `key`, without fetching."""
        return self._entry(key).artifact

    def fetch_count(self, key: str) -> int:
        """How many fetches of `key` were made (for tests and benchmarks)."""
        return self._entry(key).fetches
