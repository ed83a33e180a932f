"""One booting instance: the cached Debian root overlaid, its own namespaces, its UserData run by root.

Root: an overlayfs mount at `<state>/root` whose lower layer is the cached image (read-only, shared by every
instance) and whose upper and work folders are the instance's own (`<state>/upper`, `<state>/work`), so a
boot copies nothing; unmounted and removed when the instance ends.

Network: a private bridge on the host (`BRIDGE`, host side `HOST_ADDRESS` of `NETWORK`) and, per instance, a
network namespace joined to it by a veth pair, with the instance's PrivateIpAddress on the namespace's end.
Only addresses inside `NETWORK` are used; an instance whose address lies outside it is refused by name.
UserData follows cloud-init's "scripts-user" stage: the decoded `#!` script is written to
/var/lib/cloud/instance/scripts/part-001 and run as root, its output appended to
/var/log/cloud-init-output.log (cloud-init's default `output: {all: '| tee -a ...'}`), which is also what
GetConsoleOutput returns.
"""

from __future__ import annotations

import base64
import contextlib
import hashlib
import ipaddress
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

NETWORK = ipaddress.ip_network("10.213.0.0/16")
HOST_ADDRESS = "10.213.0.1"
BRIDGE = "fwinst0"
# The bridge's own MAC, fixed: left to the kernel, a bridge takes the lowest MAC of its ports and changes
# it as instances' veths come and go, and an instance that cached the old one cannot reach the host (its
# cfn-signal timed out while others' got through). Locally administered, as libvirt and Docker set theirs.
BRIDGE_MAC = "02:66:77:0a:d5:01"
CLAIMS = Path("/run/formwright/instances")  # one file per address in use on this machine (any local cloud)
LOG = "var/log/cloud-init-output.log"
SCRIPT = "var/lib/cloud/instance/scripts/part-001"
INIT = "var/lib/cloud/formwright-init.sh"

# PID 1 of the instance: cloud-init's final stage, then it stays up (the instance runs until terminated).
INIT_SCRIPT = """#!/bin/sh
exec >>/{log} 2>&1
cat /etc/hostname > /proc/sys/kernel/hostname  # its own UTS namespace
mount -t devpts -o newinstance,ptmxmode=0666 devpts /dev/pts 2>/dev/null  # its own ptys (apt, ssh)
echo "Cloud-init v. formwright (local cloud) running 'modules:final' at $(date -u -R)."
if [ -x /{script} ]; then
    /{script} || echo "Failed to run module scripts-user (scripts in /var/lib/cloud/instance/scripts)"
fi
echo "Cloud-init v. formwright (local cloud) finished at $(date -u -R). Datasource DataSourceEc2."
touch /var/lib/cloud/instance/boot-finished
exec sleep infinity
"""


class BootRefused(Exception):
    """The instance cannot boot here; the message names why."""


def image_dir() -> Path:
    """The cached Debian root (built by image.sh, outside any clone)."""
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return cache / "formwright" / "instances" / "bookworm"


def image_script() -> Path:
    """The script that builds the image (`make instances-image`)."""
    return Path(__file__).with_name("image.sh")


def unavailable() -> str | None:
    """Why instances cannot boot on this machine, or None when they can."""
    if os.geteuid() != 0:
        return "booting instances needs root (network, PID and mount namespaces): run the local cloud as root"
    for tool in ("unshare", "ip", "chroot", "mount"):
        if shutil.which(tool) is None and not Path("/usr/sbin", tool).exists():
            return f"booting instances needs `{tool}`, which is not installed"
    filesystems = Path("/proc/filesystems")
    if filesystems.exists() and "\toverlay\n" not in filesystems.read_text():
        return "booting instances needs the kernel's overlay filesystem (overlayfs), which it lacks"
    if not (image_dir() / ".formwright-image").exists():
        return (f"the instance image is not built ({image_dir()} is missing): run `make instances-image` "
                f"(or `sh {image_script()}`) once on this machine")
    return None


@dataclass
class Booted:
    """A running instance: what stops it."""

    instance_id: str
    address: str
    state: Path          # holds root/
    namespace: str
    host_veth: str
    process: subprocess.Popen

    @property
    def root(self) -> Path:
        """The instance's root folder."""
        return self.state / "root"


def _run(*argv: str, netns: str | None = None) -> None:
    command = (["ip", "netns", "exec", netns] if netns else []) + list(argv)
    done = subprocess.run(command, capture_output=True, text=True, check=False)  # noqa: S603 - fixed argv
    if done.returncode != 0:
        raise BootRefused(f"`{' '.join(command)}` failed: {done.stderr.strip() or done.returncode}")


def ensure_bridge() -> None:
    """The private bridge on the host, made once (any local cloud on this machine shares it); MAC fixed."""
    if Path("/sys/class/net", BRIDGE).exists():
        _pin_bridge_address()  # made by an older formwright: its MAC followed its ports
        return
    with contextlib.suppress(BootRefused):  # another local cloud may make it at the same moment
        _run("ip", "link", "add", BRIDGE, "type", "bridge")
    _pin_bridge_address()
    with contextlib.suppress(BootRefused):
        _run("ip", "addr", "add", f"{HOST_ADDRESS}/{NETWORK.prefixlen}", "dev", BRIDGE)
    _run("ip", "link", "set", BRIDGE, "up")


