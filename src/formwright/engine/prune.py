"""Stacks the project made and no longer defines: found by their ownership tags, deleted by `deploy --prune`.

As sceptre's `launch --prune` and `obsolete: true` (its integration project's `pruning/` and
`launch-actions/obsolete.yaml`) and Flux's `prune`: a stack is this project's when its tags say so
(`model/owners.py`: project, environment, and no instance's), never by its name. One of those whose
CloudFormation name is none of the project's stacks' in its account and region is to be removed: taken
out of formwright.yaml, renamed, or marked `obsolete: true`. They are deleted after the rest of the
deploy, importers before their exporters; one whose exports another stack still imports is refused.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from formwright.engine.cfn import CloudFormation, StackInfo
from formwright.model.owners import TAG_STACK, owned_by
from formwright.model.project import Project, StackConfig

NO_LONGER = "no longer in formwright.yaml"
OBSOLETE = "obsolete: true"


@dataclass
class Orphan:
    """A stack of the project's to be removed."""

    name: str  # its name in formwright.yaml (the formwright:stack tag)
    info: StackInfo
    target: Any
    reason: str  # NO_LONGER or OBSOLETE

    def to_json(self) -> dict[str, Any]:
        """As plain data."""
        return {"name": self.name, "stack_name": self.info.name, "region": self.target.region,
                "account": self.target.account_id(), "reason": self.reason}


def _place(target: Any) -> tuple[str, str, str]:
    return (target.account_id(), target.region, str(target.client("cloudformation").meta.endpoint_url))


def _places(project: Project, targets: Any) -> dict[tuple[str, str, str], Any]:
    """Each account, region and endpoint the project's stacks (obsolete ones too) live in: a Target each."""
    specs = [project.target, *(c.target for c in project.stacks.values())]
    for config in project.obsolete.values():
        regions: list[str | None] = [*config.regions] if config.regions else [config.target.region]
        specs += [replace(config.target, region=r) for r in regions]
    found: dict[tuple[str, str, str], Any] = {}
    for spec in specs:
        target = targets.get(spec)
        found.setdefault(_place(target), target)
    return found


def listing(cfn: CloudFormation) -> list[StackInfo]:
    """Every live stack of the region (DescribeStacks without a name, every page)."""
    found = []
    for page in cfn.client.get_paginator("describe_stacks").paginate():
        found += _live(cfn, page)
    return found


def first_page(cfn: CloudFormation) -> list[StackInfo] | None:
    """Every live stack of the region when the first page of DescribeStacks without a name holds them all;
    None when the region has more (the page says where the next begins)."""
    page = cfn.client.describe_stacks()
    found = _live(cfn, page)
    return None if page.get("NextToken") else found


def _live(cfn: CloudFormation, page: dict[str, Any]) -> list[StackInfo]:
    cfn.counter.add("describe_stacks")
    return [StackInfo.from_api(s) for s in page.get("Stacks", [])
            if s.get("StackStatus") != "DELETE_COMPLETE"]


def orphans(project: Project, targets: Any, listed: dict[int, list[StackInfo]] | None = None) -> list[Orphan]:
    """The project's stacks (by their tags, in this environment) that formwright.yaml no longer deploys.
    `listed`: listings already read in this run, by id(target) (a plan's, `StackGroup.listings`): the
    stacks a plan itself adds or removes are the project's own, which are never orphans."""
    kept = {(*_place(targets.get(c.target))[:2], c.stack_name) for c in project.stacks.values()}
    found = []
    for place, target in _places(project, targets).items():
        infos = (listed or {}).get(id(target))
        for info in infos if infos is not None else listing(CloudFormation(target.client("cloudformation"))):
            if not owned_by(info.tags, project.name, project.environment) or (*place[:2], info.name) in kept:
                continue
            name = info.tags[TAG_STACK]
            found.append(Orphan(name, info, target, OBSOLETE if name in project.obsolete else NO_LONGER))
    return sorted(found, key=lambda o: (o.target.region, o.info.name))


def orphan_stacks(project: Project, found: list[Orphan]) -> dict[str, Any]:
    """The orphans as Stacks to delete, by their name in formwright.yaml (their cloud name when a stack of
    the project has that name now); an obsolete one keeps its definition (its `!ref`s order the delete)."""
    from formwright.engine.stack import Stack

    stacks = {}
    for orphan in found:
        taken = orphan.name in project.stacks or orphan.name in stacks
        key = orphan.info.name if taken else orphan.name
        config = project.obsolete.get(orphan.name) if orphan.reason == OBSOLETE else None
        if config is None or config.stack_name != orphan.info.name:
            config = StackConfig(key, project, None)
        config.stack_name = orphan.info.name
        stacks[key] = Stack(config, {}, "", project.build_dir / key, target=orphan.target)
    return stacks


def prune_group(project: Project, found: list[Orphan], home: Any, *, max_concurrency: int = 8,
                progress: Any = None, counter: Any = None) -> Any:
    """A StackGroup that deletes the orphans (importers first; an export still imported elsewhere refuses)."""
    from formwright.engine.group import StackGroup
    from formwright.engine.results import no_progress

    return StackGroup(project, orphan_stacks(project, found), home, max_concurrency=max_concurrency,
                      progress=progress or no_progress, counter=counter)
