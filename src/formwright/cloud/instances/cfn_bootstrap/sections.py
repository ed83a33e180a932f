"""The sections of one cfn-init config, in AWS::CloudFormation::Init's order: packages, groups, users,
sources, files, commands (services are `services.py`). Each returns what it changed, so a service that lists
it is restarted; a failure raises InitError with the message the real helper gives."""

from __future__ import annotations

import base64
import io
import json
import os
import shutil
import subprocess
import tarfile
import zipfile
from pathlib import Path
from typing import Any

from . import cloud, mustache

CMD_LOG = "/var/log/cfn-init-cmd.log"


AUTHENTICATION: dict[str, Any] = {}  # the metadata's AWS::CloudFormation::Authentication blocks (init.main)


class InitError(Exception):
    """cfn-init cannot go on; the message is what it says."""


def _installed(name: str) -> bool:
    done = subprocess.run(["dpkg-query", "-W", "-f=${Status}", name], capture_output=True, text=True,
                          check=False)
    return done.returncode == 0 and done.stdout.endswith(" installed")


def _apt(names: dict[str, list[str]], log: list[str]) -> list[str]:
    wanted = [f"{name}={versions[0]}" if versions else name for name, versions in names.items()
              if versions or not _installed(name)]
    if not wanted:
        log.append(f"apt packages already installed: {', '.join(names)}")
        return []
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    done = subprocess.run(["apt-get", "install", "-y", "--no-install-recommends", *wanted], env=env,
                          capture_output=True, text=True, check=False)
    _command_log("apt-get install " + " ".join(wanted), done)
    if done.returncode != 0:
        raise InitError(f"Could not install apt packages {', '.join(wanted)}: "
                        f"{(done.stderr or done.stdout).strip()[-400:]}")
    log.append(f"Installed apt packages: {', '.join(wanted)}")
    return list(names)


def packages(section: dict[str, Any], log: list[str]) -> list[str]:
    """Install the packages (rpm, yum, apt, rubygems, python: the real order); a yum name installs as the
    Debian package the local cloud maps it to (`yum_to_apt` of the instance's settings, helpers.py), else as
    the Debian package of the same name (apt refuses one it does not know); rpm, rubygems and msi are
    refused."""
    yum_to_apt = cloud.settings().get("yum_to_apt") or {}
    apt: dict[str, list[str]] = {}
    for manager in ("rpm", "yum", "apt", "rubygems", "python", "msi"):
        entries = section.get(manager) or {}
        if not entries:
            continue
        if manager in ("rpm", "rubygems", "msi"):
            raise InitError(f"{manager} packages cannot be installed on this image (Debian 12): "
                            f"{', '.join(entries)}; use apt packages")
        for name, versions in entries.items():
            versions = versions if isinstance(versions, list) else [versions] if versions else []
            if manager == "python":
                _pip(name, versions, log)
            elif manager == "yum":
                apt[str(yum_to_apt.get(name, name))] = []
            else:
                apt[name] = [str(v) for v in versions]
    return _apt(apt, log) if apt else []


def _pip(name: str, versions: list[Any], log: list[str]) -> None:
    if shutil.which("pip3") is None:
        raise InitError(f"python package {name}: pip3 is not installed (list python3-pip under apt first)")
    spec = f"{name}=={versions[0]}" if versions else name
    done = subprocess.run(["pip3", "install", "--break-system-packages", spec], capture_output=True,
                          text=True, check=False)
    _command_log(f"pip3 install {spec}", done)
    if done.returncode != 0:
        raise InitError(f"Could not install python package {spec}")
    log.append(f"Installed python package {spec}")


def groups(section: dict[str, Any], log: list[str]) -> list[str]:
    """Create the groups that do not exist (gid when given)."""
    made = []
    for name, spec in section.items():
        if subprocess.run(["getent", "group", name], capture_output=True, check=False).returncode == 0:
            continue
        gid = (spec or {}).get("gid")
        _must(["groupadd", *(["-g", str(gid)] if gid else []), name], f"Could not create group {name}")
        log.append(f"Created group {name}")
        made.append(name)
    return made


def users(section: dict[str, Any], log: list[str]) -> list[str]:
    """Create the users: non-interactive system users (shell /sbin/nologin), uid, groups and homeDir."""
    made = []
    for name, spec in section.items():
        spec = spec or {}
        extra = (["-u", str(spec["uid"])] if spec.get("uid") else []) + \
            (["-d", str(spec["homeDir"])] if spec.get("homeDir") else []) + \
            (["-G", ",".join(spec["groups"])] if spec.get("groups") else [])
        exists = subprocess.run(["getent", "passwd", name], capture_output=True, check=False).returncode == 0
        if exists:
            if extra:
                _must(["usermod", *extra, name], f"Could not update user {name}")
            continue
        _must(["useradd", "-r", "-M", "-s", "/sbin/nologin", *extra, name], f"Could not create user {name}")
        log.append(f"Created user {name}")
        made.append(name)
    return made