def _pin_bridge_address() -> None:
    """Give the bridge BRIDGE_MAC unless it has it already (the kernel then keeps it whatever its ports)."""
    device = Path("/sys/class/net", BRIDGE)
    with contextlib.suppress(OSError):
        if (device / "address").read_text().strip() == BRIDGE_MAC:
            return
    _run("ip", "link", "set", BRIDGE, "address", BRIDGE_MAC)


def _claim(address: str, instance_id: str) -> Path:
    ip = ipaddress.ip_address(address)
    edges = (NETWORK.network_address, NETWORK.broadcast_address)
    if ip not in NETWORK or address == HOST_ADDRESS or ip in edges:
        raise BootRefused(f"the instance's PrivateIpAddress {address} is outside the local cloud's instance "
                          f"network {NETWORK} (or is its host address {HOST_ADDRESS}): put the instance in a "
                          f"subnet inside {NETWORK}")
    CLAIMS.mkdir(parents=True, exist_ok=True)
    claim = CLAIMS / address
    try:
        with open(claim, "x") as handle:
            handle.write(instance_id)
    except FileExistsError:
        raise BootRefused(f"the address {address} is already used by booting instance "
                          f"{claim.read_text().strip()} on this machine") from None
    return claim


def _mount_root(state: Path, below: tuple[Path, ...] = ()) -> Path:
    """The instance's root: an overlay of its own upper folder over the read-only cached image (and over
    `below`, read-only layers of it, e.g. variants.py's MariaDB, topmost first)."""
    layers = {name: state / name for name in ("root", "upper", "work")}
    for folder in layers.values():
        folder.mkdir()
    lower = [*below, image_dir()]
    if any(c in str(p) for p in (*lower, state) for c in ",:\\"):  # overlayfs option syntax
        raise BootRefused(f"the folders {', '.join(map(str, lower))} and {state} may not contain `,`, `:` or "
                          "`\\` (overlayfs options): set FORMWRIGHT_HOME / XDG_CACHE_HOME to plain paths")
    lowerdir = ":".join(str(p) for p in lower)
    _run("mount", "-t", "overlay", "overlay", "-o",
         f"lowerdir={lowerdir},upperdir={layers['upper']},workdir={layers['work']}", str(layers["root"]))
    return layers["root"]


def _prepare_root(root: Path, instance_id: str, address: str, user_data: str | None) -> None:
    (root / ".formwright-image").unlink(missing_ok=True)
    hostname = "ip-" + address.replace(".", "-")
    (root / "etc/hostname").write_text(hostname + "\n")
    (root / "etc/hosts").write_text(f"127.0.0.1 localhost\n{address} {hostname}\n")
    cloud = root / "var/lib/cloud"
    (cloud / "instance/scripts").mkdir(parents=True, exist_ok=True)
    (cloud / "data").mkdir(parents=True, exist_ok=True)
    (cloud / "data/instance-id").write_text(instance_id + "\n")
    (root / LOG).parent.mkdir(parents=True, exist_ok=True)
    (root / LOG).touch()
    body = base64.b64decode(user_data) if user_data else b""
    (cloud / "instance/user-data.txt").write_bytes(body)
    if body.startswith(b"#!"):
        (root / SCRIPT).write_bytes(body)
        (root / SCRIPT).chmod(0o700)
    elif body:
        with open(root / LOG, "a") as log:  # a #cloud-config or MIME body is a later slice: said, not dropped
            log.write("formwright local cloud: UserData that is not a `#!` script is not run yet\n")
    (root / INIT).write_text(INIT_SCRIPT.format(log=LOG, script=SCRIPT))
    (root / INIT).chmod(0o755)


def _network(namespace: str, host_veth: str, address: str) -> None:
    inner = host_veth.replace("fwh", "fwc", 1)
    _run("ip", "netns", "add", namespace)
    _run("ip", "link", "add", host_veth, "type", "veth", "peer", "name", inner)
    _run("ip", "link", "set", inner, "netns", namespace)
    _run("ip", "link", "set", host_veth, "master", BRIDGE, "up")
    _run("ip", "link", "set", "lo", "up", netns=namespace)
    _run("ip", "link", "set", inner, "name", "eth0", netns=namespace)
    _run("ip", "addr", "add", f"{address}/{NETWORK.prefixlen}", "dev", "eth0", netns=namespace)
    _run("ip", "link", "set", "eth0", "up", netns=namespace)
    # no default route: the bridge's network is all an instance reaches (packages: through proxy.py)


def names(instance_id: str) -> tuple[str, str]:
    """The instance's network namespace and host-side veth (an interface name has at most 15 characters)."""
    digest = hashlib.sha1(instance_id.encode()).hexdigest()[:10]  # noqa: S324 - a name, not security
    return f"fw-{instance_id}", f"fwh{digest}"


