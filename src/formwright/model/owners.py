"""Whose a stack is: the tags every stack formwright creates carries, read back to decide what a project owns.

A project's stack carries `formwright:project` (the project's name), `formwright:stack` (its name in
formwright.yaml) and, deployed with `--env`, `formwright:environment`. An instance's stacks carry
`formwright:element` besides (and `formwright:instance`, lifecycle/ownership.py): they belong to the
instances, never to a plain deploy of the project. Ownership is read from these tags only, never guessed
from a stack's name: a stack without them, or another project's or environment's, is never touched by
`deploy --prune`.
"""

from __future__ import annotations

TAG_PROJECT = "formwright:project"
TAG_STACK = "formwright:stack"
TAG_ENVIRONMENT = "formwright:environment"
TAG_INSTANCE = "formwright:instance"
TAG_ELEMENT = "formwright:element"  # an instance's element, or a shared element of a project's instances
MAX_TAG_VALUE = 256  # CloudFormation's limit on a tag's value


def stack_tags(project: str, stack: str, environment: str | None) -> dict[str, str]:
    """The ownership tags of one project stack."""
    tags = {TAG_PROJECT: project[:MAX_TAG_VALUE], TAG_STACK: stack[:MAX_TAG_VALUE]}
    if environment:
        tags[TAG_ENVIRONMENT] = environment[:MAX_TAG_VALUE]
    return tags


def owned_by(tags: dict[str, str], project: str, environment: str | None) -> bool:
    """True when the tags mark a stack of this project and environment (not an instance's)."""
    return (tags.get(TAG_PROJECT) == project[:MAX_TAG_VALUE] and TAG_STACK in tags
            and TAG_INSTANCE not in tags and TAG_ELEMENT not in tags
            and tags.get(TAG_ENVIRONMENT) == (environment[:MAX_TAG_VALUE] if environment else None))