def sources(section: dict[str, Any], log: list[str]) -> list[str]:
    """Download each archive (tar, tar.gz, tar.bz2, zip) and unpack it into its folder."""
    for target, url in section.items():
        data = _fetched(str(url))
        Path(target).mkdir(parents=True, exist_ok=True)
        try:
            if data[:4] == b"PK\x03\x04":
                with zipfile.ZipFile(io.BytesIO(data)) as archive:
                    archive.extractall(target)  # noqa: S202 - the template's own archive, as cfn-init unpacks it
            else:
                with tarfile.open(fileobj=io.BytesIO(data), mode="r:*") as archive:
                    try:
                        archive.extractall(target, filter="tar")
                    except TypeError:  # a Python without extraction filters
                        archive.extractall(target)  # noqa: S202 - the template's own archive
        except (tarfile.TarError, zipfile.BadZipFile) as err:
            raise InitError(f"Could not unpack {url} into {target}: {err}") from None
        log.append(f"Unpacked {url} into {target}")
    return list(section)


def _signed(url: str, named: str | None) -> bool:
    """Whether an S3 URL is read with credentials: the file names an S3 authentication block, or a block
    lists the URL's bucket (AWS::CloudFormation::Authentication, `buckets`)."""
    bucket = cloud.s3_bucket(url)
    blocks = {k: v for k, v in AUTHENTICATION.items() if isinstance(v, dict) and v.get("type") == "S3"}
    if bucket is None or not blocks:
        return False
    if named is not None:
        return named in blocks
    return any(bucket in (block.get("buckets") or []) for block in blocks.values())


def _fetched(url: str, named: str | None = None) -> bytes:
    try:
        return cloud.fetch(url, _signed(url, named))
    except cloud.CloudError as err:
        raise InitError(str(err)) from None


def files(section: dict[str, Any], log: list[str]) -> list[str]:
    """Write each file (content or source; base64 encoding; a `{{mustache}}` context; mode, owner, group;
    mode 120000 makes a symbolic link to the content)."""
    changed = []
    for name, spec in section.items():
        spec = spec or {}
        path = Path(name)
        path.parent.mkdir(parents=True, exist_ok=True)
        content = spec.get("content")
        if str(spec.get("mode", "")).startswith("120"):
            if path.is_symlink() or path.exists():
                path.unlink()
            path.symlink_to(str(content))
            changed.append(name)
            continue
        if content is not None:
            text = content if isinstance(content, str) else json.dumps(content, indent=4)
            data = base64.b64decode(text) if spec.get("encoding") == "base64" else text.encode()
        elif spec.get("source"):
            data = _fetched(str(spec["source"]), spec.get("authentication"))
        else:
            raise InitError(f"File {name} has neither content nor source")
        if spec.get("context") is not None:
            data = mustache.render(data.decode(), spec["context"]).encode()
        before = path.read_bytes() if path.is_file() else None
        path.write_bytes(data)
        if spec.get("mode"):
            path.chmod(int(str(spec["mode"]), 8) & 0o7777)
        if spec.get("owner") or spec.get("group"):
            try:
                if spec.get("owner"):
                    shutil.chown(path, user=str(spec["owner"]))
                if spec.get("group"):
                    shutil.chown(path, group=str(spec["group"]))
            except (LookupError, OSError) as err:
                raise InitError(f"Could not set the owner of {name}: {err}") from None
        if before != data:
            changed.append(name)
        log.append(f"Wrote file {name}")
    return changed


def commands(section: dict[str, Any], log: list[str]) -> list[str]:
    """Run the commands in the alphabetical order of their names: `test` first (run only when it exits 0),
    `env` (which replaces the environment), `cwd`, `ignoreErrors`."""
    ran = []
    for name in sorted(section):
        spec = section[name] or {}
        env = {str(k): str(v) for k, v in spec["env"].items()} if spec.get("env") else None
        cwd = spec.get("cwd")
        if spec.get("test") is not None:
            tested = _shell(spec["test"], env, cwd)
            _command_log(f"test of {name}", tested)
            if tested.returncode != 0:
                log.append(f"Test for command {name} failed (exit {tested.returncode}): not run")
                continue
        done = _shell(spec.get("command"), env, cwd)
        _command_log(name, done)
        if done.returncode != 0 and str(spec.get("ignoreErrors", "false")).lower() != "true":
            raise InitError(f"Command {name} failed")
        log.append(f"Command {name} {'succeeded' if done.returncode == 0 else 'failed (errors ignored)'}")
        ran.append(name)
    return ran


def _shell(command: Any, env: dict[str, str] | None, cwd: str | None) -> subprocess.CompletedProcess:
    argv = [str(a) for a in command] if isinstance(command, list) else ["/bin/sh", "-c", str(command)]
    try:
        return subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True, check=False)
    except OSError as err:
        return subprocess.CompletedProcess(argv, 127, "", str(err))


def _must(argv: list[str], message: str) -> None:
    done = subprocess.run(argv, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise InitError(f"{message}: {done.stderr.strip()}")


def _command_log(name: str, done: subprocess.CompletedProcess) -> None:
    with open(CMD_LOG, "a") as handle:
        handle.write(f"Command {name}\n{done.stdout or ''}{done.stderr or ''}"
                     f"Completed with exit code {done.returncode}\n")
