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
    # a value it uses is known only after an upstream stack is applied: it may change (`because` says
    # which), replaced at worst as `replacement` says
    may_change: bool = False
    because: str = ""
    # a drift-aware change set's ResourceDriftStatus: DELETED on an Add creates again a resource deleted
    # outside CloudFormation
    drift: str = ""

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ResourceChange:
        """The change from its plain data (asdict)."""
        details = [PropertyChange(**d) for d in data.get("details") or []]
        return cls(**{**{k: v for k, v in data.items() if k in cls.__dataclass_fields__}, "details": details})

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
                   replacement, list(details.values()), drift=str(rc.get("ResourceDriftStatus") or ""))

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
    # known only after upstream stacks are applied: parameter -> why, and this stack's outputs a
    # dependent cannot know yet -> why (engine/knowns.py)
    unknown_parameters: dict[str, str] = field(default_factory=dict)
    unknown_outputs: dict[str, str] = field(default_factory=dict)
    # what a saved plan checks before it executes the change set (engine/plan_file.py)
    stack_id: str = ""
    inputs_hash: str = ""  # of the stack's inputs as planned ("" when some are known only after apply)
    updated: str = ""  # the stack's last-updated stamp when planned

    def to_json(self) -> dict[str, Any]:
        """The plan as plain data."""
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> StackPlan:
        """The plan from `to_json`'s data (a saved plan read back); unknown keys are ignored."""
        fields = {f for f in cls.__dataclass_fields__ if f not in ("resources", "parameters", "tags")}
        plan = cls(**{k: v for k, v in data.items() if k in fields})
        plan.resources = [ResourceChange.from_json(r) for r in data.get("resources") or []]
        plan.parameters = [ValueChange(**v) for v in data.get("parameters") or []]
        plan.tags = [ValueChange(**v) for v in data.get("tags") or []]
        return plan


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


@dataclass
class PlanTotals:
    """What a whole plan does, counted over its stacks' resource changes."""

    add: int = 0
    change: int = 0
    replacement: int = 0  # of `change`: Replacement True or Conditional
    remove: int = 0
    may_change: int = 0  # of `change`: known only after an upstream stack is applied
    unchanged_stacks: int = 0
    unsettled_stacks: int = 0  # planned as "unknown": the deploy settles them first

    @classmethod
    def of(cls, plans: dict[str, StackPlan]) -> PlanTotals:
        """Count every resource change of `plans`."""
        totals = cls()
        for plan in plans.values():
            totals.unchanged_stacks += plan.kind in SETTLED_PLANS
            totals.unsettled_stacks += plan.kind == "unknown"
            for change in plan.resources:
                if change.action in ("Add", "Import"):
                    totals.add += 1
                elif change.action == "Remove":
                    totals.remove += 1
                else:
                    totals.change += 1
                    totals.replacement += change.replacement in ("True", "Conditional")
                    totals.may_change += change.may_change
        return totals

    @property
    def changes(self) -> bool:
        """True when applying the plan would change anything."""
        return bool(self.add or self.change or self.remove or self.unsettled_stacks)

    def line(self) -> str:
        """`Plan: 3 to add, 2 to change (1 replacement), 1 to remove; 4 stacks unchanged`"""
        plural = "s" if self.replacement != 1 else ""
        inside = [f"{self.replacement} replacement{plural}"] if self.replacement else []
        if self.may_change:
            inside.append(f"{self.may_change} may change")
        change = f"{self.change} to change" + (f" ({', '.join(inside)})" if inside else "")
        text = f"Plan: {self.add} to add, {change}, {self.remove} to remove"
        stacks = f"{self.unchanged_stacks} stack{'s' if self.unchanged_stacks != 1 else ''} unchanged"
        if self.unsettled_stacks:
            stacks += f", {self.unsettled_stacks} to settle first"
        return f"{text}; {stacks}"

    def to_json(self) -> dict[str, int]:
        """The counts as plain data."""
        return asdict(self)
