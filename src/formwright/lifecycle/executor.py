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

import copy
import dataclasses
import hashlib
import shutil
import threading
from pathlib import Path
from typing import Any

from formwright.engine.cfn import CallCounter, CloudFormation
from formwright.engine.group import StackGroup, target_key
from formwright.engine.results import ProgressCallback, StackResult
from formwright.engine.runner import StackRunner
from formwright.engine.stack import Stack, prepare_stacks
from formwright.errors import CloudError, FormwrightError
from formwright.lifecycle.actions import OperationLog, Redactor
from formwright.lifecycle.elements import manifest_order, reverse_graph, split_id
from formwright.lifecycle.events import EventFirer, EventScope
from formwright.lifecycle.manifest import (
    LenientInputs,
    Manifest,
    load_for_instance,
    manifest_snapshot,
    parse_manifest,
    stack_of,
    uses_properties,
)
from formwright.lifecycle.ownership import TAG_ELEMENT, owner_tags
from formwright.lifecycle.sources import SecretStore
from formwright.model.project import OutputRef, Project, StackConfig
from formwright.state.applied import AppliedCache, AppliedRecord
from formwright.state.journal import Journal, Operation, Revision, Step

REALIZING = ("create", "update", "replace")


class StepFailed(Exception):
    """A step of the operation failed; the message says which and why."""


class MaskedCache(AppliedCache):
    """The applied cache of an instance: an output that shows a secret is kept masked (only the hash
    decides whether a stack changed; outputs are read from the cloud when needed)."""

    def __init__(self, state_dir: Path, target_key: str, redactor: Redactor) -> None:
        super().__init__(state_dir, target_key)
        self.redactor = redactor

    def put(self, stack: str, record: AppliedRecord) -> None:
        """Record what was applied, secrets masked."""
        record.outputs = {k: self.redactor.text(str(v)) for k, v in record.outputs.items()}
        super().put(stack, record)


