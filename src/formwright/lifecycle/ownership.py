"""Who owns a stack: the formwright tags every instance's stacks carry, and the checks made before creating.

Each stack of an instance is tagged with its project, instance, element and project home. Before an
operation creates a stack, its name is checked against the cloud: a stack that exists and is not this
instance's element is refused, naming its owner, and never adopted (deleting one instance must never
delete another's stack). A single-instance project is single across project homes too: its tag shows
an instance made from another home. (The add-on lifecycle document: a mutable element's resources
that already exist, created by other means, make the operation fail.)
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from formwright.engine.cfn import CloudFormation
from formwright.errors import InputError

TAG_PROJECT = "formwright:project"
TAG_INSTANCE = "formwright:instance"
TAG_ELEMENT = "formwright:element"
TAG_HOME = "formwright:home"
MAX_TAG_VALUE = 256


def owner_tags(project: str, instance: str, element: str, home: str) -> dict[str, str]:
    """The tags that mark a stack as this instance's element."""
    return {TAG_PROJECT: project[:MAX_TAG_VALUE], TAG_INSTANCE: instance, TAG_ELEMENT: element,
            TAG_HOME: home[-MAX_TAG_VALUE:]}


def describe_owner(tags: dict[str, str]) -> str:
    """`instance 'a' of project 'life' (home /x)`, or that formwright did not make the stack."""
    if TAG_INSTANCE not in tags:
        return "no formwright instance (it was made by other means)"
    return (f"instance '{tags[TAG_INSTANCE]}' of project '{tags.get(TAG_PROJECT, '?')}' "
            f"(element {tags.get(TAG_ELEMENT, '?')}, home {tags.get(TAG_HOME, '?')})")


def check_names_free(cfn_for: Any, planned: Iterable[tuple[str, str, str]], mine: dict[str, str]) -> None:
    """Refuse (exit 2) when a stack to create exists and is not the element's own.

    `planned` holds (element, region, stack name); `cfn_for(region)` gives a CloudFormation client;
    `mine` are this instance's owner tags without the element.
    """
    for element, region, stack_name in planned:
        info = cfn_for(region).describe(stack_name)
        if info is None:
            continue
        expected = {**mine, TAG_ELEMENT: element}
        if all(info.tags.get(k) == v for k, v in expected.items()):
            continue  # this very element (an interrupted or retried creation)
        raise InputError(
            f"stack '{stack_name}' in {region} already exists and belongs to {describe_owner(info.tags)}",
            where=element,
            hint="formwright never adopts another's stack: pick another instance name or stack_name",
        )


def check_single_instance(cfn: CloudFormation, project: str, instance: str, home: str) -> None:
    """A single-instance project has no instance from another home or under another name in the cloud."""
    paginator = cfn.client.get_paginator("describe_stacks")
    for page in paginator.paginate():
        for stack in page.get("Stacks", []):
            if stack.get("StackStatus") == "DELETE_COMPLETE":
                continue
            tags = {t["Key"]: t["Value"] for t in stack.get("Tags") or []}
            if tags.get(TAG_PROJECT) != project:
                continue
            if tags.get(TAG_INSTANCE) != instance or tags.get(TAG_HOME) != home[-MAX_TAG_VALUE:]:
                raise InputError(
                    f"this project allows a single instance and {describe_owner(tags)} exists "
                    f"(stack '{stack['StackName']}')",
                    hint="delete that instance first, or set policies: {multiple_instances: true}",
                )
