"""Operations on deployment instances: create, update, upgrade, scope, rollback, delete, retry, run.

Each operation is planned in full (its steps written to the journal before anything acts), takes the
instance's lock, and is carried out by the Executor. Everything an operation needs to run again is
in its journal row (source snapshot, redacted inputs, regions, graphs), so `retry` rebuilds it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from formwright.engine.cfn import CallCounter
from formwright.engine.results import ProgressCallback, no_progress
from formwright.errors import InputError
from formwright.lifecycle.actions import Echo, OperationLog, Redactor
from formwright.lifecycle.elements import check_regions, element_graph, elements_of, split_id
from formwright.lifecycle.executor import Executor, drop_instance_state
from formwright.lifecycle.homes import home_region, instance_environment
from formwright.lifecycle.inputs import resolve_inputs
from formwright.lifecycle.loading import MASK, Loaded, load, unmasked
from formwright.lifecycle.manifest import parse_manifest
from formwright.lifecycle.ownership import check_names_free, check_single_instance
from formwright.lifecycle.rendering import LenientInputs, check_instance_names, load_for_instance
from formwright.lifecycle.sources import SecretStore, changed_since
from formwright.lifecycle.upgrade import (
    NewElement,
    Planned,
    check_input_changes,
    delete_plan,
    journal_steps,
    plan_drift,
    rollback_plan,
    shared_plan,
)
from formwright.lifecycle.workspace import Workspace
from formwright.model.project import Project
from formwright.state.journal import Instance, Journal, Operation, Revision, new_id, open_journal

if TYPE_CHECKING:
    from formwright.lifecycle.preview import Preview

NAME = re.compile(r"^[a-z][a-z0-9-]{0,39}$")
EVENTS = {
    "create": "Create",
    "update": "Update",
    "upgrade": "Upgrade",
    "scope": "Scope",
    "rollback": "Upgrade",  # a rollback fires the upgrade's events (operation: rollback)
    "delete": "Delete",
}


@dataclass
class Outcome:
    """How an operation ended."""

    instance: str
    operation_id: str
    kind: str
    status: str
    revision: int | None = None
    steps: list[dict[str, Any]] = field(default_factory=list)
    note: str | None = None

    def to_json(self) -> dict[str, Any]:
        """Plain data for `--output json`."""
        return self.__dict__.copy()


class Lifecycle:
    """The lifecycle of the instances of one project home (its `.formwright/journal.db`)."""

    def __init__(self, home: Path, target: Any = None, *, target_flag: str | None = None,
                 progress: ProgressCallback = no_progress, max_concurrency: int = 1,
                 counter: CallCounter | None = None, region: str | None = None,
                 profile: str | None = None, environment: str | None = None,
                 echo: Echo | None = None) -> None:
        self.home = Path(home).resolve()
        self.echo = echo  # each line of an action's output and each log message, as it comes
        self.state = self.home / ".formwright"
        self.journal: Journal = open_journal(self.state)
        self.secrets = SecretStore(self.state)
        self._target = target
        self._target_flag = target_flag
        self.progress = progress
        self.max_concurrency = max_concurrency
        self.counter = counter or CallCounter()
        self.note: str | None = None
        self.flags: dict[str, Any] = {"region": region, "profile": profile}  # over the project's
        self.environment = environment  # --env / FORMWRIGHT_ENV; an instance keeps the one it was created in
        self.region_note: str | None = None  # the home region won over AWS_REGION
        self.dry_run = False  # operations return a Preview and change nothing

    def log_path(self, operation_id: str) -> Path:
        """The operation's log: its actions' output and messages, secrets masked."""
        return self.state / "logs" / f"{operation_id}.log"

    def close(self) -> None:
        """Close the journal."""
        self.journal.close()

    def target(self, project: Project, name: str | None = None) -> Any:
        """The target of the instance's home region, with the project's own keys (profile, role, account)
        and --region/--profile over them; resolved on first use, so read-only commands need no cloud."""
        if self._target is None:
            from formwright.cloud.session import Targets

            home = self._home(project, name)
            self._target = Targets(self._target_flag).get(replace(project.target, region=home))
        return self._target

    def _home(self, project: Project, name: str | None) -> str:
        """The home region (`homes.home_region`); the note when the project's region won is kept."""
        region, note = home_region(self.journal, project, name, self.flags["region"])
        self.region_note = note or self.region_note
        return region

    def _environment(self, name: str) -> str | None:
        """The instance's environment (`homes.instance_environment`)."""
        return instance_environment(self.journal, name, self.environment)

    # ---- reading --------------------------------------------------------------------------------
    def instances(self) -> list[Instance]:
        """Every instance not deleted."""
        return self.journal.live_instances()

    def sharers(self) -> dict[str, list[str]]:
        """Each shared element and the instances of this home that use it (from their revisions)."""
        result: dict[str, list[str]] = {}
        for inst in self.instances():
            current = self.journal.revision(inst.name)
            for element, record in (current.elements if current else {}).items():
                if record.get("shared"):
                    result.setdefault(element, []).append(inst.name)
        return result

    def require(self, name: str) -> Instance:
        """The instance, or a clear error."""
        inst = self.journal.instance(name)
        if inst is None or inst.status == "deleted":
            known = ", ".join(i.name for i in self.instances()) or "none"
            raise InputError(f"no instance '{name}'", file=str(self.journal.path), hint=f"instances: {known}")
        return inst

    def history(self, name: str) -> tuple[list[Operation], list[Revision]]:
        """The instance's operations and revisions, oldest first."""
        if self.journal.instance(name) is None:
            raise InputError(f"no instance '{name}'", file=str(self.journal.path))
        return self.journal.operations(name), self.journal.revisions(name)

    # ---- loading --------------------------------------------------------------------------------
    def _properties(self, name: str) -> dict[str, str]:
        return {**self.journal.properties(name), **self.secrets.load(name)["properties"]}

    def _load(self, name: str, source: Path, given: dict[str, str],
              previous: dict[str, Any] | None) -> Loaded:
        """The operation's project (`loading.load`), in the instance's environment."""
        options = {**self.flags, "environment": self._environment(name)}
        return load(self.state, name, source, given, previous, self._properties(name), options)

    def _previous_inputs(self, name: str, revision: Revision) -> dict[str, Any]:
        """The revision's inputs, secure ones restored from what its own operation kept (not the latest)."""
        return unmasked(revision.inputs, self.secrets.operation_inputs(name, revision.operation_id))

    def _redactor(self, name: str, inputs: dict[str, Any], secure: list[str]) -> Redactor:
        # every secret kept for the instance, not only this operation's: a rollback to an older secret
        # must not let the newer one through either
        return Redactor([inputs[k] for k in secure if k in inputs] + self.secrets.known_values(name))

    # ---- operations -----------------------------------------------------------------------------
    def create(
        self, name: str, source: Path, inputs: dict[str, str], regions: list[str] | None = None
    ) -> Outcome | Preview:
        """Create a new instance of the project at `source`."""
        if not NAME.match(name):
            raise InputError(f"bad instance name '{name}'", hint="lower-case letters, digits and '-', "
                             "starting with a letter, at most 40 characters")
        existing = self.journal.instance(name)
        if existing is not None and existing.status != "deleted":
            raise InputError(f"instance '{name}' already exists", file=str(self.journal.path),
                             hint=f"pick another name, or `formwright instance upgrade {name}`")
        if regions is not None:
            check_regions(regions)
        loaded = self._load(name, source, inputs, None)
        others = [i.name for i in self.instances() if i.name != name]
        if not loaded.manifest.multiple_instances and others:
            raise InputError(f"this project allows a single instance and '{others[0]}' exists",
                             file=loaded.manifest.file, hint="set policies: {multiple_instances: true}")
        check_instance_names(loaded.project)
        home = self.target(loaded.project, name).region
        if not loaded.manifest.multiple_instances:
            workspace = self._workspace(name, loaded)
            check_single_instance(workspace.runner(home).cfn, loaded.project.name, name, str(self.home))
        scope = regions or [home]
        elements = elements_of(loaded.project, loaded.manifest, scope, home)
        graph = element_graph(loaded.project, elements)
        main = [Planned(e.id, "share" if e.stack in loaded.manifest.shared else "create", e.stack_name)
                for e in elements.values()]
        return self._start(name, "create", loaded, scope, main, [], graph, {},
                           new_instance={"version": loaded.project.version, "regions": scope})

    def update(self, name: str, inputs: dict[str, str]) -> Outcome | Preview:
        """Apply new input values to the instance's current version."""
        current = self._current(name)
        return self._change(name, "update", Path(current.source), inputs, current.regions)

    def upgrade(self, name: str, to: Path, inputs: dict[str, str], *,
                repair: bool = False) -> Outcome | Preview:
        """Move the instance to the project version at `to` (a folder or a package) by drift.

        First a shallow check that every element's stack is in the cloud as the journal says; a missing
        one stops the upgrade, or with `repair` is created again.
        """
        current = self._current(name)
        return self._change(name, "upgrade", to, inputs, current.regions, repair=repair)

    def scope(self, name: str, regions: list[str]) -> Outcome | Preview:
        """Deploy the instance in exactly these regions: per-region stacks are added or removed."""
        current = self._current(name)
        if not regions:
            raise InputError("--regions needs at least one region", hint="--regions us-east-1,eu-west-1")
        check_regions(regions)
        return self._change(name, "scope", Path(current.source), {}, regions)

    def _current(self, name: str) -> Revision:
        self.require(name)
        last = self._last_change(name)
        if last is not None and last.status != "done":
            raise InputError(
                f"the last operation of '{name}' ({last.kind} {last.id}) did not finish",
                where=name,
                hint=f"`formwright instance retry {name}` or `rollback {name}` first",
            )
        current = self.journal.revision(name)
        if current is None:
            raise InputError(f"instance '{name}' has no revision yet", where=name,
                             hint=f"`formwright instance retry {name}` to finish its creation")
        return current

    def _last_change(self, name: str) -> Operation | None:
        """The newest operation that changes the instance (a day-2 operation never does)."""
        for op in reversed(self.journal.operations(name)):
            if not op.params.get("operation"):
                return self.journal.operation(op.id)
        return None

    def _change(
        self, name: str, kind: str, source: Path, given: dict[str, str], regions: list[str], *,
        repair: bool = False,
    ) -> Outcome | Preview:
        current = self.journal.revision(name)
        assert current is not None
        previous = self._previous_inputs(name, current)
        old_loaded = load_for_instance(Path(current.source), name, LenientInputs(previous, {}),
                                       environment=self._environment(name))
        loaded = self._load(name, source, given, previous)
        check_input_changes(parse_manifest(old_loaded).inputs, loaded.manifest.inputs, loaded.manifest.file)
        home = self.target(loaded.project, name).region
        elements = elements_of(loaded.project, loaded.manifest, regions, home)
        graph = element_graph(loaded.project, elements)
        workspace = self._workspace(name, loaded)
        old = dict(current.elements)
        if kind == "upgrade":
            for element in workspace.missing(old):
                if not repair:
                    raise InputError(
                        f"the stack '{old[element]['stack_name']}' of element '{element}' is not in the "
                        "cloud as the journal says (deleted or failed outside formwright)", where=name,
                        hint=f"`formwright instance upgrade {name} --repair …` creates it again")
                if element in elements:
                    del old[element]  # created again as a new element
        new = [NewElement(e.id, e.kind, old[e.id]["stack_name"] if e.id in old and old[e.id]["kind"] == e.kind
                          else e.stack_name, loaded.project.stacks[e.stack].immutable, e.stack_name)
               for e in elements.values()]

        def new_hash(element_id: str) -> str | None:
            element = elements[element_id]
            stack = workspace.stack(element_id, old[element_id]["stack_name"])
            runner = workspace.runner(element.region)
            prep = runner.prepare(stack, workspace.outputs_view(element_id, graph, {}), partial=True)
            return prep.hash

        main, cleanup = plan_drift(old, new, new_hash, graph, replacement_suffix=f"r{current.number + 1}")
        main, cleanup = shared_plan(main, cleanup, old, loaded.manifest.shared)
        cleanup_graph = {e: list(rec.get("deps", [])) for e, rec in old.items()}
        return self._start(name, kind, loaded, regions, main, cleanup, graph, cleanup_graph,
                           extra={"cleanup_sources": [current.source]})

    def rollback(self, name: str, to_revision: int | None = None) -> Outcome | Preview:
        """Bring the instance back to revision N exactly (default: undo the last change); a new revision."""
        self.require(name)
        current = self.journal.revision(name)
        if current is None:
            raise InputError(f"instance '{name}' has no revision to roll back to", where=name,
                             hint=f"`formwright instance retry {name}` or `delete {name}`")
        last = self._last_change(name)
        failed = last if last is not None and last.status != "done" and last.kind != "create" else None
        if failed is not None and failed.kind == "delete":
            raise InputError(f"cannot roll back a failed {failed.kind}", where=name,
                             hint=f"`formwright instance retry {name}`")
        number = (
            to_revision if to_revision is not None else (current.number if failed else current.number - 1)
        )
        target = self.journal.revision(name, number)
        if target is None:
            raise InputError(f"instance '{name}' has no revision {number}", where=name,
                             hint=f"revisions: 1..{current.number}")
        previous = self._previous_inputs(name, target)
        loaded = self._load(name, Path(target.source), {}, previous)
        main, cleanup, graph, cleanup_graph = rollback_plan(current.elements, target.elements, failed)
        return self._start(
            name,
            "rollback",
            loaded,
            list(target.regions),
            main,
            cleanup,
            graph,
            cleanup_graph,
            extra={
                "target_revision": number,
                "compensates": failed.id if failed else None,
                "cleanup_sources": ([failed.params["source"]] if failed else []) + [current.source],
            },
        )

    def delete(self, name: str) -> Outcome | Preview:
        """Delete every stack of the instance in reverse dependency order, then the instance."""
        self.require(name)
        current = self.journal.revision(name)
        last = self.journal.last_operation(name)
        source = Path(current.source) if current else Path(last.params["source"]) if last else None
        if source is None:
            raise InputError(f"instance '{name}' has nothing to delete", where=name)
        previous = self._previous_inputs(name, current) if current else self._retry_inputs(name, last)
        loaded = self._load(name, source, {}, previous)
        main, graph = delete_plan(self.journal, name, current)
        return self._start(name, "delete", loaded, current.regions if current else [], main, [], graph, {})

    def run(self, name: str, operation: str, given: dict[str, str]) -> Outcome | Preview:
        """Run a custom day-2 operation: Pre<Op>, its action, each stack's Pre/Post<Op>, Post<Op>."""
        current = self._current(name)
        previous = self._previous_inputs(name, current)
        loaded = self._load(name, Path(current.source), {}, previous)
        custom = loaded.manifest.operations.get(operation)
        if custom is None:
            known = ", ".join(loaded.manifest.operations) or "none"
            raise InputError(f"unknown operation '{operation}'", file=loaded.manifest.file,
                             hint=f"operations: {known}")
        op_inputs = resolve_inputs(custom.inputs, given, file=loaded.manifest.file)
        loaded.inputs = {**loaded.inputs, **op_inputs}
        loaded.secure = sorted(set(loaded.secure) | {n for n, d in custom.inputs.items() if d.secure})
        home = self.target(loaded.project, name).region
        elements = elements_of(loaded.project, loaded.manifest, current.regions, home)
        graph = element_graph(loaded.project, elements)
        main = [Planned(e, "noop", current.elements.get(e, {}).get("stack_name", el.stack_name))
                for e, el in elements.items()]
        return self._start(name, "run", loaded, current.regions, main, [], graph, {},
                           extra={"operation": operation, "event": custom.event}, action=True)

    def retry(self, name: str) -> Outcome:
        """Resume the last failed or interrupted operation at its first step not done."""
        if self.journal.instance(name) is None:
            self.require(name)
        op = self.journal.last_operation(name)
        if op is not None and (op.status == "done" or not op.params.get("operation")):
            op = self._last_change(name)  # a failed day-2 operation is retried only while it is the last
        if op is None or op.status == "done":
            self.journal.clear_stale(name)
            raise InputError(f"nothing to retry for '{name}'", where=name,
                             hint="the last operation finished" if op else "no operation yet")
        self.note = self.journal.acquire(name, op.id, take_over=op.id)
        changed = changed_since(op)
        if changed:
            self.note = f"{self.note}; {changed}" if self.note else changed
        try:
            self.journal.resume(op)
            inputs = self._retry_inputs(name, op)
            loaded = self._load(name, Path(op.params["source"]), {}, inputs)
            loaded.inputs = {**loaded.inputs, **{k: v for k, v in inputs.items() if k not in loaded.inputs}}
            return self._execute(op, loaded)
        finally:
            self.journal.release(name, op.id)

    def force_unlock(self, name: str, operation_id: str) -> None:
        """Drop the lock `operation_id` holds on the instance (its process is known to be gone)."""
        if not self.journal.force_unlock(name, operation_id):
            holder = self.journal.lock_holder(name)
            raise InputError(f"operation {operation_id} does not hold the lock of '{name}'", where=name,
                             hint=f"the holder is {holder['operation_id']}" if holder else "it is not locked")

    def _retry_inputs(self, name: str, op: Operation | None) -> dict[str, Any]:
        if op is None:
            return {}
        return unmasked(op.params.get("inputs", {}), self.secrets.operation_inputs(name, op.id))

    # ---- running --------------------------------------------------------------------------------
    def _workspace(self, name: str, loaded: Loaded) -> Workspace:
        return Workspace(
            home_state=self.state,
            instance=name,
            project=loaded.project,
            target=self._checked_target(name, loaded.project),
            inputs=loaded.inputs,
            properties=self._properties(name),
            version=loaded.project.version,
            progress=self.progress,
            counter=self.counter,
        )

    def _checked_target(self, name: str, project: Project) -> Any:
        """The target, its pinned account checked (GetCallerIdentity) before anything is written."""
        target = self.target(project, name)
        target.check_account(f"instance '{name}'")
        return target

    def _start(self, name: str, kind: str, loaded: Loaded, regions: list[str], main: list[Planned],
               cleanup: list[Planned], graph: dict[str, list[str]], cleanup_graph: dict[str, list[str]], *,
               new_instance: dict[str, Any] | None = None, extra: dict[str, Any] | None = None,
               action: bool = False) -> Outcome | Preview:
        """Write the operation and its planned steps, take the lock, run it (with `dry_run`: preview it)."""
        if self.dry_run:
            from formwright.lifecycle.executor import pinned_parameters
            from formwright.lifecycle.preview import preview

            workspace = self._workspace(name, loaded)
            workspace.pinned = pinned_parameters(self.journal, name, extra or {})
            return preview(workspace, loaded.manifest, kind, EVENTS[kind], main, cleanup, graph)
        steps = journal_steps(main, cleanup, action=action)
        params = {"source": str(loaded.source), "origin": str(loaded.origin), "package": loaded.package,
                  "version": loaded.project.version, "regions": regions,
                  "inputs": {k: (MASK if k in loaded.secure else v) for k, v in loaded.inputs.items()},
                  "secure": loaded.secure, "graph": graph, "cleanup_graph": cleanup_graph,
                  "event": EVENTS.get(kind, ""), "home": self.target(loaded.project, name).region,
                  "environment": loaded.project.environment, **(extra or {})}
        creating = [p for p in main if p.action in ("create", "replace", "share")]
        if creating:
            workspace = self._workspace(name, loaded)
            home = workspace.home_region
            check_names_free(lambda region: workspace.runner(region).cfn,
                             [(p.element, split_id(p.element, home)[1], p.stack_name) for p in creating],
                             workspace.owner_tags(), {p.element for p in creating if p.action == "share"})
        op_id = new_id()
        self.note = self.journal.acquire(name, op_id)
        try:
            # secure values are kept under the operation (owner-only) before it is journaled: its revision,
            # a later rollback to that revision and its `retry` all read them from there
            self.secrets.keep_operation(name, op_id, {k: loaded.inputs[k] for k in loaded.secure
                                                      if k in loaded.inputs})
            op = self.journal.begin(name, kind, params, steps, new_instance=new_instance, operation_id=op_id)
            return self._execute(op, loaded)
        finally:
            self.journal.release(name, op_id)

    def _execute(self, op: Operation, loaded: Loaded) -> Outcome:
        redactor = self._redactor(op.instance, loaded.inputs, op.params.get("secure", []))
        log = OperationLog(self.log_path(op.id), redactor, self.echo)
        workspace = self._workspace(op.instance, loaded)
        workspace.redactor = redactor
        executor = Executor(
            journal=self.journal,
            secrets=self.secrets,
            op=op,
            workspace=workspace,
            manifest=loaded.manifest,
            graph=op.params.get("graph", {}),
            cleanup_graph=op.params.get("cleanup_graph", {}),
            event=op.params.get("event") or EVENTS[op.kind],
            redactor=redactor,
            log=log,
            max_concurrency=self.max_concurrency,
            source=op.params["source"],
            regions=op.params.get("regions", []),
            compensates=op.params.get("compensates"),
        )
        revision = executor.run()
        if op.kind == "delete":
            self.secrets.forget(op.instance)
            drop_instance_state(self.state, op.instance)
        elif op.params.get("operation"):  # a finished custom operation makes no revision and is never retried
            self.secrets.drop_operation(op.instance, op.id)
        done = self.journal.operation(op.id)
        return Outcome(op.instance, op.id, op.kind, "done", revision.number if revision else None,
                       [{"seq": s.seq, "element": s.element, "action": s.action, "phase": s.phase,
                         "stack_name": s.stack_name, "status": s.status, "note": s.note}
                        for s in (done.steps if done else [])],
                       "; ".join(n for n in (self.region_note, self.note) if n) or None)

