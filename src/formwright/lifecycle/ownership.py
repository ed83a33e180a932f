"""Who owns a stack: the formwright tags every instance's stacks carry, and the checks made before creating.

Each stack of an instance is tagged with its project, instance, element and project home. Before an
operation creates a stack, its name is checked against the cloud: a stack that exists and is not this
instance's element is refused, naming its owner, and never adopted (deleting one instance must never
delete another's stack). A shared element's stack carries one sharer tag per instance that uses it:
it is made with the first and removed with the last. A single-instance project is single across
project homes too: its tag shows an instance made from another home. (The add-on lifecycle document:
a mutable element's resources that already exist, created by other means, make the operation fail.)
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Any

from botocore.exceptions import ClientError

from formwright.engine.cfn import CloudFormation, StackInfo
from formwright.errors import CloudError, InputError
from formwright.model.owners import MAX_TAG_VALUE, TAG_ELEMENT, TAG_INSTANCE, TAG_PROJECT

TAG_HOME = "formwright:home"
TAG_SHARED = "formwright:shared"
SHARER_PREFIX = "formwright:sharer:"  # + <home digest>:<instance> = home; one tag per instance using it
BULK = 10  # over this many names to check in a region, one listing of the stacks beats a describe each
LIVE = [  # every stack status but DELETE_COMPLETE
    "CREATE_IN_PROGRESS", "CREATE_FAILED", "CREATE_COMPLETE", "ROLLBACK_IN_PROGRESS", "ROLLBACK_FAILED",
    "ROLLBACK_COMPLETE", "DELETE_IN_PROGRESS", "DELETE_FAILED", "UPDATE_IN_PROGRESS",
    "UPDATE_COMPLETE_CLEANUP_IN_PROGRESS", "UPDATE_COMPLETE", "UPDATE_FAILED", "UPDATE_ROLLBACK_IN_PROGRESS",
    "UPDATE_ROLLBACK_FAILED", "UPDATE_ROLLBACK_COMPLETE_CLEANUP_IN_PROGRESS", "UPDATE_ROLLBACK_COMPLETE",
    "REVIEW_IN_PROGRESS", "IMPORT_IN_PROGRESS", "IMPORT_COMPLETE", "IMPORT_ROLLBACK_IN_PROGRESS",
    "IMPORT_ROLLBACK_FAILED", "IMPORT_ROLLBACK_COMPLETE",
]
CAPABILITIES = ["CAPABILITY_IAM", "CAPABILITY_NAMED_IAM", "CAPABILITY_AUTO_EXPAND"]


def owner_tags(project: str, instance: str, element: str, home: str) -> dict[str, str]:
    """The tags that mark a stack as this instance's element."""
    return {TAG_PROJECT: project[:MAX_TAG_VALUE], TAG_INSTANCE: instance, TAG_ELEMENT: element,
            TAG_HOME: home[-MAX_TAG_VALUE:]}


def shared_tags(project: str, element: str, instance: str, home: str) -> dict[str, str]:
    """The tags of a shared element's stack as one instance makes it: whose it is, and its first sharer."""
    return {TAG_PROJECT: project[:MAX_TAG_VALUE], TAG_ELEMENT: element, TAG_SHARED: "true",
            sharer_key(instance, home): home[-MAX_TAG_VALUE:]}


def sharer_key(instance: str, home: str) -> str:
    """The tag that says this instance (of this home) uses a shared element."""
    return f"{SHARER_PREFIX}{hashlib.sha256(home.encode()).hexdigest()[:8]}:{instance}"


def sharers(tags: dict[str, str]) -> list[str]:
    """The sharer tags on a shared stack."""
    return sorted(k for k in tags if k.startswith(SHARER_PREFIX))


def is_shared_element(tags: dict[str, str], project: str, element: str) -> bool:
    """True when the tags mark the project's shared element."""
    return tags.get(TAG_SHARED) == "true" and tags.get(TAG_PROJECT) == project[:MAX_TAG_VALUE] and \
        tags.get(TAG_ELEMENT) == element


def set_tags(cfn: CloudFormation, info: StackInfo, tags: dict[str, str]) -> None:
    """Change only a stack's tags (same template and parameters) and wait for it."""
    try:
        cfn.call("update_stack", StackName=info.stack_id or info.name, UsePreviousTemplate=True,
                 Parameters=[_same(k, v) for k, v in info.parameters.items()],
                 Tags=[{"Key": k, "Value": v} for k, v in sorted(tags.items())], Capabilities=CAPABILITIES)
    except ClientError as err:
        if "No updates are to be performed" in str(err):
            return
        raise
    final = cfn.wait_stack(info.stack_id or info.name)
    if final is None or not final.status.endswith("_COMPLETE") or "ROLLBACK" in final.status:
        raise CloudError(f"could not change the tags of '{info.name}': {final.status if final else 'gone'}",
                         where=info.name)


