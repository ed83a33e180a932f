"""What an instance operation would do, in the order it would do it, without doing any of it
(`formwright instance update|upgrade|rollback|delete NAME --dry-run`; also the preview shown before
the prompt at a terminal).

The steps are those the operation would journal (lifecycle/upgrade.py `journal_steps`), walked as the
executor walks them: the add-on's first event, the elements in the manifest's order (reversed for a
rollback and a delete), the clean-up (a rollback's before its last event, the others' after), the last
event. Each element that is created or updated is planned with a real change set on the values its
parameters would have (engine/planning.py; an upstream output that may change is "known after apply",
and its users "may change"); each names the events it would fire and the hooks they would run.
Nothing is written: no journal entry, no lock, no change set kept, no hook run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from formwright.engine.planning import plan_stack
from formwright.engine.results import PlanTotals, StackPlan
from formwright.engine.stack import UNKNOWN
from formwright.lifecycle.elements import manifest_order, split_id
from formwright.lifecycle.executor import REALIZING

if TYPE_CHECKING:
    from formwright.lifecycle.manifest import Manifest
    from formwright.lifecycle.upgrade import Planned
    from formwright.lifecycle.workspace import Workspace


@dataclass
class PreviewStep:
    """One thing the operation would do: an event of the project, or an element's stack action."""

    phase: str  # pre | main | cleanup | post
    element: str  # "" for the project's own event
    action: str  # create | update | replace | delete | skip | share | unshare | event
    stack_name: str = ""
    events: list[dict[str, Any]] = field(default_factory=list)  # {event, hooks: [what each runs]}
    plan: StackPlan | None = None

    def to_json(self) -> dict[str, Any]:
        """Plain data."""
        return {**self.__dict__, "plan": self.plan.to_json() if self.plan else None}


@dataclass
class Preview:
    """The whole operation, previewed."""

    instance: str
    kind: str
    steps: list[PreviewStep]

    @property
    def plans(self) -> dict[str, StackPlan]:
        """The element plans, by element."""
        return {s.element: s.plan for s in self.steps if s.plan is not None}

    def to_json(self) -> dict[str, Any]:
        """Plain data for `--output json`."""
        return {"instance": self.instance, "kind": self.kind, "dry_run": True,
                "steps": [s.to_json() for s in self.steps], "totals": PlanTotals.of(self.plans).to_json()}


def events_of(manifest: Manifest, element: str, names: list[str]) -> list[dict[str, Any]]:
    """The events among `names` that have hooks for `element` ("" the project), with what they run."""
    found = []
    for event in names:
        hooks = [t.action if isinstance(t.action, str) else " ".join(map(str, t.action))
                 for t in manifest.triggers_for(element, event)]
        if hooks:
            found.append({"event": event, "hooks": hooks})
    return found


def preview(workspace: Workspace, manifest: Manifest, kind: str, event: str, main: list[Planned],
            cleanup: list[Planned], graph: dict[str, list[str]]) -> Preview:
    """The operation's steps in execution order, each element's stack planned."""
    first, last = ("Post", "Pre") if kind == "rollback" else ("Pre", "Post")
    before, after = f"{first}{event}", f"{last}{event}"
    names = {p.element: p.stack_name for p in main}
    steps = [PreviewStep("pre", "", "event", events=events_of(manifest, "", [before]))]
    order = manifest_order([p.element for p in main], graph)
    if kind in ("delete", "rollback"):
        order.reverse()
    by_element = {p.element: p for p in main}
    workspace.prepare_all(sorted({split_id(p.element, workspace.home_region)[0] for p in main
                                  if p.action in REALIZING}))
    unknown: dict[str, dict[str, str]] = {}  # element -> its outputs known only after apply
    element_steps = []
    for element in order:
        planned = by_element[element]
        step = PreviewStep("main", element, planned.action, planned.stack_name,
                           events_of(manifest, element, [before, after]) if planned.action != "skip" else [])
        if planned.action in REALIZING:
            step.plan = _plan(workspace, planned, graph, names, unknown)
        element_steps.append(step)
    tidy = [PreviewStep("cleanup", p.element, p.action, p.stack_name,
                        events_of(manifest, p.element, ["PreDelete", "PostDelete"])) for p in cleanup]
    closing = [PreviewStep("post", "", "event", events=events_of(manifest, "", [after]))]
    steps += element_steps + (tidy + closing if kind == "rollback" else closing + tidy)
    return Preview(workspace.instance, kind, steps)


def _plan(workspace: Workspace, planned: Planned, graph: dict[str, list[str]], names: dict[str, str],
          unknown: dict[str, dict[str, str]]) -> StackPlan:
    """The element's stack planned on the outputs its dependencies will have (unknown where they may
    change); its own unknown outputs noted for the elements after it."""
    element = planned.element
    region = split_id(element, workspace.home_region)[1]
    runner = workspace.runner(region)
    stack = workspace.stack(element, planned.stack_name)
    upstream = {split_id(dep, workspace.home_region)[0]: unknown[dep] for dep in graph.get(element, ())
                if dep in unknown}
    view = {name: {key: UNKNOWN if key in upstream.get(name, {}) else value for key, value in values.items()}
            for name, values in workspace.outputs_view(element, graph, names).items()}
    info = None if planned.action == "replace" else runner.cfn.describe(planned.stack_name)
    plan = plan_stack(runner, stack, view, info, upstream=upstream, want_outputs=True)
    plan.name = element
    unknown[element] = plan.unknown_outputs
    return plan
