"""Running an operation's journaled steps: project-level event, the elements on their DAG, clean-up,
project-level event, a new revision.

Per element: Pre<Op> → realize through the engine (StackRunner) → Post<Op> (a rollback fires them the
other way round and walks the graph reversed, as does delete). A clean-up delete (a stack only in the
old version, the old copy of a replaced immutable stack) fires PreDelete → delete → PostDelete like any
delete, with the hooks of the version that made the stack. Elements run as soon as the ones they
wait for are done, through the engine's DAG walker. A failure stops new work, fires OnError on the
element and on the project, and leaves the operation failed and retryable: `retry` runs the same
steps again, skipping those done and first reconciling one found `started` against the cloud.
"""

from __future__ import annotations

import dataclasses
import shutil
import threading
from pathlib import Path
from typing import Any, NoReturn

from formwright.engine.group import StackGroup
from formwright.engine.results import StackResult
from formwright.engine.stack import Stack
from formwright.errors import CloudError, FormwrightError
from formwright.lifecycle.actions import OperationLog, Redactor
from formwright.lifecycle.elements import manifest_order, reverse_graph, split_id
from formwright.lifecycle.events import EventFirer, EventScope
from formwright.lifecycle.manifest import Manifest, parse_manifest, stack_of
from formwright.lifecycle.ownership import (
    is_shared_element,
    set_tags,
    sharer_key,
    sharers,
)
from formwright.lifecycle.rendering import LenientInputs, load_for_instance, manifest_snapshot
from formwright.lifecycle.sources import SecretStore
from formwright.lifecycle.workspace import Workspace
from formwright.model.project import Project
from formwright.state.journal import Journal, Operation, Revision, Step

REALIZING = ("create", "update", "replace")


class StepFailed(Exception):
    """A step of the operation failed; the message says which and why."""