def boot(instance_id: str, address: str, user_data: str | None, state_root: Path,
         prepare: Callable[[Path], None] | None = None, below: tuple[Path, ...] = ()) -> Booted:
    """Make the instance's root, network and namespaces and start its boot; raise BootRefused with why.
    `prepare` adds to the root before the instance starts (apt's package proxy: proxy.py; the
    cfn helpers: helpers.py); `below` are read-only layers over the image (variants.py)."""
    reason = unavailable()
    if reason:
        raise BootRefused(reason)
    claim = _claim(address, instance_id)
    namespace, host_veth = names(instance_id)
    state = state_root / instance_id
    try:
        state.mkdir(parents=True, exist_ok=False)
        root = _mount_root(state, below)
        _prepare_root(root, instance_id, address, user_data)
        if prepare is not None:
            prepare(root)
        ensure_bridge()
        _network(namespace, host_veth, address)
        process = subprocess.Popen(  # noqa: S603 - fixed argv
            ["ip", "netns", "exec", namespace, "unshare", "--pid", "--mount", "--uts", "--fork",
             "--kill-child",
             f"--mount-proc={root}/proc", "chroot", str(root), "/bin/sh", f"/{INIT}"],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=open(state / "boot.log", "ab"),  # noqa: SIM115
            env={"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", "HOME": "/root",
                 "LANG": "C.UTF-8"})
    except (BootRefused, OSError, subprocess.CalledProcessError) as err:
        _tear_down(state, namespace, host_veth, None)
        claim.unlink(missing_ok=True)
        if isinstance(err, BootRefused):
            raise
        raise BootRefused(f"the instance could not boot: {err}") from None
    return Booted(instance_id, address, state, namespace, host_veth, process)


def stop(booted: Booted) -> None:
    """Kill every process of the instance, remove its network and its root."""
    _tear_down(booted.state, booted.namespace, booted.host_veth, booted.process)
    (CLAIMS / booted.address).unlink(missing_ok=True)


def remove_leftovers(state_root: Path) -> list[str]:
    """Remove every instance under `state_root` (a FORMWRIGHT_HOME's `instances/`) and return their ids:
    called only when no local cloud of that home runs, so each one was left by a local cloud that was killed
    (SIGKILL runs no exit handler). Its processes, overlay mount, root, veth, namespace and claim go."""
    if not state_root.is_dir():
        return []
    removed = []
    for state in sorted(p for p in state_root.iterdir() if p.is_dir()):
        namespace, host_veth = names(state.name)
        _tear_down(state, namespace, host_veth, None)
        if CLAIMS.is_dir():
            for claim in CLAIMS.iterdir():
                with contextlib.suppress(OSError):
                    if claim.read_text().strip() == state.name:
                        claim.unlink()
        removed.append(state.name)
    return removed


def _tear_down(state: Path, namespace: str, host_veth: str, process: subprocess.Popen | None) -> None:
    inside = processes_in(state / "root")  # read before the kill, while their roots can still be read
    if process is not None and process.poll() is None:
        # `unshare --fork` ignores SIGTERM while it waits; SIGKILL ends it, its --kill-child then SIGKILLs the
        # namespace's PID 1, and the kernel kills every other process of that PID namespace
        process.kill()
        process.wait()
    _wait_gone(state / "root", inside)
    subprocess.run(["ip", "link", "del", host_veth], capture_output=True, check=False)  # noqa: S603,S607
    subprocess.run(["ip", "netns", "del", namespace], capture_output=True, check=False)  # noqa: S603,S607
    for point in sorted(mounts_under(state), reverse=True):  # the overlay root (deepest first)
        if subprocess.run(["umount", point], capture_output=True, check=False).returncode:  # noqa: S603,S607
            subprocess.run(["umount", "-l", point], capture_output=True, check=False)  # noqa: S603,S607
    if state.exists() and not mounts_under(state):
        shutil.rmtree(state, ignore_errors=True)


def processes_in(root: Path) -> list[int]:
    """The processes whose root is `root` (the instance's, chrooted there)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if os.readlink(entry / "root") == str(root):
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def _wait_gone(root: Path, inside: list[int], bound: float = 10.0) -> None:
    """Wait until every process that ran in the instance's root is gone from /proc: the kernel kills the
    rest of its PID namespace after its init, not at once, and a terminated instance must have nothing left
    when it says so."""
    deadline = time.monotonic() + bound
    while time.monotonic() < deadline:
        left = [pid for pid in {*inside, *processes_in(root)} if Path(f"/proc/{pid}").exists()]
        if not left:
            return
        for pid in processes_in(root):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        time.sleep(0.05)


def mounts_under(folder: Path) -> list[str]:
    """Mount points of the host at or under `folder` (a root is never removed through a live mount)."""
    prefix = str(folder.resolve())
    points = [line.split()[4] for line in Path("/proc/self/mountinfo").read_text().splitlines()]
    return [p for p in points if p == prefix or p.startswith(prefix + "/")]


def console_output(booted: Booted) -> str:
    """The instance's console: cloud-init's output log (the last 64 KB, as EC2 keeps)."""
    try:
        data = (booted.root / LOG).read_bytes()
    except OSError:
        return ""
    return data[-64 * 1024:].decode("utf-8", "replace")
