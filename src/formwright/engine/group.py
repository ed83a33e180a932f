"""A StackGroup: the project's stacks on their dependency DAG, run with bounded concurrency.

A stack starts the moment its own dependencies are done (graphlib.TopologicalSorter), not when a
whole batch is. A failed stack marks its dependents skipped while independent stacks finish.
Delete walks the same graph reversed.
"""

from __future__ import annotations

import graphlib
import hashlib
import logging
import queue
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from botocore.exceptions import ClientError

from formwright.cloud.errors import error_code, translate
from formwright.engine.cfn import CallCounter, CloudFormation, StackInfo, cloudformation_of
from formwright.engine.imports import import_edges
from formwright.engine.planning import plan_stack
from formwright.engine.prune import first_page, listing
from formwright.engine.results import (
    ProgressCallback,
    ProgressEvent,
    StackPlan,
    StackResult,
    exit_code_of,
    no_progress,
)
from formwright.engine.runner import StackRunner
from formwright.engine.stack import UNKNOWN, Stack, check_output_references
from formwright.errors import CloudError, InputError
from formwright.model.project import Project
from formwright.state.applied import AppliedCache
from formwright.state.lock import project_lock

log = logging.getLogger("formwright")

# selected stacks on one target from which a plan or a deploy reads them from one listing, not one by one
LISTING_FROM = 100
# ... from which it reads the listing's first page, taken when it holds the whole region (a region of up to a
# page of stacks: ~100 on AWS, 50 on the local cloud): a full page costs about what 20 reads by name cost
# (measured on the local cloud: 12.6 ms of botocore CPU for a page of 50 stacks, 1.2 ms for one read)
PROBE_FROM = 20


def target_key(target: Any) -> str:
    """A folder name for per-target state, one per kind, account, region and endpoint:
    `aws-123456789012-eu-west-1-1a2b3c4d`. Switching account, region or emulator never reuses or
    clobbers another target's records."""
    return f"{target.kind}-{target.account_id()}-{target.region}-{endpoint_digest(target)}"


def endpoint_digest(target: Any) -> str:
    """Eight hex digits naming the target's CloudFormation endpoint."""
    endpoint = str(target.client("cloudformation").meta.endpoint_url)
    return hashlib.sha256(endpoint.encode()).hexdigest()[:8]


def cache_key(project: Project, target: Any) -> str:
    """The applied cache's folder: apart per environment, account, region and endpoint
    (`dev/aws-123456789012-eu-west-1-1a2b3c4d`)."""
    key = target_key(target)
    return f"{project.environment}/{key}" if project.environment else key


def lock_key(project: Project, target: Any) -> str:
    """The writer lock's name: one per environment and (home) target's kind, region and endpoint
    (`aws-eu-west-1-1a2b3c4d`). Not its account, unlike `target_key`: the lock is taken first thing, and
    STS's answer (asked in the background, docs/architecture.md) must not hold up a deploy's start; two
    accounts of one project folder, region and endpoint at once only wait for each other."""
    key = f"{target.kind}-{target.region}-{endpoint_digest(target)}"
    return f"{project.environment}-{key}" if project.environment else key