class Executor:
    """Runs one operation (new or resumed) to its end."""

    def __init__(self, *, journal: Journal, secrets: SecretStore, op: Operation, workspace: Workspace,
                 manifest: Manifest, graph: dict[str, list[str]], cleanup_graph: dict[str, list[str]],
                 event: str, redactor: Redactor, log: OperationLog, max_concurrency: int = 8,
                 source: str = "", regions: list[str] | None = None,
                 compensates: str | None = None) -> None:
        self.journal = journal
        self.secrets = secrets
        self.op = op
        self.ws = workspace
        self.manifest = manifest
        self.graph = graph
        self.cleanup_graph = cleanup_graph
        self.event = event
        self.redactor = redactor
        self.log = log
        self.max_concurrency = max_concurrency
        self.source = source
        self.regions = regions or []
        self.compensates = compensates
        self.reverse = op.kind in ("delete", "rollback")
        first, last = ("Post", "Pre") if op.kind == "rollback" else ("Pre", "Post")
        self.before, self.after = f"{first}{event}", f"{last}{event}"
        self.names = {s.element: s.stack_name for s in op.steps if s.phase == "main" and s.element}
        self.records: dict[str, tuple[dict[str, Any], str, str]] = {}
        self.abort = threading.Event()
        self.retrying = op.attempt > 1
        kind = op.params.get("operation", op.kind)
        scope = EventScope(
            "retry" if self.retrying else kind,
            op.instance,
            workspace.version,
            workspace.inputs,
            workspace.properties,
            manifest_snapshot(workspace.project),
            Path(workspace.project.directory),
            retry_of=kind if self.retrying else None,
        )
        self.events = EventFirer(journal, op, manifest, scope, log, redactor, secrets)
        # the versions whose stacks the clean-up deletes (newest first):
        # their manifests own those stacks' hooks
        self.cleanup_sources = [str(s) for s in op.params.get("cleanup_sources", [])]
        self.owners: list[tuple[Manifest, Path]] = []
        workspace.pinned = pinned_parameters(journal, op.instance, op.params)

    # ---- the whole operation ------------------------------------------------------------------
    def run(self) -> Revision | None:
        """Run every step not done yet; a new revision when the operation changes the instance.

        Whatever goes wrong (a hook, the cloud, a bad `property()`, an interrupt) the operation and its
        step end failed, never `running`.
        """
        try:
            revision = self._steps()
        except StepFailed as failure:
            self._fail(str(failure))
        except BaseException as err:
            message = self.redactor.text(str(err) or type(err).__name__)
            self._fail_started(message)
            self.journal.finish(self.op, "failed", message, instance_status=self._failed_status())
            raise
        status = "deleted" if self.op.kind == "delete" else "deployed"
        self.journal.finish(self.op, "done", instance_status=None if self.custom else status)
        if self.compensates:
            failed = self.journal.operation(self.compensates)
            if failed is not None:
                for step in failed.steps:
                    if step.status in ("done", "failed", "started"):
                        self.journal.step(failed, step, "compensated")
        return revision

    @property
    def custom(self) -> bool:
        """A day-2 operation: it never changes the instance's status."""
        return bool(self.op.params.get("operation"))

    def _failed_status(self) -> str | None:
        return None if self.custom else "failed"

    def _steps(self) -> Revision | None:
        """The phases in the document's order: the add-on's first event, the elements, the add-on's last
        event; an upgrade's clean-up only once that last event succeeded (a rollback's before it)."""
        for step in self._phase("pre"):
            self._project_step(step, self.before, again=self.retrying)
        for step in self._phase("action"):
            self._project_step(step, None)
        if self.op.kind == "rollback" and any(s.action == "delete" and s.status != "done"
                                              for s in self._phase("main")):
            self._load_owners()  # a stack the upgrade created is removed with that version's hooks
        self._walk(self._phase("main"), self.graph, reverse=self.reverse, events=True)
        if self.op.kind == "rollback":
            self._cleanup()
        for step in self._phase("post"):
            self._project_step(step, self.after)
        if self.op.kind != "rollback":
            self._cleanup()
        return self._revision()

    def _cleanup(self) -> None:
        cleanup = self._phase("cleanup")
        if any(s.status != "done" for s in cleanup):
            self._load_owners()
        self._walk(cleanup, self.cleanup_graph, reverse=True, events=True)

    def _fail(self, message: str) -> NoReturn:
        error = self._on_error("", self.op.kind)
        if error:
            message += f"; OnError: {error}"
        self._fail_started(message)
        self.journal.finish(self.op, "failed", message, instance_status=self._failed_status())
        if self.custom:
            raise CloudError(f"operation '{self.op.params['operation']}' on '{self.op.instance}' failed: "
                             f"{message}", where=self.op.id,
                             hint="the instance is unchanged; fix the cause and run the operation again",
                             ) from None
        raise CloudError(
            f"{self.op.kind} of '{self.op.instance}' failed: {message}",
            where=self.op.id,
            hint=f"fix the cause, then `formwright instance retry {self.op.instance}`",
        ) from None

    def _fail_started(self, message: str) -> None:
        """Every step left `started` by the failure ends failed."""
        for step in self.op.steps:
            if step.status == "started":
                self.journal.step(self.op, step, "failed", error=message)

    def _load_owners(self) -> None:
        """The manifests of the versions the clean-up deletes stacks of (rendered leniently: hooks only)."""
        self.owners = []
        for source in self.cleanup_sources:
            try:
                project = load_for_instance(Path(source), self.op.instance, LenientInputs(self.ws.inputs, {}))
                self.owners.append((parse_manifest(project), Path(project.directory)))
            except FormwrightError as err:  # that version's hooks cannot be read: the new version's are used
                self.log.write(
                    "cleanup", f"cannot read the hooks of {source}: {self.redactor.text(str(err))}", "warn"
                )

    def _owner(self, element: str) -> tuple[Manifest | None, Path | None]:
        """The manifest and folder whose hooks a clean-up element fires (None, None: this operation's)."""
        for manifest, folder in self.owners:
            if stack_of(element) in manifest.stack_triggers:
                return manifest, folder
        return None, None

    def _phase(self, phase: str) -> list[Step]:
        return [s for s in self.op.steps if s.phase == phase]

    def _project_step(self, step: Step, event: str | None, *, again: bool = False) -> None:
        """The add-on's own event (or a custom operation's action); `again` fires a done one once more
        (the document lists the add-on Pre event for every retry)."""
        if step.status == "done" and not again:
            return
        self.journal.step(self.op, step, "started")
        try:
            self._project_event(step, event)
        except (StepFailed, FormwrightError) as err:
            error = self.redactor.text(str(err))
            self.journal.step(self.op, step, "failed", error=error)
            raise StepFailed(error) from None
        self.journal.step(self.op, step, "done")

    def _project_event(self, step: Step, event: str | None) -> None:
        if event is None:  # a custom operation's own action
            custom = self.manifest.operations[self.op.params["operation"]]
            from formwright.lifecycle.manifest import Trigger

            trigger = Trigger(
                f"Run{custom.event}", custom.action or [], custom.timeout, None, "", custom.line
            )
            error = self.events.fire("", trigger.event, action="operation", triggers=[trigger]) \
                if custom.action else None
        else:
            error = self.events.fire("", event, action=self.op.kind)
        if error:
            raise StepFailed(error)

    # ---- elements on the DAG ------------------------------------------------------------------
    def _walk(self, steps: list[Step], graph: dict[str, list[str]], *, reverse: bool, events: bool) -> None:
        """Run the steps' elements on their graph (reversed for delete and rollback). One at a time by
        default, in the manifest's order (a stack after those it needs); `max_concurrency` over 1 runs
        independent ones side by side. After a failure no further element starts."""
        if not steps or self.abort.is_set():
            return
        by_element = {s.element: s for s in steps}
        order = manifest_order([s.element for s in steps], graph)
        if reverse:
            order.reverse()
        walk_graph = {e: {d for d in graph.get(e, ()) if d in by_element} for e in by_element}
        if reverse:
            walk_graph = reverse_graph(walk_graph)
        if self.max_concurrency <= 1:  # a chain: exactly this order, nothing starts after a failure
            walk_graph = {e: ({order[i - 1]} if i else set()) for i, e in enumerate(order)}
        stacks: dict[str, Stack] = {}
        owner: dict[int, Step] = {}
        self.ws.prepare_all(sorted({split_id(s.element, self.ws.home_region)[0] for s in steps
                                    if s.action in REALIZING or s.action == "noop"}))
        for element in order:
            step = by_element[element]
            # a stack whose definition calls property() is built when its turn comes (the stacks it
            # names are done then); until then a stub stands in
            late = self.ws.late(element)
            stub = step.action == "delete" or step.phase == "cleanup" or late
            stack = self.ws.stack(element, step.stack_name, stub=stub)
            stacks[element] = stack
            owner[id(stack)] = step
        group = StackGroup(self.ws.project, stacks, self.ws.target, max_concurrency=self.max_concurrency,
                           progress=self.ws.progress, counter=self.ws.counter)
        results = group.walk(walk_graph, lambda stack: self._element(owner[id(stack)], stack, events))
        failed = [r.error or r.name for r in results.values() if r.outcome == "failed"]
        if failed or self.abort.is_set():
            raise StepFailed("; ".join(failed) or "stopped")

    def _element(self, step: Step, stack: Stack, events: bool) -> StackResult:
        element = step.element
        if step.status == "done":
            return StackResult(element, stack.stack_name, "unchanged")
        if self.abort.is_set():
            return StackResult(element, stack.stack_name, "skipped", error="stopped")
        if step.action in ("share", "unshare"):
            return self._shared(step, stack, events)
        cleanup = step.phase == "cleanup"
        before, after = ("PreDelete", "PostDelete") if cleanup else (self.before, self.after)
        foreign = cleanup or (step.action == "delete" and self.op.kind == "rollback")
        manifest, cwd = self._owner(element) if foreign else (None, None)
        try:
            if step.action in REALIZING and not cleanup and self.ws.late(element):
                stack = self.ws.stack(element, step.stack_name)
            self._reconcile(step, stack)
            failed_creation = step.status == "failed" and step.action in ("create", "replace")
            self.journal.step(self.op, step, "started")
            if failed_creation and events:  # retry of a creation: its removal flow, then its creation
                self._fire(element, "PreDelete", "delete")
                removed = self._realize(dataclasses.replace(
                    step, action="delete", idempotency_key=f"{step.idempotency_key}-rm"), stack)
                if not removed.ok:
                    raise StepFailed(removed.error or f"{element}: {removed.outcome}")
                self._fire(element, "PostDelete", "delete")
            if events:
                self._fire(element, before, step.action, manifest, cwd, cacheable=not cleanup)
            result = self._realize(step, stack)
            if not result.ok:
                raise StepFailed(result.error or f"{element}: {result.outcome}")
            if events:
                self._fire(element, after, step.action, manifest, cwd, cacheable=not cleanup)
            self.journal.step(self.op, step, "done", note=result.outcome)
            return result
        except (StepFailed, FormwrightError) as err:
            self.abort.set()
            message = self.redactor.text(str(err))
            self.journal.step(self.op, step, "failed", error=message)
            if events:
                on_error = self._on_error(element, step.action, manifest, cwd, cacheable=not cleanup)
                if on_error:
                    message += f"; OnError: {on_error}"
            return StackResult(element, stack.stack_name, "failed", error=message)

    def _shared(self, step: Step, stack: Stack, events: bool) -> StackResult:
        """A shared element: made (with its events) by the first instance, joined by the others; left by
        each instance, removed (with its events) by the last. Sharers are counted by the stack's tags."""
        element = step.element
        runner = self.ws.runner(split_id(element, self.ws.home_region)[1])
        mine = sharer_key(self.op.instance, str(self.ws.home_state.parent))
        first, last = ("PreDelete", "PostDelete") if step.phase == "cleanup" else (self.before, self.after)
        try:
            self.journal.step(self.op, step, "started")
            info = runner.cfn.describe(stack.stack_name)
            if info is not None and not is_shared_element(info.tags, self.ws.project.name, element):
                raise StepFailed(f"{element}: stack '{stack.stack_name}' is not this project's shared "
                                 "element")
            if step.action == "share" and info is None:
                made = self._realize_with_events(dataclasses.replace(step, action="create"), stack,
                                                 first, last, events)
                made.outcome = "created (first sharer)"
                result = made
            elif step.action == "share":
                assert info is not None
                if mine not in info.tags:
                    set_tags(runner.cfn, info, {**info.tags, mine: str(self.ws.home_state.parent)})
                self._keep_outputs(element, info.outputs)
                self.records[element] = self.ws.record(element, stack, self.graph, self.names, self.redactor)
                result = StackResult(element, stack.stack_name, f"joined ({len([*sharers(info.tags), mine])} "
                                     "instances)", outputs=info.outputs)
            elif info is None:
                result = StackResult(element, stack.stack_name, "absent")
            elif [k for k in sharers(info.tags) if k != mine]:
                set_tags(runner.cfn, info, {k: v for k, v in info.tags.items() if k != mine})
                result = StackResult(element, stack.stack_name,
                                     f"left ({len(sharers(info.tags)) - 1} instances remain)")
            else:
                result = self._realize_with_events(dataclasses.replace(step, action="delete"), stack,
                                                   first, last, events)
                result.outcome = "deleted (last sharer)"
            self.journal.step(self.op, step, "done", note=result.outcome)
            return result
        except (StepFailed, FormwrightError) as err:
            self.abort.set()
            message = self.redactor.text(str(err))
            self.journal.step(self.op, step, "failed", error=message)
            return StackResult(element, stack.stack_name, "failed", error=message)

    def _realize_with_events(self, step: Step, stack: Stack, first: str, last: str,
                             events: bool) -> StackResult:
        if events:
            self._fire(step.element, first, step.action)
        result = self._realize(step, stack)
        if not result.ok:
            raise StepFailed(result.error or f"{step.element}: {result.outcome}")
        if events:
            self._fire(step.element, last, step.action)
        return result

    def _on_error(self, element: str, action: str, manifest: Manifest | None = None, cwd: Path | None = None,
                  *, cacheable: bool = True) -> str | None:
        """Fire OnError; its own failure (even a bad expression) is returned, never raised."""
        try:
            return self.events.fire(element, "OnError", action=action, manifest=manifest, cwd=cwd,
                                    cacheable=cacheable)
        except FormwrightError as err:
            return self.redactor.text(str(err))

    def _fire(self, element: str, event: str, action: str, manifest: Manifest | None = None,
              cwd: Path | None = None, *, cacheable: bool = True) -> None:
        error = self.events.fire(
            element, event, action=action, manifest=manifest, cwd=cwd, cacheable=cacheable
        )
        if error:
            raise StepFailed(error)

    def _reconcile(self, step: Step, stack: Stack) -> None:
        """A step found `started` (a crash): settle the stack's real status before running it again."""
        if step.status != "started" or step.action in ("noop", "skip"):
            return
        runner = self.ws.runner(split_id(step.element, self.ws.home_region)[1])
        info = runner.cfn.describe(stack.stack_name)
        if info is not None and info.in_progress:
            info = runner.cfn.wait_stack(stack.stack_name)
        status = info.status if info else "absent"
        self.log.write(step.element, f"reconciled after an interruption: the stack is {status}")
        step.note = f"reconciled: {status}"

    def _realize(self, step: Step, stack: Stack) -> StackResult:
        element = step.element
        region = split_id(element, self.ws.home_region)[1]
        runner = self.ws.runner(region)
        token = f"{step.idempotency_key}-{step.attempt}"
        if step.action == "delete":
            result = runner.delete(stack, {}, request_token=token)
            self.ws.outputs.pop(element, None)
            return result
        if step.action not in REALIZING:
            return StackResult(element, stack.stack_name, step.action)
        result = runner.deploy(
            stack, self.ws.outputs_view(element, self.graph, self.names), request_token=token
        )
        if result.ok:
            self._keep_outputs(element, result.outputs)
            self.records[element] = self.ws.record(element, stack, self.graph, self.names, self.redactor)
        return result

    def _keep_outputs(self, element: str, outputs: dict[str, str]) -> None:
        """A finished element's outputs: for `!ref` and `{{ property('stack.Key') }}` of later ones."""
        self.ws.outputs[element] = outputs
        name = split_id(element, self.ws.home_region)[0]
        for key, value in outputs.items():
            self.ws.properties[f"{name}.{key}"] = value
            if "@" in element:
                self.ws.properties[f"{element}.{key}"] = value

    # ---- the revision -------------------------------------------------------------------------
    def _revision(self) -> Revision | None:
        if self.op.kind == "delete" or self.op.params.get("operation"):
            return None
        elements: dict[str, dict[str, Any]] = {}
        blobs: dict[str, str] = {}
        for step in self._phase("main"):
            if step.action == "delete":
                continue
            record = self.records.get(step.element)
            if record is None:
                stack = self.ws.stack(step.element, step.stack_name)
                record = self.ws.record(step.element, stack, self.graph, self.names, self.redactor)
            entry, body_hash, body = record
            elements[step.element] = entry
            blobs[body_hash] = body
        inputs = {
            k: ("****" if k in self.op.params.get("secure", []) else v) for k, v in self.ws.inputs.items()
        }
        return self.journal.add_revision(self.op, version=self.ws.version, source=self.source, inputs=inputs,
                                         regions=self.regions, elements=elements, blobs=blobs)


def pinned_parameters(journal: Journal, instance: str, params: dict[str, Any]) -> dict[str, dict[str, str]]:
    """A rollback's parameters per element, exactly as its target revision recorded them (none for
    other operations)."""
    if not params.get("target_revision"):
        return {}
    pinned = journal.revision(instance, int(params["target_revision"]))
    return {e: dict(rec.get("parameters", {})) for e, rec in (pinned.elements if pinned else {}).items()}


def drop_instance_state(home_state: Path, instance: str) -> None:
    """Remove an instance's applied cache and build output (after a delete)."""
    shutil.rmtree(home_state / "instances" / instance, ignore_errors=True)


def load_workspace_project(source: Path, instance: str, inputs: dict[str, Any], properties: dict[str, str],
                           version: str | None) -> tuple[Project, Manifest]:
    """The project at `source` rendered for the instance, and its manifest."""
    project = load_for_instance(source, instance, inputs, properties, version=version)
    return project, parse_manifest(project)
