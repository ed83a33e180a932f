"""Cached layers over the instance image: packages installed once per machine, shared read-only by instances.

A layer is the upper folder of an overlay whose lower folder is the cached image (`boot.image_dir()`): apt
installs the packages into it from Debian's registry, in a chroot on the host, once; instances then mount it
between the image and their own upper folder (`boot.boot(below=...)`). It lives beside the image, outside any
clone (`~/.cache/formwright/instances/bookworm-NAME`), is rebuilt when the image is, and is built under a lock
so two local clouds wait for one build. `make instances-image` builds them with the image. Besides the named
layers (`LAYERS`), `package_layers.py` asks for one per set of packages cfn-init installs (`ensure(name,
packages)`), like a baked AMI. A layer is a snapshot of Debian's registry when it was built;
`make instances-layers-drop` removes them all (the next boot that needs one builds it again).

Measured on this 2-core machine (load ~3): apt installing mariadb-server inside a booted instance takes 28 s
(through the package proxy, every time); building the layer once takes the same, then a database boots in
seconds (`tests/instances/test_rds_mariadb.py`).
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import sys
from pathlib import Path

from formwright.cloud.instances import boot

LAYERS = {"mariadb": ("mariadb-server",)}
STAMP = ".formwright-layer"
NO_SERVICES = "#!/bin/sh\nexit 101\n"  # policy-rc.d: a package's postinst starts no service in the build


def layer_dir(name: str) -> Path:
    """Where layer `name` is kept (beside the image)."""
    return boot.image_dir().with_name(f"{boot.image_dir().name}-{name}")


def _image_stamp() -> str:
    return (boot.image_dir() / ".formwright-image").read_text().strip()


def ready(name: str) -> bool:
    """Whether layer `name` is built over the image as it is now."""
    stamp = layer_dir(name) / STAMP
    return stamp.exists() and stamp.read_text().strip() == _image_stamp()


def ensure(name: str, packages: tuple[str, ...] = (), proxy: str | None = None) -> Path:
    """Layer `name` with `packages` (default: `LAYERS[name]`) installed, built first when missing or older
    than the image (its downloads through the package proxy at `proxy` when given, as an instance's go);
    raise BootRefused with apt's last lines when it cannot be built (e.g. Debian's registry unreachable)."""
    if ready(name):
        return layer_dir(name)
    reason = boot.unavailable()
    if reason:
        raise boot.BootRefused(reason)
    cache = boot.image_dir().parent
    with open(cache / f".build-{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # another local cloud may be building it: wait, then find it
        if not ready(name):
            _build(name, packages or LAYERS[name], proxy, cache / f".{layer_dir(name).name}.building")
    return layer_dir(name)


def _build(name: str, packages: tuple[str, ...], proxy: str | None, work: Path) -> None:
    shutil.rmtree(work, ignore_errors=True)
    upper, scratch, root = work / "upper", work / "work", work / "root"
    for folder in (upper, scratch, root):
        folder.mkdir(parents=True)
    log = layer_dir(name).with_suffix(".log")
    mounted: list[Path] = []
    try:
        _mount(["-t", "overlay", "overlay", "-o",
                f"lowerdir={boot.image_dir()},upperdir={upper},workdir={scratch}", str(root)])
        mounted.append(root)
        _mount(["-t", "proc", "proc", str(root / "proc")])
        mounted.append(root / "proc")
        policy = root / "usr/sbin/policy-rc.d"
        policy.write_text(NO_SERVICES)
        policy.chmod(0o755)
        env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "DEBIAN_FRONTEND": "noninteractive",
               "LANG": "C.UTF-8",
               **{k: v for k, v in os.environ.items() if k.lower() in ("http_proxy", "https_proxy")}}
        through = [f"-oAcquire::{scheme}::Proxy={proxy}" for scheme in ("http", "https")] if proxy else []
        with open(log, "w") as out:
            out.write(f"apt-get install {' '.join(packages)}\n")  # the layer holds (its name: a digest)
            out.flush()
            done = subprocess.run(  # noqa: S603 - fixed argv
                ["chroot", str(root), "apt-get", *through, "install", "-y", "-q", "--no-install-recommends",
                 *packages], env=env, stdout=out, stderr=subprocess.STDOUT, check=False)
            subprocess.run(["chroot", str(root), "apt-get", "clean"], env=env, stdout=out,  # noqa: S603,S607
                           stderr=subprocess.STDOUT, check=False)
        policy.unlink()
        if done.returncode != 0:
            tail = " | ".join(log.read_text().strip().splitlines()[-3:])
            raise boot.BootRefused(f"the {name} layer could not be built (apt-get install "
                                   f"{' '.join(packages)} in {log}): {tail}")
    finally:
        for point in reversed(mounted):
            subprocess.run(["umount", str(point)], capture_output=True, check=False)  # noqa: S603,S607
    (upper / STAMP).write_text(_image_stamp() + "\n")
    shutil.rmtree(layer_dir(name), ignore_errors=True)
    upper.rename(layer_dir(name))
    shutil.rmtree(work, ignore_errors=True)


def _mount(argv: list[str]) -> None:
    done = subprocess.run(["mount", *argv], capture_output=True, text=True, check=False)  # noqa: S603,S607
    if done.returncode != 0:
        raise boot.BootRefused(f"`mount {' '.join(argv)}` failed: {done.stderr.strip()}")


if __name__ == "__main__":  # `make instances-image`: every layer, after the image
    for each in LAYERS:
        try:
            print(f"layer ready: {ensure(each)}")
        except boot.BootRefused as refused:
            sys.exit(f"variants.py: {refused}")
