"""A deploy of LISTING_FROM stacks or more sees them in one listing read when it begins (issue 29), one of
PROBE_FROM or more in the listing's first page when that page holds its whole region; a stack made or
deleted out of band after that listing is deployed as its own DescribeStacks then says, never failed for
the listing's staleness."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from formwright.cloud.session import Target
from formwright.engine import group as group_module
from formwright.engine.cfn import CallCounter
from formwright.engine.group import StackGroup
from formwright.engine.stack import prepare_stacks
from formwright.model.project import load_project

QUEUE = {"Resources": {"Queue": {"Type": "AWS::SQS::Queue"}}}
TOPIC = json.dumps({"Resources": {"Topic": {"Type": "AWS::SNS::Topic"}}})


def deploy(folder: Path, cloud: Target, out_of_band=None, listed_within: float | None = None,
           counter: CallCounter | None = None) -> dict:
    """The project's deploy through the engine; `out_of_band()` runs right after the deploy's listing;
    `listed_within`: how long the listing is taken as the stacks' state (the cadence's, by default);
    `counter` counts its calls."""
    project = load_project(folder)
    group = StackGroup(project, prepare_stacks(project, target=cloud), cloud, counter=counter)
    if listed_within is not None:
        group.runner.cfn.cadence = replace(group.runner.cfn.cadence, listed_within=listed_within)
    listed = group.listed

    def listed_then_changed() -> dict:
        found = listed()
        if out_of_band is not None:
            out_of_band()
        return found

    group.listed = listed_then_changed  # type: ignore[method-assign]
    return {name: (r.outcome, r.error) for name, r in group.deploy().items()}


def test_stacks_made_or_deleted_after_the_listing_are_deployed_as_they_are_now(
        tmp_path: Path, cloud: Target, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(group_module, "LISTING_FROM", 1)  # two stacks are read from the listing
    (tmp_path / "q.json").write_text(json.dumps(QUEUE))
    two = "name: lst\nstacks:\n  a:\n    template: q.json\n  b:\n    template: q.json\n"
    (tmp_path / "formwright.yaml").write_text(two)
    cfn = cloud.client("cloudformation")
    assert deploy(tmp_path, cloud) == {"a": ("created", None), "b": ("created", None)}

    # c made by hand, under the name the project gives it, right after the listing that did not show it:
    # its CREATE change set is refused ("already exists"), so it reads itself and is updated, not failed
    (tmp_path / "formwright.yaml").write_text(two + "  c:\n    template: q.json\n")
    results = deploy(tmp_path, cloud, lambda: cfn.create_stack(StackName="lst-c", TemplateBody=TOPIC))
    assert results == {"a": ("unchanged", None), "b": ("unchanged", None), "c": ("updated", None)}

    # a deleted after a listing older than the cadence's `listed_within` (here 0 s): a reads itself, and
    # is made again where the listing would have called it unchanged
    results = deploy(tmp_path, cloud, lambda: cfn.delete_stack(StackName="lst-a"), listed_within=0.0)
    assert results == {"a": ("created", None), "b": ("unchanged", None), "c": ("unchanged", None)}

    # d and e absent from a listing older than the window: taken as absent all the same (no read of their
    # own before their CREATE change sets, only each one's wait), and e, made by hand since, is refused
    # its CREATE change set, reads itself and is updated
    (tmp_path / "formwright.yaml").write_text(two + "".join(f"  {n}:\n    template: q.json\n" for n in "cde"))
    counter = CallCounter()
    results = deploy(tmp_path, cloud, lambda: cfn.create_stack(StackName="lst-e", TemplateBody=TOPIC),
                     listed_within=0.0, counter=counter)
    assert {n: results[n] for n in "de"} == {"d": ("created", None), "e": ("updated", None)}
    # the listing; a, b and c, which it showed, each read (it is older than the window); d's wait; e's read
    # after the refusal, and its wait (before, d and e read themselves first too: 8)
    assert counter.calls["describe_stacks"] == 1 + 3 + 1 + 2
    live = {s["StackName"]: s["StackStatus"] for s in cfn.describe_stacks()["Stacks"]}
    assert {live[f"lst-{n}"] for n in "abc"} == {"CREATE_COMPLETE", "UPDATE_COMPLETE"}


def test_a_project_alone_in_its_region_is_read_from_the_listing_s_first_page(
        tmp_path: Path, cloud: Target, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(group_module, "PROBE_FROM", 3)  # three stacks probe the listing's first page
    (tmp_path / "q.json").write_text(json.dumps(QUEUE))
    (tmp_path / "formwright.yaml").write_text(
        "name: probe\nstacks:\n" + "".join(f"  s{i}:\n    template: q.json\n" for i in range(3)))
    first = CallCounter()
    assert set(deploy(tmp_path, cloud, counter=first).values()) == {("created", None)}
    assert dict(first.calls)["describe_stacks"] == 1 + 3  # the page (an empty region), each new stack's wait

    noop = CallCounter()
    assert set(deploy(tmp_path, cloud, counter=noop).values()) == {("unchanged", None)}
    assert dict(noop.calls) == {"describe_stacks": 1} and noop.writes == 0

    # 50 more stacks, made by hand: the region is more than the local cloud's page of 50 stacks (moto's, as
    # AWS pages DescribeStacks by size): the first page is read, then each of the project's stacks by name
    cfn = cloud.client("cloudformation")
    for i in range(50):
        cfn.create_stack(StackName=f"other-{i}", TemplateBody=TOPIC)
    more = CallCounter()
    assert set(deploy(tmp_path, cloud, counter=more).values()) == {("unchanged", None)}
    assert dict(more.calls) == {"describe_stacks": 1 + 3} and more.writes == 0


def test_a_role_that_may_not_list_the_region_reads_its_stacks_one_by_one(
        tmp_path: Path, cloud: Target, monkeypatch: pytest.MonkeyPatch) -> None:
    """A deployer's policy may allow DescribeStacks on its own stacks' ARNs only: DescribeStacks without a
    name is then AccessDenied (IAM: a listing's resource is `*`). The local cloud does not enforce IAM, so
    the listing is made to answer as IAM would; the stacks are then read one by one."""
    from botocore.exceptions import ClientError

    def denied(_cfn):
        raise ClientError({"Error": {"Code": "AccessDenied", "Message": "not authorized to perform: "
                                     "cloudformation:DescribeStacks on resource: *"}}, "DescribeStacks")

    monkeypatch.setattr(group_module, "PROBE_FROM", 2)
    monkeypatch.setattr(group_module, "first_page", denied)
    (tmp_path / "q.json").write_text(json.dumps(QUEUE))
    (tmp_path / "formwright.yaml").write_text("name: deny\nstacks:\n  a:\n    template: q.json\n"
                                              "  b:\n    template: q.json\n")
    assert deploy(tmp_path, cloud) == {"a": ("created", None), "b": ("created", None)}
    counter = CallCounter()
    assert deploy(tmp_path, cloud, counter=counter) == {"a": ("unchanged", None), "b": ("unchanged", None)}
    assert dict(counter.calls) == {"describe_stacks": 2}  # one by name each
