"""The read-back after a create and after a delete (issue 30, item 0): a resource is CREATE_COMPLETE only
when its service holds what the template set, DELETE_COMPLETE only when its service no longer has it. The
readers are drift detection's (`drift_readers`); a type without one is said "not verified" once per
operation."""

from __future__ import annotations

from typing import Any

from formwright.cloud.emulator.resources import ResourceFailure


def after_create(logical: str, kind: str, obj: Any, props: dict[str, Any], account: str, region: str,
                 unverified: set[str]) -> str | None:
    """Raise ResourceFailure naming the properties the service does not hold as `props` set them; return
    the event's "not verified" reason the first time (per `unverified`) a type without a reader is made."""
    from formwright.cloud.emulator.drift import unapplied  # drift reads the stack record: imported late
    from formwright.cloud.emulator.drift_readers import READERS

    if kind not in READERS:
        if kind in unverified:
            return None
        unverified.add(kind)
        return (f"Not verified: the local cloud cannot read {kind} back, so what it applied is moto's "
                "word (docs/local-cloud.md)")
    missed = unapplied(kind, obj, props, set(props), account, region)
    if missed:
        raise ResourceFailure(logical, f"the local cloud cannot create {kind} as the template sets "
                                       f"it: read back after create, {', '.join(missed)} not applied")
    return None


def still_there(kind: str, obj: Any, account: str, region: str) -> bool:
    """True when the service still holds a deleted resource (False when the type has no reader)."""
    from formwright.cloud.emulator.drift_readers import READERS

    reader = READERS.get(kind)
    try:
        return reader is not None and reader(obj, account, region) is not None
    except Exception:  # noqa: BLE001 - a reader that cannot find the resource's parts: it is gone
        return False