def _same(key: str, value: str) -> dict[str, Any]:
    # the value as described, unless masked (NoEcho): UsePreviousValue alone trips the local cloud on a
    # stack made through a change set
    if value == "****":
        return {"ParameterKey": key, "UsePreviousValue": True}
    return {"ParameterKey": key, "ParameterValue": value}


def describe_owner(tags: dict[str, str]) -> str:
    """`instance 'a' of project 'life' (home /x)`, or that formwright did not make the stack."""
    if tags.get(TAG_SHARED) == "true":
        return (f"the shared element {tags.get(TAG_ELEMENT, '?')} of project '{tags.get(TAG_PROJECT, '?')}' "
                f"({len(sharers(tags))} instances)")
    if TAG_INSTANCE not in tags:
        return "no formwright instance (it was made by other means)"
    return (f"instance '{tags[TAG_INSTANCE]}' of project '{tags.get(TAG_PROJECT, '?')}' "
            f"(element {tags.get(TAG_ELEMENT, '?')}, home {tags.get(TAG_HOME, '?')})")


def check_names_free(cfn_for: Any, planned: Iterable[tuple[str, str, str]], mine: dict[str, str],
                     shared: set[str] = frozenset()) -> None:  # type: ignore[assignment]
    """Refuse (exit 2) when a stack to create exists and is not the element's own.

    `planned` holds (element, region, stack name); `cfn_for(region)` gives a CloudFormation client;
    `mine` are this instance's owner tags without the element; a `shared` element may exist as the
    project's shared element (the instance joins it).
    """
    planned = list(planned)
    regions = {region for _, region, _ in planned}
    existing = {region: _existing_tags(cfn_for(region), [n for _, r, n in planned if r == region])
                for region in regions}
    for element, region, stack_name in planned:
        tags = existing[region].get(stack_name)
        if tags is None:
            continue
        if element in shared:
            if is_shared_element(tags, mine.get(TAG_PROJECT, ""), element):
                continue
        else:
            expected = {**mine, TAG_ELEMENT: element}
            if all(tags.get(k) == v for k, v in expected.items()):
                continue  # this very element (an interrupted or retried creation)
        raise InputError(
            f"stack '{stack_name}' in {region} already exists and belongs to {describe_owner(tags)}",
            where=element,
            hint="formwright never adopts another's stack: pick another instance name or stack_name",
        )


def _existing_tags(cfn: CloudFormation, names: list[str]) -> dict[str, dict[str, str]]:
    """The tags of those of `names` that exist: a describe each for a few; for many, one listing of the
    live stacks' names, then a describe of those taken (usually none)."""
    if len(names) <= BULK:
        found = {name: cfn.describe(name) for name in names}
        return {name: info.tags for name, info in found.items() if info is not None}
    wanted = set(names)
    pages = cfn.client.get_paginator("list_stacks").paginate(StackStatusFilter=LIVE)
    taken = [summary["StackName"] for page in pages for summary in page.get("StackSummaries", [])
             if summary["StackName"] in wanted]
    cfn.counter.add("list_stacks")
    found = {name: cfn.describe(name) for name in taken}
    return {name: info.tags for name, info in found.items() if info is not None}


def _live_stacks(cfn: CloudFormation) -> Iterable[dict[str, Any]]:
    for page in cfn.client.get_paginator("describe_stacks").paginate():
        cfn.counter.add("describe_stacks")
        yield from (s for s in page.get("Stacks", []) if s.get("StackStatus") != "DELETE_COMPLETE")


def check_single_instance(cfn: CloudFormation, project: str, instance: str, home: str) -> None:
    """A single-instance project has no instance from another home or under another name in the cloud."""
    for stack in _live_stacks(cfn):
        tags = {t["Key"]: t["Value"] for t in stack.get("Tags") or []}
        if tags.get(TAG_PROJECT) != project:
            continue
        if tags.get(TAG_INSTANCE) != instance or tags.get(TAG_HOME) != home[-MAX_TAG_VALUE:]:
            raise InputError(
                f"this project allows a single instance and {describe_owner(tags)} exists "
                f"(stack '{stack['StackName']}')",
                hint="delete that instance first, or set policies: {multiple_instances: true}",
            )
