"""cfn-init: apply a resource's AWS::CloudFormation::Init metadata to this instance.

`cfn-init -v --stack S --resource R [--configsets a,b] [--region R] [--url URL]` reads the metadata with
DescribeStackResource, picks the configs (the config sets given, or `default`; with no configSets, the config
named `config`; a config set may include another with `{"ConfigSet": name}`) and applies each config's
sections in order: packages, groups, users, sources, files, commands, services. It logs to
/var/log/cfn-init.log (commands' output to /var/log/cfn-init-cmd.log) and exits 1 on the first error, as the
real helper does ("Error occurred during build: ...").
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

from . import cloud, sections, services

LOG = "/var/log/cfn-init.log"
INIT = "AWS::CloudFormation::Init"
AUTHENTICATION = "AWS::CloudFormation::Authentication"
CHANGED_BY = {"files": "files", "sources": "sources", "packages": "packages", "commands": "commands"}


def parser() -> argparse.ArgumentParser:
    """cfn-init's options."""
    made = argparse.ArgumentParser(prog="cfn-init",
                                   description="Apply AWS::CloudFormation::Init (local cloud)")
    made.add_argument("-s", "--stack", required=True)
    made.add_argument("-r", "--resource", required=True)
    made.add_argument("-c", "--configsets", default=None)
    made.add_argument("--region")
    made.add_argument("-u", "--url", help="the CloudFormation endpoint")
    made.add_argument("-v", "--verbose", action="store_true")
    for ignored in ("--role", "--credential-file", "--access-key", "--secret-key", "--http-proxy",
                    "--https-proxy"):  # accepted as the real helper accepts them; the local cloud needs none
        made.add_argument(ignored, help=argparse.SUPPRESS)
    return made


def configs(init: dict[str, Any], wanted: str | None) -> list[str]:
    """The names of the configs to apply, in order (InitError for a config set that does not exist)."""
    sets = init.get("configSets")
    if not sets:
        if wanted and wanted != "default":
            raise sections.InitError(f"Config set {wanted} is not defined (this resource has no configSets)")
        return ["config"] if "config" in init else []
    names: list[str] = []

    def expand(name: str, seen: tuple[str, ...]) -> None:
        if name not in sets:
            raise sections.InitError(f"Error: configSet {name} not found")
        if name in seen:
            raise sections.InitError(f"Error: configSet {name} includes itself")
        entries = sets[name] if isinstance(sets[name], list) else [sets[name]]
        for entry in entries:
            if isinstance(entry, dict) and "ConfigSet" in entry:
                expand(str(entry["ConfigSet"]), (*seen, name))
            else:
                names.append(str(entry))

    for name in (wanted or "default").split(","):
        expand(name.strip(), ())
    return names


def apply(config: dict[str, Any], log: list[str]) -> None:
    """One config's sections in their order; its services last, restarted when what they list changed."""
    changed: dict[str, list[str]] = {}
    steps = (("packages", sections.packages), ("groups", sections.groups), ("users", sections.users),
             ("sources", sections.sources), ("files", sections.files), ("commands", sections.commands))
    for key, step in steps:
        if config.get(key):
            changed[key] = step(config[key], log)
    for manager, entries in (config.get("services") or {}).items():
        for name, spec in (entries or {}).items():
            spec = spec or {}
            restart = any(_listed(spec.get(key), changed.get(key, [])) for key in CHANGED_BY)
            try:
                services.apply(manager, name, _flag(spec.get("enabled")), _flag(spec.get("ensureRunning")),
                               restart, log)
            except (services.ServiceError, OSError) as err:
                raise sections.InitError(str(err)) from None


def _listed(wanted: Any, changed: list[str]) -> bool:
    names = list(wanted) if isinstance(wanted, list | dict) else []
    if isinstance(wanted, dict):  # packages: {"apt": {"nginx": []}}
        names = [n for entries in wanted.values() for n in entries]
    return any(n in changed for n in names)


def _flag(value: Any) -> bool | None:
    return None if value is None else str(value).lower() == "true"


def main(argv: list[str]) -> int:
    """Run cfn-init; 0 when every config applied."""
    options = parser().parse_args(argv)
    log: list[str] = []
    code = 0
    try:
        metadata = cloud.metadata(options.stack, options.resource, options.region, options.url)
        init = (metadata or {}).get(INIT)
        sections.AUTHENTICATION.update((metadata or {}).get(AUTHENTICATION) or {})
        if not isinstance(init, dict):
            raise sections.InitError(f"Could not find {INIT} in the metadata of {options.resource}")
        for name in configs(init, options.configsets):
            if name not in init:
                raise sections.InitError(f"Error: config {name} not found")
            log.append(f"Running config {name}")
            apply(init[name] or {}, log)
        log.append("ConfigSets completed")
    except (sections.InitError, cloud.CloudError) as err:
        log.append(f"Error occurred during build: {err}")
        print(f"Error occurred during build: {err}", file=sys.stderr)
        code = 1
    with open(LOG, "a") as handle:
        stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime())
        handle.writelines(f"{stamp},000 [INFO] {line}\n" for line in log)
    if options.verbose:
        print("\n".join(log))
    return code