class Workspace:
    """An instance's project made ready for the cloud: stacks per element, runners per region, outputs."""

    def __init__(
        self,
        *,
        home_state: Path,
        instance: str,
        project: Project,
        target: Any,
        inputs: dict[str, Any],
        properties: dict[str, str],
        version: str | None,
        progress: ProgressCallback,
        counter: CallCounter | None = None,
    ) -> None:
        self.home_state = home_state
        self.instance = instance
        self.project = project
        self.target = target
        self.inputs = inputs
        self.properties = properties
        self.version = version
        self.progress = progress
        self.counter = counter or CallCounter()
        self.home_region = project.region or target.region
        self.instance_dir = home_state / "instances" / instance
        self._runners: dict[str, StackRunner] = {}
        self._prepared: dict[str, Stack] = {}
        self._lock = threading.RLock()
        self.redactor = Redactor()  # the operation's: secrets never reach the applied cache
        self.outputs: dict[str, dict[str, str]] = {}  # element id -> outputs
        self.pinned: dict[str, dict[str, str]] = {}  # element id -> recorded parameters (rollback)

    def runner(self, region: str) -> StackRunner:
        """The engine's runner for one region (its own applied cache under the instance's folder)."""
        with self._lock:
            if region not in self._runners:
                target = self.target if region == self.target.region else dataclasses.replace(
                    self.target, region=region, _session=None, _clients={}, _lock=threading.Lock())
                cfn = CloudFormation(target.client("cloudformation"), self.counter)
                cache = MaskedCache(self.instance_dir, target_key(target), self.redactor)
                self._runners[region] = StackRunner(self.project, target, cfn, cache, self.progress)
            return self._runners[region]

    def prepare_all(self, names: list[str]) -> None:
        """Load the templates of these project stacks once."""
        wanted = [n for n in names if n in self.project.stacks and n not in self._prepared]
        if wanted:
            self._prepared.update(prepare_stacks(self.project, target=self.target, only=wanted))

    def late(self, element: str) -> bool:
        """True when the element's stack calls property(): it is built only when its turn comes."""
        name = split_id(element, self.home_region)[0]
        return name in self.project.stacks and uses_properties(self.project, name)

    def stack(self, element: str, stack_name: str, *, stub: bool = False) -> Stack:
        """A Stack for an element under its CloudFormation name (a bare stub for deleting)."""
        name, _ = split_id(element, self.home_region)
        build_dir = self.instance_dir / "build" / element
        if stub or name not in self.project.stacks:
            config = StackConfig(name, self.project, None)
            config.stack_name = stack_name
            return Stack(config, {}, "", build_dir)
        with self._lock:
            if uses_properties(self.project, name):
                fresh = load_for_instance(Path(self.project.file or "."), self.instance, self.inputs,
                                          self.properties, strict=True, version=self.version)
                base = prepare_stacks(fresh, target=self.target, only=[name])[name]
            else:
                self.prepare_all([name])
                base = self._prepared[name]
        config = copy.copy(base.config)
        config.stack_name = stack_name
        config.tags = {**config.tags, **self.owner_tags(element)}
        return dataclasses.replace(base, config=config, build_dir=build_dir)

    def owner_tags(self, element: str = "") -> dict[str, str]:
        """The formwright tags of the instance's stacks (with the element's when one is named)."""
        tags = owner_tags(self.project.name, self.instance, element, str(self.home_state.parent))
        return tags if element else {k: v for k, v in tags.items() if k != TAG_ELEMENT}

    def outputs_view(
        self, element: str, graph: dict[str, list[str]], names: dict[str, str]
    ) -> dict[str, dict[str, str]]:
        """The outputs an element's `!ref`s see, by project stack name
        (read from the cloud when not known)."""
        view: dict[str, dict[str, str]] = {}
        for dep in graph.get(element, ()):
            if dep not in self.outputs:
                dep_stack, region = split_id(dep, self.home_region)
                info = self.runner(region).cfn.describe(
                    names.get(dep) or self.project.stacks[dep_stack].stack_name
                )
                self.outputs[dep] = info.outputs if info else {}
            view[split_id(dep, self.home_region)[0]] = dict(self.outputs[dep])
        stack = split_id(element, self.home_region)[0]
        recorded = self.pinned.get(element, {})
        for key, value in (
            self.project.stacks[stack].parameters.items() if stack in self.project.stacks else ()
        ):
            if isinstance(value, OutputRef) and recorded.get(key, "****") != "****":
                view.setdefault(value.stack, {})[value.output] = recorded[
                    key
                ]  # exactly what was deployed then
        return view

    def record(self, element: str, stack: Stack, graph: dict[str, list[str]], names: dict[str, str],
               redactor: Redactor) -> tuple[dict[str, Any], str, str]:
        """The revision entry of a realized element, and its processed template body with its hash."""
        name, region = split_id(element, self.home_region)
        prep = self.runner(region).prepare(stack, self.outputs_view(element, graph, names))
        body = redactor.text(prep.body)
        body_hash = hashlib.sha256(body.encode("utf-8")).hexdigest()
        params = {k: ("****" if k in prep.secrets else redactor.text(v)) for k, v in prep.parameters.items()}
        entry = {"stack": name, "region": region, "stack_name": stack.stack_name,
                 "kind": "tosca" if stack.config.tosca is not None else "cloudformation",
                 "hash": prep.hash, "parameters": params, "template": body_hash,
                 "tags": redactor.data(dict(stack.config.tags)), "deps": graph.get(element, [])}
        return entry, body_hash, body


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
        if op.params.get("target_revision"):
            pinned = journal.revision(op.instance, int(op.params["target_revision"]))
            workspace.pinned = {
                e: dict(rec.get("parameters", {})) for e, rec in (pinned.elements if pinned else {}).items()
            }

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

    def _fail(self, message: str) -> None:
        error = self._on_error("", self.op.kind)
        if error:
            message += f"; OnError: {error}"
        self._fail_started(message)
        self.journal.finish(self.op, "failed", message, instance_status=self._failed_status())
        if self.custom:
            raise CloudError(f"operation '{self.op.params['operation']}' on '{self.op.instance}' failed: "
                             f"{message}", where=self.op.id,
                             hint="the instance is unchanged; fix the cause and run the operation again")
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
            self.ws.outputs[element] = result.outputs
            name = split_id(element, self.ws.home_region)[0]
            for key, value in result.outputs.items():
                self.ws.properties[f"{name}.{key}"] = value
                if "@" in element:
                    self.ws.properties[f"{element}.{key}"] = value
            self.records[element] = self.ws.record(element, stack, self.graph, self.names, self.redactor)
        return result

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


def drop_instance_state(home_state: Path, instance: str) -> None:
    """Remove an instance's applied cache and build output (after a delete)."""
    shutil.rmtree(home_state / "instances" / instance, ignore_errors=True)


def load_workspace_project(source: Path, instance: str, inputs: dict[str, Any], properties: dict[str, str],
                           version: str | None) -> tuple[Project, Manifest]:
    """The project at `source` rendered for the instance, and its manifest."""
    project = load_for_instance(source, instance, inputs, properties, version=version)
    return project, parse_manifest(project)