class StackGroup:
    """Runs plan / deploy / delete over a project's stacks."""

    def __init__(self, project: Project, stacks: dict[str, Stack], target: Any, *, max_concurrency: int = 8,
                 progress: ProgressCallback = no_progress, counter: CallCounter | None = None,
                 targets: Any = None, revert_drift: bool = False, allowed: set[str] | None = None) -> None:
        if max_concurrency < 1:
            raise InputError("--max-concurrency must be at least 1")
        self.project = project
        self.stacks = stacks
        self.target = target
        self.max_concurrency = max_concurrency
        self.progress = progress
        self.counter = counter or CallCounter()
        self._runners: dict[int, StackRunner] = {}
        self._runners_lock = threading.Lock()
        self.targets = targets  # a cloud.session.Targets for stacks outside the selection (references)
        self.revert_drift = revert_drift  # drift-aware change sets (deploy --revert-drift)
        self.allowed = set(allowed or ())  # --allow-replacement: what the `deny:` guards let by
        # id(target) -> its DescribeStacks listing, when `listed` read one (the plan's orphan check reuses it)
        self.listings: dict[int, list[StackInfo]] = {}
        check_output_references(stacks, project)
        self.imports, self.warnings = import_edges(stacks, target.region, target.account_id())
        for warning in self.warnings:
            log.warning("warning: %s", warning)
        try:
            graphlib.TopologicalSorter(self.graph()).prepare()
        except graphlib.CycleError as err:
            raise InputError("dependency cycle through Fn::ImportValue: " + " -> ".join(err.args[1]),
                             hint="an import cannot come from a stack that waits for the importer") from None

    # the default target's parts, made when first used: every stack may have a target of its own
    @property
    def runner(self) -> StackRunner:
        """The runner of the group's default target."""
        return self.runner_of(self.target)

    @property
    def cfn(self) -> CloudFormation:
        """CloudFormation of the group's default target."""
        return self.runner.cfn

    @property
    def cache(self) -> AppliedCache:
        """The applied cache of the group's default target."""
        return self.runner.cache

    def runner_of(self, target: Any) -> StackRunner:
        """The runner (CloudFormation client, applied cache) of one target, made once (stacks' threads
        share it: one listing, one record of how long operations took, per target)."""
        with self._runners_lock:
            return self._runners.get(id(target)) or self._make_runner(target)

    def _make_runner(self, target: Any) -> StackRunner:
        cfn = cloudformation_of(target, self.counter)
        cache = AppliedCache(self.project.state_dir, cache_key(self.project, target))
        runner = StackRunner(self.project, target, cfn, cache, self.progress)
        runner.revert_drift = self.revert_drift
        runner.allowed = self.allowed
        self._runners[id(target)] = runner
        return runner

    def runner_for(self, stack: Stack) -> StackRunner:
        """The runner of the stack's own target (the group's when it has none)."""
        return self.runner_of(stack.target) if stack.target is not None else self.runner

    def cfn_of(self, name: str) -> CloudFormation:
        """CloudFormation where the project's stack `name` lives (selected or not)."""
        stack = self.stacks.get(name)
        if stack is not None:
            return self.runner_for(stack).cfn
        if self.targets is not None:
            return self.runner_of(self.targets.get(self.project.stacks[name].target)).cfn
        return self.cfn

    # ---- graph --------------------------------------------------------------------------------
    def graph(self, reverse: bool = False) -> dict[str, set[str]]:
        """Each selected stack and the selected stacks it waits for (dependents when `reverse`):
        declared dependencies, `!ref`s and Fn::ImportValue of another stack's export."""
        names = set(self.stacks)
        forward = {n: {d for d in s.dependencies | self.imports.get(n, set()) if d in names}
                   for n, s in self.stacks.items()}
        if not reverse:
            return forward
        backward: dict[str, set[str]] = {n: set() for n in names}
        for name, deps in forward.items():
            for dep in deps:
                backward[dep].add(name)
        return backward

    def walk(
        self, graph: dict[str, set[str]], work: Callable[[Stack], StackResult]
    ) -> dict[str, StackResult]:
        """Run `work` on every stack as soon as its predecessors in `graph` succeeded."""
        sorter = graphlib.TopologicalSorter(graph)
        sorter.prepare()
        dependents: dict[str, set[str]] = {n: set() for n in graph}
        for name, before in graph.items():
            for b in before:
                dependents[b].add(name)
        for name in graph:  # each target's runner made before the stacks' threads need it at once
            self.runner_for(self.stacks[name])
        results: dict[str, StackResult] = {}
        doomed: dict[str, str] = {}  # stack -> the failed stack it waited for
        running: dict[Future, str] = {}
        finished: queue.SimpleQueue[Future] = queue.SimpleQueue()
        for name in graph:
            if not graph[name]:
                self.progress(ProgressEvent(name, "waiting", "", "queued"))
            else:
                self.progress(
                    ProgressEvent(name, "waiting", "", "waiting for " + ", ".join(sorted(graph[name])),
                                  waiting_for=tuple(sorted(graph[name])))
                )
        with ThreadPoolExecutor(max_workers=self.max_concurrency, thread_name_prefix="stack") as pool:
            while sorter.is_active():
                for name in sorter.get_ready():
                    if name in doomed:
                        stack = self.stacks[name]
                        results[name] = StackResult(name, stack.stack_name, "skipped",
                                                    error=f"not run: {doomed[name]} failed")
                        self.progress(ProgressEvent(name, "skipped", "", f"{doomed[name]} failed"))
                        sorter.done(name)
                        continue
                    future = pool.submit(work, self.stacks[name])
                    running[future] = name
                    future.add_done_callback(finished.put)
                if not running:
                    continue
                # the next stack to end, handed over by its future (no waiter set on every running one)
                future = finished.get()
                name = running.pop(future)
                result = future.result()
                results[name] = result
                if not result.ok:
                    for later in _descendants(name, dependents):
                        doomed.setdefault(later, name)
                sorter.done(name)
        return results

    # ---- operations ---------------------------------------------------------------------------
    def deploy(self, *, force: bool = False) -> dict[str, StackResult]:
        """Deploy every stack in dependency order; outputs of finished stacks feed waiting ones. On a
        target with many selected stacks (`listed`), each stack is first seen in one listing read when the
        deploy begins (as the plan reads them), not by a DescribeStacks of its own: a no-op of 1,000 stacks
        is then ten reads, not a thousand, and one of 50 alone in their region one read. A stack whose turn
        comes more than `Cadence.listed_within` seconds after that listing began reads itself if the
        listing showed it, as a stack the shared listing of waits saw does (CloudFormation.describe_known):
        the staleness accepted is the same."""
        listed: dict[str, StackInfo | None] = {}
        began = 0.0  # when the listing was asked for (monotonic)

        def read_listing() -> None:
            nonlocal began
            began = time.monotonic()
            listed.update(self.listed())

        def step(runner: StackRunner, stack: Stack, outputs: dict[str, dict[str, str]]) -> StackResult:
            known = None
            if stack.name in listed:
                info = listed[stack.name]
                # one the listing did not show is taken as absent however old the listing: its CREATE
                # change set is the check (refused when the name was taken since: runner.outdated_by);
                # one it showed only within listed_within, as an unchanged stack is skipped on its word
                if info is None or time.monotonic() - began <= runner.cfn.cadence.listed_within:
                    known = (info, True)
            return runner.deploy(stack, outputs, force=force, listed=known)

        return self.apply(step, before=read_listing)

    def apply(self, step: Callable[[StackRunner, Stack, dict[str, dict[str, str]]], StackResult],
              before: Callable[[], None] | None = None) -> dict[str, StackResult]:
        """Run `step(runner, stack, outputs)` on every stack in dependency order under the writer lock
        (`before()` first, under it too); the outputs of finished stacks feed waiting ones (a deploy, a
        saved plan's execution)."""
        outputs: dict[str, dict[str, str]] = {}

        def work(stack: Stack) -> StackResult:
            result = step(self.runner_for(stack), stack, outputs)
            if result.ok:
                outputs[stack.name] = result.outputs
            return result

        with self.lock("deploy"):
            if before is not None:
                before()
            self.seed_outputs(outputs)
            return self.walk(self.graph(), work)

    def lock(self, operation: str):
        """The project's writer lock on this target (exit 3 for a second writer)."""
        return project_lock(self.project.state_dir, lock_key(self.project, self.target), operation)

    def seed_outputs(self, outputs: dict[str, dict[str, str]]) -> None:
        """Outputs of referenced stacks outside the selection, read from the cloud."""
        wanted = {ref.stack for s in self.stacks.values() for ref in s.config.references()} - set(self.stacks)
        for name in wanted:
            info = self.cfn_of(name).describe(self.project.stacks[name].stack_name)
            if info is not None:
                outputs[name] = info.outputs

    def plan(self, *, keep: bool = False) -> dict[str, StackPlan]:
        """A plan per stack, in dependency order; outputs come from what is deployed now.

        An output of a stack the plan changes keeps its deployed value unless something it is made of
        changes (engine/knowns.py); one that may is "(known after apply)" in its dependents, which are
        still planned with real change sets on their deployed values, the resources using it listed as
        "may change" (engine/planning.py). Transitively: each stack's unknown outputs come from its plan."""
        outputs: dict[str, dict[str, str]] = {}
        self.seed_outputs(outputs)
        plans: dict[str, StackPlan] = {}
        dependents = self.graph(reverse=True)
        listed = self.listed()

        def work(stack: Stack) -> StackResult:
            try:
                info = listed[stack.name] if stack.name in listed else \
                    self.runner_for(stack).cfn.describe(stack.stack_name)
                if info is not None:
                    outputs[stack.name] = info.outputs
                upstream = {name: plans[name].unknown_outputs for name in stack.dependencies if name in plans}
                # the outputs of the stacks it reads only: a copy of every stack's would make N plans N² work
                read = {ref.stack for ref in stack.config.references()}
                known = {name: {key: UNKNOWN if key in upstream.get(name, {}) else value
                                for key, value in outputs[name].items()}
                         for name in read if name in outputs}
                plan = plan_stack(self.runner_for(stack), stack, known, info, keep=keep, upstream=upstream,
                                  want_outputs=bool(dependents.get(stack.name)))
            except Exception as err:  # noqa: BLE001 - reported per stack, never a traceback
                error = translate(err, where=stack.name, target=getattr(self.target, "kind", None))
                self.progress(ProgressEvent(stack.name, "failed", "", str(error)))
                return StackResult(stack.name, stack.stack_name, "failed", error=str(error),
                                   exit_code=error.exit_code)
            plans[stack.name] = plan
            self.progress(ProgressEvent(stack.name, "done", info.status if info else "", plan.kind))
            return StackResult(stack.name, stack.stack_name, "planned", plan=plan)

        results = self.walk(self.graph(), work)
        failures = [r for r in results.values() if not r.ok]
        if failures:
            error_class = InputError if exit_code_of(results) == 2 else CloudError
            raise error_class("; ".join(r.error or r.name for r in failures))
        return plans

    def listed(self) -> dict[str, StackInfo | None]:
        """The selected stacks as one DescribeStacks listing of their target shows them (None: not there),
        for each target with LISTING_FROM of them or more: fewer calls than a read each (a page holds up to
        1 MB of stacks). A target with PROBE_FROM of them or more has its first page read: when that page is
        the whole region it is the listing (one call, not one a stack), else its stacks are read one by one,
        as are the stacks of targets with fewer."""
        by_runner: dict[int, list[Stack]] = {}
        for stack in self.stacks.values():
            by_runner.setdefault(id(self.runner_for(stack)), []).append(stack)
        found: dict[str, StackInfo | None] = {}
        for stacks in by_runner.values():
            if len(stacks) < min(PROBE_FROM, LISTING_FROM):
                continue
            runner = self.runner_for(stacks[0])
            try:
                infos = listing(runner.cfn) if len(stacks) >= LISTING_FROM else first_page(runner.cfn)
            except ClientError as err:
                # a role allowed DescribeStacks on its own stacks' ARNs only may not list the region
                if error_code(err) not in ("AccessDenied", "AccessDeniedException"):
                    raise
                log.debug("the stacks of %s are read one by one: %s", runner.target.region, err)
                continue
            if infos is None:
                continue
            self.listings[id(runner.target)] = infos
            live = {info.name: info for info in infos}
            found.update({stack.name: live.get(stack.stack_name) for stack in stacks})
        return found

    def delete(self) -> dict[str, StackResult]:
        """Delete in reverse dependency order, refusing stacks whose exports are still imported.

        An importer in the selection is deleted before its exporter even without a declared dependency.
        """
        with self.lock("delete"):
            return self._delete()

    def _delete(self) -> dict[str, StackResult]:
        exports = self.exports()
        by_cloud_name = {s.stack_name: s.name for s in self.stacks.values()}
        graph = self.graph(reverse=True)
        for exporter, users in exports.values():
            graph[exporter] |= {by_cloud_name[u] for u in users if by_cloud_name.get(u, exporter) != exporter}
        # importers deleted in this run are gone before their exporter starts
        live = {
            export: [u for u in users if u not in by_cloud_name] for export, (_, users) in exports.items()
        }

        def work(stack: Stack) -> StackResult:
            return self.runner_for(stack).delete(stack, live)

        return self.walk(graph, work)

    def exports(self) -> dict[str, tuple[str, list[str]]]:
        """Export name -> (the selected stack exporting it, cloud names of the stacks importing it)."""
        result: dict[str, tuple[str, list[str]]] = {}
        for stack in self.stacks.values():
            cfn = self.runner_for(stack).cfn
            info = cfn.describe(stack.stack_name)
            for export in info.exports if info is not None else ():
                result[export] = (stack.name, self._list_imports(cfn, export))
        return result

    def _list_imports(self, cfn: CloudFormation, export: str) -> list[str]:
        names: list[str] = []
        kwargs = {"ExportName": export}
        while True:
            try:
                page = cfn.call("list_imports", **kwargs)
            except ClientError as err:
                if "is not imported by any stack" in str(err):
                    return names
                raise
            names.extend(page.get("Imports", []))
            if not page.get("NextToken"):
                return names
            kwargs["NextToken"] = page["NextToken"]


def _descendants(name: str, dependents: dict[str, set[str]]) -> set[str]:
    seen: set[str] = set()
    todo = list(dependents.get(name, ()))
    while todo:
        node = todo.pop()
        if node not in seen:
            seen.add(node)
            todo.extend(dependents.get(node, ()))
    return seen
