"""Shared elements of a multi-instance project: one stack for every instance, made (with its events) by
the first instance and removed (with its events) by the last, counted by the sharer tags on the stack.

The add-on lifecycle document: immutable elements of a multi-instance add-on are created with the
first instance and destroyed with the last; intermediate instances reference them.
"""

from __future__ import annotations

import json
from pathlib import Path

from formwright.lifecycle.ownership import sharers

STACKS = {"core": {"stack_name": "life-core"}, "app": {"depends": ["core"]}}


def _shared_yaml(src: Path) -> Path:
    text = (src / "formwright.yaml").read_text().replace(
        'stack_name: "life-core"\n', 'stack_name: "life-core"\n    shared: true\n')
    (src / "formwright.yaml").write_text(text)
    return src


def _sharers(cloud) -> list[str]:
    client = cloud.session().client("cloudformation", endpoint_url=cloud.endpoint, region_name="us-east-1")
    stacks = client.describe_stacks(StackName="life-core")["Stacks"]
    return [k.rsplit(":", 1)[1] for k in sharers({t["Key"]: t["Value"] for t in stacks[0]["Tags"]})]


def test_three_instances_share_one_stack_created_and_deleted_in_mixed_order(
    lifecycle, recorder, tmp_path: Path, h, cloud
) -> None:
    src = _shared_yaml(h.write_project(tmp_path / "v1", STACKS, project_triggers=False))
    lifecycle.create("i1", src, {})
    assert [e for e in recorder() if e.startswith("core/")] == ["core/PreCreate", "core/PostCreate"]
    lifecycle.create("i2", src, {})
    lifecycle.create("i3", src, {})
    assert [e for e in recorder() if e.startswith("core/")] == []  # joined: no events
    assert sorted(_sharers(cloud)) == ["i1", "i2", "i3"]
    assert set(h.cfn_stacks(cloud)) == {"life-core", "i1-app", "i2-app", "i3-app"}
    listed = h.cli(["instance", "list", "--output", "json"], lifecycle.home)
    code, out, err = listed.wait(timeout=120), *listed.communicate()
    assert code == 0, err
    shares = {i["name"]: i["shares"] for i in json.loads(out)["instances"]}
    assert shares["i2"] == {"core": ["i1", "i2", "i3"]}

    lifecycle.delete("i2")  # the middle one: leaves, the stack stays
    lifecycle.delete("i1")  # the first one: leaves too
    assert [e for e in recorder() if e.startswith("core/")] == []
    assert _sharers(cloud) == ["i3"] and "life-core" in h.cfn_stacks(cloud)
    lifecycle.create("i4", src, {})  # a newcomer joins the survivor
    lifecycle.delete("i3")
    assert _sharers(cloud) == ["i4"]
    recorder()
    lifecycle.delete("i4")  # the last one removes it, with its events
    assert [e for e in recorder() if e.startswith("core/")] == ["core/PreDelete", "core/PostDelete"]
    assert h.cfn_stacks(cloud) == {}
