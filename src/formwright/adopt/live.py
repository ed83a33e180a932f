"""The live stacks `adopt` reads: every stack of each region (DescribeStacks, paged), those whose names match
the patterns, each with its template as written (GetTemplate, Original stage: macros kept)."""

from __future__ import annotations

import fnmatch
import json
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from formwright.engine.cfn import CallCounter, StackInfo

# statuses of a stack that exists and can be updated: an adopted project deploys over it
ADOPTABLE = {"CREATE_COMPLETE", "UPDATE_COMPLETE", "UPDATE_ROLLBACK_COMPLETE", "IMPORT_COMPLETE",
             "IMPORT_ROLLBACK_COMPLETE"}
TEMPLATE_READERS = 8  # GetTemplate calls at once (deploy's default --max-concurrency)


@dataclass
class LiveStack:
    """One existing stack: its description, capabilities and template text (as GetTemplate gave it)."""

    region: str
    info: StackInfo
    capabilities: list[str] = field(default_factory=list)
    template_text: str = ""


def matching(names: list[str], patterns: list[str]) -> list[str]:
    """The names matching any shell-style pattern (`app-*`, `net-?`), in the order given; case matters,
    as in stack names."""
    return [name for name in names if any(fnmatch.fnmatchcase(name, p) for p in patterns)]


def read_region(cfn: Any, region: str, patterns: list[str], counter: CallCounter) -> tuple[
        list[LiveStack], list[str]]:
    """The live stacks of one region matching `patterns`, and the matching names left out for their
    status (in progress, failed: nothing to manage as it is)."""
    described: dict[str, dict[str, Any]] = {}
    token = None
    while True:
        page = cfn.describe_stacks(**({"NextToken": token} if token else {}))
        counter.add("describe_stacks")
        for data in page.get("Stacks") or []:
            # a nested stack is its parent's to manage
            if data.get("StackStatus") != "DELETE_COMPLETE" and "ParentId" not in data:
                described[data["StackName"]] = data
        token = page.get("NextToken")
        if not token:
            break
    chosen = [described[name] for name in matching(sorted(described), patterns)]
    skipped = [f"{d['StackName']} ({region}): {d['StackStatus']}" for d in chosen
               if d["StackStatus"] not in ADOPTABLE]

    def template_of(data: dict[str, Any]) -> LiveStack:
        body = cfn.get_template(StackName=data["StackId"], TemplateStage="Original")["TemplateBody"]
        counter.add("get_template")
        text = body if isinstance(body, str) else json.dumps(body, indent=2)  # boto3 parses JSON bodies
        return LiveStack(region, StackInfo.from_api(data), list(data.get("Capabilities") or []), text)

    with ThreadPoolExecutor(max_workers=TEMPLATE_READERS) as pool:  # clients are thread-safe
        found = list(pool.map(template_of, [d for d in chosen if d["StackStatus"] in ADOPTABLE]))
    return found, skipped
