"""An instance's project made ready for the cloud: its stacks per element (tagged with their owner),
a runner per region, the outputs of finished elements, and an applied cache that keeps no secret."""

from __future__ import annotations

import copy
import dataclasses
import hashlib
import threading
from pathlib import Path
from typing import Any

from formwright.engine.cfn import CallCounter, CloudFormation
from formwright.engine.group import target_key
from formwright.engine.results import ProgressCallback
from formwright.engine.runner import StackRunner
from formwright.engine.stack import Stack, prepare_stacks
from formwright.errors import ProjectError
from formwright.lifecycle.actions import Redactor
from formwright.lifecycle.elements import split_id
from formwright.lifecycle.ownership import TAG_ELEMENT, owner_tags, shared_tags
from formwright.lifecycle.rendering import load_for_instance, uses_properties
from formwright.model.project import OutputRef, Project, StackConfig
from formwright.state.applied import AppliedCache, AppliedRecord


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


def refuse_stack_targets(project: Project) -> None:
    """An instance deploys every stack with the project's target (its account, role and home region;
    `regions:` for copies): a group or stack that sets its own is refused, never silently overridden."""
    for config in project.stacks.values():
        own = config.target if config.regions is None else dataclasses.replace(
            config.target, region=project.target.region)
        if config.definition != config.name or own == project.target:
            continue
        keys = [f.name for f in dataclasses.fields(own)
                if getattr(own, f.name) != getattr(project.target, f.name)]
        raise ProjectError(
            f"stack '{config.name}' sets its own {', '.join(keys)} (here or in its group): an instance "
            "deploys every stack with the project's account, credentials and region",
            file=config.file, line=config.line,
            hint="set these keys at the project level, or deploy this project with `formwright deploy`")


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
        config.tags = {**config.tags, **(self.shared_tags(element) if self.is_shared(element)
                                         else self.owner_tags(element))}
        return dataclasses.replace(base, config=config, build_dir=build_dir)

    def is_shared(self, element: str) -> bool:
        """True for a stack every instance of the project shares."""
        stack = self.project.stacks.get(split_id(element, self.home_region)[0])
        return stack is not None and stack.extra.get("shared") is True

    def shared_tags(self, element: str) -> dict[str, str]:
        """The tags of a shared element's stack, with this instance as a sharer."""
        return shared_tags(self.project.name, element, self.instance, str(self.home_state.parent))

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

    def missing(self, elements: dict[str, dict[str, Any]]) -> list[str]:
        """Elements whose stack is gone or unusable (failed, rolled back) though the journal has them."""
        missing = []
        for element, record in elements.items():
            info = self.runner(record.get("region") or self.home_region).cfn.describe(record["stack_name"])
            if info is None or info.status.endswith("FAILED") or info.status == "ROLLBACK_COMPLETE":
                missing.append(element)
        return missing

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
                 "tags": redactor.data(dict(stack.config.tags)), "deps": graph.get(element, []),
                 "shared": self.is_shared(element)}
        return entry, body_hash, body
