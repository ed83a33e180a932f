"""What the Flux CloudFormation controller names: its stack tags, change sets and sourceRefs."""

from __future__ import annotations

import re

from formwright import __version__
from formwright.sync.objects import StackObject

CONTROLLER_NAME = "cfn-flux-controller"  # the prefix of the controller's stack tags (main.go)
CONTROLLER_VERSION = f"formwright-{__version__}"
CORRECTION_TAG = "formwright.io/drift-correction"


def change_set_name(generation: int, revision: str) -> str:
    """`flux-<generation>-<revision>` as the controller names it (internal/clients/cloudformation/
    changeset.go): runs of non-alphanumerics as `-`, at most 128 characters."""
    return re.sub(r"[^A-Za-z0-9]+", "-", f"flux-{generation}-{revision}")[:128]


def stack_tags(obj: StackObject, extra: dict[str, str]) -> dict[str, str]:
    """The controller's tags (`cfn-flux-controller/version|name|namespace`), then `extra` (--stack-tags),
    then the object's spec.stackTags, as the controller orders them (a later key wins here)."""
    tags = {f"{CONTROLLER_NAME}/version": CONTROLLER_VERSION, f"{CONTROLLER_NAME}/name": obj.name,
            f"{CONTROLLER_NAME}/namespace": obj.namespace}
    tags.update(extra)
    tags.update((t.key, t.value) for t in obj.spec.stack_tags)
    return tags


def source_ref(obj: StackObject) -> str:
    """The sourceRef as the controller prints it: `Kind/name`, or `Kind/namespace/name`."""
    ref = obj.spec.source_ref
    return f"{ref.kind}/{ref.namespace}/{ref.name}" if ref.namespace else f"{ref.kind}/{ref.name}"
