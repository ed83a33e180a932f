"""cfn-init's `services` inside a booted instance, where no init system runs (PID 1 is the boot script).

- `sysvinit`: the service's /etc/init.d script is run with `start` (when its `status` says it is not running),
  `stop` or `restart` (as `service` does);
  `enabled` links it into the runlevels with update-rc.d when that is installed.
- `systemd`: the unit file (/etc/systemd/system, /lib/systemd/system or /usr/lib/systemd/system) is read and
  its `ExecStartPre`/`ExecStart` run as systemd would start it (Environment, EnvironmentFile,
  WorkingDirectory, User), detached, its pid kept in /run/formwright-services/NAME.pid; stop kills it.
  `enabled` makes the wants link in multi-user.target.wants, as `systemctl enable` does.
A service listed with files, sources, packages or commands that changed in this run is restarted.
A service named as Amazon Linux names it, absent here, is the Debian package's the local cloud maps that yum
package to, as `packages` installs it (httpd -> apache2): `debian_name`.
"""

from __future__ import annotations

import os
import re
import shlex
import signal
import subprocess
from pathlib import Path

from . import cloud

PIDS = Path("/run/formwright-services")
VARIABLE = re.compile(r"\$\{(\w+)\}|\$(\w+)")
UNIT_DIRS = ("/etc/systemd/system", "/lib/systemd/system", "/usr/lib/systemd/system")


class ServiceError(Exception):
    """A service could not be started or stopped."""


def exists(name: str) -> bool:
    """Whether this image has service `name`: an init script or a unit file."""
    unit = name if name.endswith(".service") else f"{name}.service"
    return Path("/etc/init.d", name.removesuffix(".service")).exists() or any(
        Path(folder, unit).exists() for folder in UNIT_DIRS)


def debian_name(name: str) -> str:
    """`name`, or, when this image has no such service, the Debian package the local cloud maps the yum
    package `name` to when that package has a service of its name (httpd -> apache2)."""
    bare = name.removesuffix(".service")
    mapped = str((cloud.settings().get("yum_to_apt") or {}).get(bare, ""))
    return mapped if not exists(name) and mapped and exists(mapped) else bare


def _unit(name: str) -> Path:
    unit = name if name.endswith(".service") else f"{name}.service"
    for folder in UNIT_DIRS:
        if Path(folder, unit).exists():
            return Path(folder, unit)
    raise ServiceError(f"Could not find unit file for service {name}")


def _unit_settings(path: Path) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    section = ""
    for line in path.read_text().splitlines():
        line = line.strip()
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1]
        elif "=" in line and not line.startswith(("#", ";")) and section == "Service":
            key, _, value = line.partition("=")
            found.setdefault(key.strip(), []).append(value.strip())
    return found


def _running(name: str) -> bool:
    try:
        pid = int((PIDS / f"{name}.pid").read_text())
        os.kill(pid, 0)
    except (OSError, ValueError):
        return False
    return True


def _systemd_start(name: str) -> None:
    settings = _unit_settings(_unit(name))
    env = dict(os.environ)
    for line in settings.get("Environment", []):
        for pair in shlex.split(line):
            key, _, value = pair.partition("=")
            env[key] = value
    for file in settings.get("EnvironmentFile", []):
        optional = file.startswith("-")
        try:
            for line in Path(file.lstrip("-")).read_text().splitlines():
                if "=" in line and not line.lstrip().startswith("#"):
                    key, _, value = line.partition("=")
                    env[key.strip()] = value.strip().strip('"')
        except OSError:
            if not optional:
                raise ServiceError(f"Failed to load environment file {file} of {name}") from None
    cwd = (settings.get("WorkingDirectory") or [""])[-1] or None
    user = (settings.get("User") or [""])[-1]
    prefix = ["runuser", "-u", user, "--"] if user and user != "root" else []
    for pre in settings.get("ExecStartPre", []):
        done = subprocess.run(prefix + shlex.split(pre.lstrip("-@+!")), env=env, cwd=cwd, check=False)
        if done.returncode != 0 and not pre.startswith("-"):
            raise ServiceError(f"ExecStartPre of {name} failed with exit code {done.returncode}")
    start = settings.get("ExecStart")
    if not start:
        raise ServiceError(f"Service {name} has no ExecStart")
    log = open(f"/var/log/{name}.service.log", "ab")  # noqa: SIM115 - the service's, kept open by it
    argv = [_expanded(word, env) for word in shlex.split(start[-1].lstrip("-@+!"))]
    process = subprocess.Popen(prefix + argv, env=env, cwd=cwd,
                               stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True)
    PIDS.mkdir(parents=True, exist_ok=True)
    (PIDS / f"{name}.pid").write_text(str(process.pid))


def _expanded(word: str, env: dict[str, str]) -> str:
    """systemd's $NAME and ${NAME} in a command line, from the unit's environment."""
    return VARIABLE.sub(lambda found: env.get(found.group(1) or found.group(2), ""), word)


def _systemd_stop(name: str) -> None:
    if _running(name):
        pid = int((PIDS / f"{name}.pid").read_text())
        os.killpg(pid, signal.SIGTERM)
    (PIDS / f"{name}.pid").unlink(missing_ok=True)


def _systemd_enable(name: str) -> None:
    unit = _unit(name)
    wants = Path("/etc/systemd/system/multi-user.target.wants")
    wants.mkdir(parents=True, exist_ok=True)
    link = wants / unit.name
    if not link.exists():
        link.symlink_to(unit)


def _sysvinit(name: str, action: str) -> None:
    script = Path("/etc/init.d", name)
    if not script.exists():
        raise ServiceError(f"Could not find service {name} (/etc/init.d/{name})")
    done = subprocess.run([str(script), action], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise ServiceError(f"Could not {action} {name}: {(done.stderr or done.stdout).strip()}")


def _sysvinit_running(name: str) -> bool:
    """The script's `status` says it runs (exit 0, LSB)."""
    script = Path("/etc/init.d", name)
    return script.exists() and subprocess.run([str(script), "status"], capture_output=True,
                                              check=False).returncode == 0


def apply(manager: str, name: str, enabled: bool | None, running: bool | None, restart: bool,
          log: list[str]) -> None:
    """Bring one service to what its entry asks; ServiceError says why it could not."""
    name = debian_name(name)
    if manager == "systemd":
        if enabled:
            _systemd_enable(name)
        if running and (restart or not _running(name)):
            _systemd_stop(name)
            _systemd_start(name)
            log.append(f"Started service {name} (systemd unit, run by cfn-init)")
        elif running is False:
            _systemd_stop(name)
            log.append(f"Stopped service {name}")
        return
    if manager != "sysvinit":
        raise ServiceError(f"Unsupported service manager {manager} (this image runs sysvinit and systemd "
                           "units)")
    if enabled is not None and Path("/usr/sbin/update-rc.d").exists():
        subprocess.run(["update-rc.d", name, "defaults" if enabled else "disable"], capture_output=True,
                       check=False)
    if running and (restart or not _sysvinit_running(name)):
        _sysvinit(name, "restart" if restart else "start")
        log.append(f"{'Restarted' if restart else 'Started'} service {name}")
    elif running is False:
        _sysvinit(name, "stop")
        log.append(f"Stopped service {name}")
