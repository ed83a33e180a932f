"""`systemctl` inside a booted instance, where no init system runs: the local cloud's, not systemd's.

Scripts call it (a TOSCA start operation, `systemctl enable --now app`); it drives the same code cfn-init's
`services` uses (services.py): a service with an /etc/init.d script runs that script (as systemd's
sysv-generator would), else its unit file's ExecStart is started detached. A name this image lacks is its
Debian package's (httpd -> apache2: `services.debian_name`). Verbs: start, stop, restart, reload (the init
script's `reload`; a unit's ExecReload), try-restart, reload-or-restart, enable/disable [--now], is-active,
is-enabled, status, daemon-reload (nothing to reload: units are read when started). Exit codes as systemctl's:
0, 1 on failure, 3 for a unit not active (`is-active`, `status`), 5 for a unit not found.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

from . import services

WANTS = Path("/etc/systemd/system/multi-user.target.wants")


def _sysv(name: str) -> bool:
    return Path("/etc/init.d", name).exists()


def _active(name: str) -> bool:
    return services._sysvinit_running(name) if _sysv(name) else services._running(name)


def _reload(name: str) -> None:
    if _sysv(name):
        services._sysvinit(name, "reload")
        return
    reload = services._unit_settings(services._unit(name)).get("ExecReload")
    if not reload:
        raise services.ServiceError(f"Job type reload is not applicable for unit {name}.service.")
    if services._running(name):
        pid = (services.PIDS / f"{name}.pid").read_text().strip()
        argv = [word.replace("$MAINPID", pid).replace("${MAINPID}", pid) for word in shlex.split(reload[-1])]
        subprocess.run(argv, check=True)


def _act(verb: str, name: str, now: bool) -> int:
    """One verb on one service; the exit code."""
    if verb == "is-active":
        print("active" if _active(name) else "inactive")
        return 0 if _active(name) else 3
    if verb == "is-enabled":
        enabled = (WANTS / f"{name}.service").exists() or any(Path("/etc/rc2.d").glob(f"S??{name}"))
        print("enabled" if enabled else "disabled")
        return 0 if enabled else 1
    if verb == "status":
        print(f"* {name}.service - {'active (running)' if _active(name) else 'inactive (dead)'}")
        return 0 if _active(name) else 3
    manager = "sysvinit" if _sysv(name) else "systemd"
    log: list[str] = []
    if verb in ("enable", "disable"):
        services.apply(manager, name, verb == "enable", (verb == "enable") if now else None, False, log)
    elif verb == "start":
        services.apply(manager, name, None, True, False, log)
    elif verb == "stop":
        services.apply(manager, name, None, False, False, log)
    elif verb in ("restart", "try-restart") and (verb == "restart" or _active(name)):
        services.apply(manager, name, None, True, True, log)
    elif verb in ("reload", "reload-or-restart") and _active(name):
        _reload(name)
    elif verb == "reload-or-restart":
        services.apply(manager, name, None, True, False, log)
    elif verb == "reload":
        raise services.ServiceError(f"{name}.service is not active, cannot reload.")
    return 0


def main(argv: list[str]) -> int:
    """systemctl [--now] [--quiet] VERB [UNIT...]."""
    now = "--now" in argv
    quiet = "--quiet" in argv or "-q" in argv
    words = [w for w in argv if not w.startswith("-")]
    if not words:
        print("systemctl: the local cloud's instance runs no init system (see docs/local-cloud.md)")
        return 0
    verb, units = words[0], words[1:]
    if verb == "daemon-reload":
        return 0
    code = 0
    for unit in units:
        name = services.debian_name(unit)
        if not services.exists(name):
            print(f"Unit {unit.removesuffix('.service')}.service could not be found.", file=sys.stderr)
            code = code or 5
            continue
        try:
            if quiet:
                with open(os.devnull, "w") as sink:
                    sys.stdout = sink
                    code = _act(verb, name, now) or code
                    sys.stdout = sys.__stdout__
            else:
                code = _act(verb, name, now) or code
        except (services.ServiceError, subprocess.CalledProcessError, OSError) as err:
            sys.stdout = sys.__stdout__
            print(f"Failed to {verb} {unit}: {err}", file=sys.stderr)
            code = 1
    return code
