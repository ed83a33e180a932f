"""cfn-hup: run hooks when a resource's metadata changes.

Reads /etc/cfn/cfn-hup.conf (`[main]`: stack, region, interval in minutes, default 15; `url` for the
endpoint) and the hooks there and in /etc/cfn/hooks.d/*.conf (`[name]`: triggers = post.add, post.update,
post.remove; path = Resources.LOGICAL.Metadata[.KEY...]; action = a shell command; runas = a user). Every
interval it reads each hook's resource with DescribeStackResource and runs the action when the value at its
path was added, changed or removed since it last looked (the first look only records it, kept in
/var/lib/cfn-hup/data/metadata_db). `--no-daemon` looks once and exits; otherwise it detaches and goes on.
"""

from __future__ import annotations

import argparse
import configparser
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from . import cloud

STATE = Path("/var/lib/cfn-hup/data/metadata_db")
LOG = "/var/log/cfn-hup.log"


def parser() -> argparse.ArgumentParser:
    """cfn-hup's options."""
    made = argparse.ArgumentParser(prog="cfn-hup", description="Run hooks on metadata changes (local cloud)")
    made.add_argument("-c", "--config", default="/etc/cfn", help="the folder of cfn-hup.conf and hooks.d")
    made.add_argument("--no-daemon", action="store_true", help="look once and exit")
    made.add_argument("-v", "--verbose", action="store_true")
    return made


def read_config(folder: str) -> tuple[dict[str, str], dict[str, dict[str, str]]]:
    """The `[main]` settings and the hooks by name."""
    config = configparser.ConfigParser(interpolation=None)
    main_file = Path(folder, "cfn-hup.conf")
    if not main_file.exists():
        raise ValueError(f"{main_file} does not exist")
    config.read([main_file, *sorted(Path(folder, "hooks.d").glob("*.conf"))])
    if not config.has_section("main") or not config.get("main", "stack", fallback=""):
        raise ValueError(f"{main_file}: [main] must set stack")
    hooks = {name: dict(config.items(name)) for name in config.sections() if name != "main"}
    return dict(config.items("main")), hooks


def _value(stack: str, path: str, main: dict[str, str]) -> Any:
    parts = path.split(".")
    if len(parts) < 3 or parts[0] != "Resources" or parts[2] != "Metadata":
        raise ValueError(f"path {path} must be Resources.LOGICAL_ID.Metadata[.KEY...]")
    value: Any = cloud.metadata(stack, parts[1], main.get("region"), main.get("url"))
    key = ".".join(parts[3:])
    while key and isinstance(value, dict):  # keys may hold dots (AWS::CloudFormation::Init)
        match = next((k for k in sorted(value, key=len, reverse=True) if key == k or key.startswith(k + ".")),
                     None)
        if match is None:
            return None
        value, key = value[match], key[len(match) + 1:]
    return None if key else value


def look(main: dict[str, str], hooks: dict[str, dict[str, str]], log: list[str]) -> None:
    """Read each hook's value once; run its action on an add, update or remove it is triggered by."""
    try:
        known = json.loads(STATE.read_text())
    except (OSError, ValueError):
        known = {}
    for name, hook in hooks.items():
        path = hook.get("path", "")
        try:
            now = _value(main["stack"], path, main)
        except (ValueError, cloud.CloudError) as err:
            log.append(f"Hook {name}: {err}")
            continue
        triggers = {t.strip() for t in hook.get("triggers", "").split(",")}
        event = None
        if path in known:
            before = known[path]
            event = "post.add" if before is None and now is not None else "post.remove" \
                if before is not None and now is None else "post.update" if before != now else None
        known[path] = now
        if event and event in triggers:
            runas = hook.get("runas", "root")
            argv = ["/bin/sh", "-c", hook.get("action", "")]
            if runas != "root":
                argv = ["runuser", "-u", runas, "--", *argv]
            done = subprocess.run(argv, capture_output=True, text=True, check=False)
            log.append(f"Hook {name} ({event}) ran its action: exit {done.returncode}")
    STATE.parent.mkdir(parents=True, exist_ok=True)
    STATE.write_text(json.dumps(known))


def main(argv: list[str]) -> int:
    """Look once (--no-daemon) or detach and look every interval."""
    options = parser().parse_args(argv)
    try:
        settings, hooks = read_config(options.config)
    except (ValueError, configparser.Error) as err:
        print(f"cfn-hup: {err}", file=sys.stderr)
        return 1
    if not options.no_daemon and os.fork() > 0:
        return 0
    if not options.no_daemon:
        os.setsid()
    interval = max(1.0, float(settings.get("interval", "15"))) * 60
    while True:
        log: list[str] = []
        look(settings, hooks, log)
        with open(LOG, "a") as handle:
            handle.writelines(f"{time.strftime('%Y-%m-%d %H:%M:%S', time.gmtime())} {line}\n" for line in log)
        if options.no_daemon:
            return 0
        time.sleep(interval)
