"""Stacks outside any project: `formwright ls` (every stack of the account, as `rain ls` and sceptre's
`list stacks` show them) and the `--stack-name NAME` of status, events, outputs and diff (`rain logs STACK`).

A stack's owner is read from its tags: formwright's `formwright:project` / `formwright:environment`, the Flux
CloudFormation controller's `cfn-flux-controller/namespace` / `name` (a sync object), else none.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any

import typer

from formwright.cli.common import (
    Output,
    OutputOption,
    PlainProfileOption,
    TargetOption,
    check_region_flag,
    columns,
    emit_json,
    project_flags,
)
from formwright.errors import CloudError

if TYPE_CHECKING:
    from formwright.engine.cfn import CloudFormation, StackInfo

PROJECT_TAG = "formwright:project"
ENVIRONMENT_TAG = "formwright:environment"
SYNC_NAME_TAG = "cfn-flux-controller/name"
SYNC_NAMESPACE_TAG = "cfn-flux-controller/namespace"

StackNameOption = typer.Option(
    None, "--stack-name", metavar="NAME",
    help="A CloudFormation stack by its name in the cloud, in no project (made by sync, by hand or by "
         "another tool); `formwright ls` lists them.")


def owner(tags: dict[str, str]) -> dict[str, str | None]:
    """Who manages a stack, from its tags: {"kind": formwright|sync|none, "name": project[/env] or
    namespace/name}."""
    if tags.get(PROJECT_TAG):
        env = tags.get(ENVIRONMENT_TAG)
        return {"kind": "formwright", "name": tags[PROJECT_TAG] + (f"/{env}" if env else "")}
    if tags.get(SYNC_NAME_TAG):
        namespace = tags.get(SYNC_NAMESPACE_TAG)
        return {"kind": "sync", "name": (f"{namespace}/" if namespace else "") + tags[SYNC_NAME_TAG]}
    return {"kind": "none", "name": None}


def owner_text(who: dict[str, str | None]) -> str:
    """`formwright shop/prod`, `sync flux-system/app` or `none`."""
    return f"{who['kind']} {who['name']}" if who["name"] else str(who["kind"])


def lone_stack(target_flag: str | None, region: str | None = None,
               profile: str | None = None) -> CloudFormation:
    """CloudFormation in the region and with the credentials of --region/--profile (no project: nothing of a
    formwright.yaml to take them from)."""
    from formwright.cloud.session import resolve_target
    from formwright.engine.cfn import CloudFormation

    target = resolve_target(target_flag, region or project_flags.region,
                            profile=profile or project_flags.profile)
    return CloudFormation(target.client("cloudformation"))


def require_stack(cfn: CloudFormation, name: str) -> StackInfo:
    """The stack named `name`, or exit 1 saying it is not there (and how to list those that are)."""
    info = cfn.describe(name)
    if info is None:
        raise CloudError(f"stack '{name}' does not exist", hint="list the stacks with `formwright ls`")
    return info


def list_stacks(cfn: CloudFormation) -> list[dict[str, Any]]:
    """Every stack of the region (not the deleted ones) with status, owner and last update, by name."""
    rows = []
    token: str | None = None
    while True:
        page = cfn.call("describe_stacks", **({"NextToken": token} if token else {}))
        for stack in page.get("Stacks", []):
            if stack.get("StackStatus") == "DELETE_COMPLETE":
                continue
            tags = {t["Key"]: t["Value"] for t in stack.get("Tags") or []}
            stamp = stack.get("LastUpdatedTime") or stack.get("CreationTime")
            rows.append({"stack_name": stack["StackName"], "status": stack.get("StackStatus", ""),
                         "owner": owner(tags),
                         "updated": stamp.replace(microsecond=0).isoformat() if hasattr(stamp, "isoformat")
                         else stamp})
        token = page.get("NextToken")
        if not token:
            return sorted(rows, key=lambda row: row["stack_name"])


def register(app: typer.Typer) -> None:
    """Add `ls` to the application."""

    @app.command("ls")
    def list_command(
        regions: list[str] | None = typer.Option(
            None, "--region", metavar="REGION",
            callback=lambda values: [check_region_flag(v) for v in values or []],
            help="A region to list (repeatable); default: AWS_REGION, then the profile's region."),
        profile: str | None = PlainProfileOption,
        target: str | None = TargetOption,
        output: Output = OutputOption,
    ) -> None:
        """Every stack in the account and region, whoever made it: status, owner (a formwright project and \
environment, a sync object, or none) and last update."""
        from formwright.cloud.session import default_region

        wanted = list(dict.fromkeys(regions or [default_region(profile)]))
        found = []
        for region in wanted:
            found += [{"region": region, **row} for row in list_stacks(lone_stack(target, region, profile))]
        if output is Output.json:
            emit_json({"ok": True, "stacks": found})
            return
        if not found:
            print(f"no stacks in {', '.join(wanted)}", file=sys.stderr)
            return
        several = len(wanted) > 1
        headers = ["stack", *(["region"] if several else []), "status", "owner", "updated"]
        sys.stdout.write(columns(headers, [[row["stack_name"], *([row["region"]] if several else []),
                                            row["status"], owner_text(row["owner"]),
                                            str(row["updated"] or "")] for row in found]))
