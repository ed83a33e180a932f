"""Collisions: a stack name already taken in the cloud is refused naming its owner, never adopted; a
single-instance project stays single across project homes (the formwright tags say whose a stack is)."""

from __future__ import annotations

from pathlib import Path

import pytest

from formwright.errors import InputError
from formwright.lifecycle.operations import Lifecycle
from formwright.lifecycle.ownership import TAG_HOME, TAG_INSTANCE, TAG_PROJECT


def _client(cloud):
    return cloud.session().client("cloudformation", endpoint_url=cloud.endpoint, region_name="us-east-1")


def test_a_stack_of_another_home_or_made_by_other_means_is_refused(cloud, tmp_path: Path, h,
                                                                   recorder) -> None:
    homes = [h.write_project(tmp_path / f"home{n}", {"a": {}}, stack_triggers=False) for n in (1, 2)]
    first, second = Lifecycle(homes[0], cloud), Lifecycle(homes[1], cloud)
    try:
        first.create("i1", homes[0], {})
        stack = _client(cloud).describe_stacks(StackName="i1-a")["Stacks"][0]
        tags = {t["Key"]: t["Value"] for t in stack["Tags"]}
        assert (tags[TAG_PROJECT], tags[TAG_INSTANCE]) == ("life", "i1")
        assert tags[TAG_HOME] == str(homes[0].resolve())
        recorder()
        with pytest.raises(InputError, match=r"stack 'i1-a' in us-east-1 already exists and belongs to "
                                             r"instance 'i1' of project 'life'.*home1") as err:
            second.create("i1", homes[1], {})
        assert err.value.exit_code == 2
        assert recorder() == []  # refused before anything ran
        assert second.instances() == []
        _client(cloud).create_stack(StackName="i9-a", TemplateBody=(homes[0] / "templates" / "queue.yaml")
                                    .read_text())
        with pytest.raises(InputError, match=r"'i9-a'.*made by other means"):
            first.create("i9", homes[0], {})
        # the refused instances left the existing stacks alone
        first.delete("i1")
        assert {s["StackName"] for s in _client(cloud).describe_stacks()["Stacks"]} >= {"i9-a"}
    finally:
        first.close()
        second.close()


def test_a_single_instance_project_is_single_across_homes(cloud, tmp_path: Path, h, recorder) -> None:
    homes = [h.write_project(tmp_path / f"home{n}", {"a": {"stack_name": "solo-a"}}, multiple=False,
                             stack_triggers=False) for n in (1, 2)]
    first, second = Lifecycle(homes[0], cloud), Lifecycle(homes[1], cloud)
    try:
        first.create("one", homes[0], {})
        with pytest.raises(InputError, match=r"allows a single instance and instance 'one' of project "
                                             r"'life'.*home1.*exists"):
            second.create("two", homes[1], {})
        assert second.instances() == []
    finally:
        first.close()
        second.close()


def test_many_names_are_checked_with_one_listing_and_the_same_answer(cloud, tmp_path: Path, h) -> None:
    from formwright.engine.cfn import CallCounter, CloudFormation
    from formwright.lifecycle.ownership import BULK, _existing_tags

    home = h.write_project(tmp_path / "home", {"a": {}}, stack_triggers=False)
    body = (home / "templates" / "queue.yaml").read_text()
    tags = [{"Key": "owner", "Value": "someone"}]
    _client(cloud).create_stack(StackName="taken", TemplateBody=body, Tags=tags)
    names = ["taken", *(f"free{i}" for i in range(BULK))]
    counter = CallCounter()
    cfn = CloudFormation(_client(cloud), counter)
    assert _existing_tags(cfn, names) == _existing_tags(cfn, names[:BULK]) == {"taken": {"owner": "someone"}}
    # the listing and a describe of the one taken name, then a describe each of the few
    assert (counter.calls["list_stacks"], counter.calls["describe_stacks"]) == (1, 1 + BULK)
