"""What the engine reports: per-stack plans and results, and progress events."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

MASK = "****"


def exit_code_of(results: dict[str, StackResult]) -> int:
    """0 when every stack is fine; 2 when any failed on bad input; else 1."""
    codes = [r.exit_code for r in results.values() if r.outcome == "failed"]
    if not codes and all(r.ok for r in results.values()):
        return 0
    return 2 if 2 in codes else 1


@dataclass
class PropertyChange:
    """One changed property of a resource (from the change set's Details), with values where known."""

    name: str  # the property, e.g. VisibilityTimeout (Tags for a tag change)
    requires_recreation: str = "Never"  # Never | Conditionally | Always ("" when not known)
    old: Any = None
    new: Any = None
    known: bool = False  # old and new were found (in the change set or the two processed templates)
    # why it changes when the template writes it the same: the stack's tags (Tags), or what it refers to
    via: str = ""
    drifted: bool = False  # a drift-aware change set sets it back: old is the actual (drifted) value


# Replacement from the Details when the change set leaves it out: the worst property decides
_REPLACEMENT_OF = {"Always": "True", "Conditionally": "Conditional", "Never": "False"}


@dataclass
class ResourceChange:
    """One line of a change set: + add, ~ modify (with replacement), - remove."""

    action: str  # Add | Modify | Remove | Import | Dynamic
    logical_id: str
    resource_type: str
    replacement: str = "False"  # True | False | Conditional; never None (False where not applicable)
    details: list[PropertyChange] = field(default_factory=list)

    @property
    def symbol(self) -> str:
        """`+`, `~`, `-` or `←` (import)."""
        return {"Add": "+", "Modify": "~", "Remove": "-", "Import": "←"}.get(self.action, "?")

    @classmethod
    def from_change_set(cls, change: dict[str, Any]) -> ResourceChange:
        """A ResourceChange from one element of describe_change_set's Changes (Replacement and Details as
        documented in the CloudFormation API's ResourceChange and ResourceChangeDetail)."""
        rc = change.get("ResourceChange", {})
        details: dict[str, PropertyChange] = {}
        for detail in rc.get("Details") or []:
            target = detail.get("Target") or {}
            name = target.get("Name") or target.get("Attribute") or "?"
            if target.get("Attribute") == "Tags":
                name = "Tags"
            recreation = target.get("RequiresRecreation") or "Never"
            prop = details.setdefault(name, PropertyChange(name, recreation))
            if _rank(recreation) > _rank(prop.requires_recreation):
                prop.requires_recreation = recreation
            if "BeforeValue" in target or "AfterValue" in target:
                prop.old, prop.new, prop.known = target.get("BeforeValue"), target.get("AfterValue"), True
            prop.drifted = prop.drifted or "Drift" in target
        replacement = rc.get("Replacement")
        if replacement not in ("True", "False", "Conditional"):
            worst = max((p.requires_recreation for p in details.values()), key=_rank, default="Never")
            replacement = _REPLACEMENT_OF.get(worst, "False") if rc.get("Action") == "Modify" else "False"
        return cls(rc.get("Action", "?"), rc.get("LogicalResourceId", "?"), rc.get("ResourceType", ""),
                   replacement, list(details.values()))

    def fill_values(self, old_template: dict[str, Any] | None, new_template: dict[str, Any] | None) -> None:
        """Old and new values of the changed properties from the deployed and the local processed
        templates, where the change set did not carry them."""
        old_props = _properties(old_template, self.logical_id)
        new_props = _properties(new_template, self.logical_id)
        if not self.details and self.action == "Modify" and old_props is not None and new_props is not None:
            # no Details in the change set: the properties that differ between the two templates
            # (whether each needs recreation is then not known)
            self.details = [PropertyChange(key, "", old_props.get(key), new_props.get(key), True)
                            for key in sorted(set(old_props) | set(new_props))
                            if old_props.get(key) != new_props.get(key)]
            return
        for prop in self.details:
            if prop.known or (old_props is None and new_props is None):
                continue
            old, new = (old_props or {}).get(prop.name), (new_props or {}).get(prop.name)
            if old == new:
                # written the same: CloudFormation changes it through the stack's tags (which every
                # resource that takes tags gets) or a parameter or reference the value uses
                prop.via = "the stack's tags" if prop.name == "Tags" else "a parameter or reference it uses"
                continue
            prop.old, prop.new, prop.known = old, new, True


def _rank(recreation: str) -> int:
    return {"Never": 0, "Conditionally": 1, "Always": 2}.get(recreation, 0)


def _properties(template: dict[str, Any] | None, logical_id: str) -> dict[str, Any] | None:
    resource = ((template or {}).get("Resources") or {}).get(logical_id)
    if not isinstance(resource, dict):
        return None
    props = resource.get("Properties")
    return props if isinstance(props, dict) else {}


@dataclass
class ValueChange:
    """A parameter or tag whose value changes (old None = added, new None = removed)."""

    key: str
    old: str | None
    new: str | None


SETTLED_PLANS = ("unchanged", "no changes")  # plan kinds after which a stack's outputs stay as they are


@dataclass
class StackPlan:
    """What deploying one stack would do."""

    name: str
    stack_name: str
    kind: str  # create | update | no changes | unchanged | unknown
    resources: list[ResourceChange] = field(default_factory=list)
    parameters: list[ValueChange] = field(default_factory=list)
    tags: list[ValueChange] = field(default_factory=list)
    change_set_id: str | None = None
    note: str = ""

    def to_json(self) -> dict[str, Any]:
        """The plan as plain data."""
        return asdict(self)


@dataclass
class StackResult:
    """How one stack ended in a deploy or delete."""

    name: str
    stack_name: str
    outcome: str  # created | updated | no changes | unchanged | deleted | absent | failed | skipped
    status: str = ""
    elapsed: float = 0.0
    outputs: dict[str, str] = field(default_factory=dict)
    error: str | None = None
    plan: StackPlan | None = None
    exit_code: int = 0  # 2 when the stack failed on bad input, 1 when in the cloud
    timed_out: bool = False  # failed because its wait ran past `stack_timeout` (status: the last read)

    @property
    def ok(self) -> bool:
        """False when the stack failed or was skipped because a dependency failed."""
        return self.outcome not in ("failed", "skipped")

    def to_json(self) -> dict[str, Any]:
        """The result as plain data."""
        data = asdict(self)
        data["ok"] = self.ok
        return data


@dataclass
class ProgressEvent:
    """A line of progress for one stack: its phase, the cloud status, the latest resource event."""

    stack: str
    phase: str  # waiting | planning | creating | updating | deleting | done | failed | skipped
    status: str = ""
    message: str = ""
    waiting_for: tuple[str, ...] = ()  # while waiting: the stacks it depends on (finished ones included)


ProgressCallback = Callable[[ProgressEvent], None]


def no_progress(_event: ProgressEvent) -> None:
    """A progress callback that ignores everything."""
