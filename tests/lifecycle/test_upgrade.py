"""Upgrade by drift (create / skip / update / replace / delete in clean-up), input rules, and scope."""

from __future__ import annotations

from pathlib import Path

import pytest

from formwright.errors import InputError

V1 = {"keep": {"events": ["PreUpgrade", "PostUpgrade"]}, "change": {"params": {"Label": "one"}},
      "gone": {}, "imm": {"immutable": True, "params": {"Label": "one"}}}
V2 = {"keep": {"events": ["PreUpgrade", "PostUpgrade"]}, "change": {"params": {"Label": "two"}},
      "imm": {"immutable": True, "params": {"Label": "two"}}, "new": {}}


def test_upgrade_pairs_stacks_and_acts_on_drift(lifecycle, recorder, tmp_path: Path, h, cloud) -> None:
    lifecycle.create("i1", h.write_project(tmp_path / "v1", V1, project_triggers=False), {})
    recorder()
    outcome = lifecycle.upgrade(
        "i1", h.write_project(tmp_path / "v2", V2, version="2.0", project_triggers=False), {}
    )
    actions = {
        (s["element"], s["phase"]): (s["action"], s["stack_name"]) for s in outcome.steps if s["element"]
    }
    assert actions == {("keep", "main"): ("skip", "i1-keep"), ("change", "main"): ("update", "i1-change"),
                       ("imm", "main"): ("replace", "i1-imm-r2"), ("new", "main"): ("create", "i1-new"),
                       ("imm", "cleanup"): ("delete", "i1-imm"), ("gone", "cleanup"): ("delete", "i1-gone")}
    events = recorder()
    assert not [e for e in events if e.startswith("keep/")]  # unchanged: no events
    assert events.index("change/PostUpgrade") < len(events)
    assert set(h.cfn_stacks(cloud)) == {"i1-keep", "i1-change", "i1-imm-r2", "i1-new"}
    revision = lifecycle.journal.revision("i1")
    assert revision.version == "2.0" and revision.elements["imm"]["stack_name"] == "i1-imm-r2"
    # a second upgrade to the same version changes nothing
    again = lifecycle.upgrade("i1", tmp_path / "v2", {})
    assert {s["action"] for s in again.steps if s["element"]} == {"skip"}
    # rolling back restores the old names exactly
    lifecycle.rollback("i1", 1)
    assert set(h.cfn_stacks(cloud)) == {"i1-keep", "i1-change", "i1-imm", "i1-gone"}


def test_failed_upgrade_rolls_back_exactly(lifecycle, recorder, tmp_path: Path, h, cloud) -> None:
    lifecycle.create("i1", h.write_project(tmp_path / "v1", V1, project_triggers=False), {})
    h.set_control(recorder, {"fail": ["new/PostUpgrade"]})
    with pytest.raises(Exception, match="new/PostUpgrade"):
        lifecycle.upgrade(
            "i1", h.write_project(tmp_path / "v2", V2, version="2.0", project_triggers=False), {}
        )
    with pytest.raises(InputError, match="did not finish"):
        lifecycle.upgrade("i1", tmp_path / "v2", {})
    # a rollback fires PostUpgrade too (operation: rollback): the failing action would stop it as well
    h.set_control(recorder, {})
    outcome = lifecycle.rollback("i1")
    assert outcome.revision == 2
    assert set(h.cfn_stacks(cloud)) == {"i1-keep", "i1-change", "i1-imm", "i1-gone"}
    first, second = lifecycle.journal.revision("i1", 1), lifecycle.journal.revision("i1", 2)
    assert {e: r["hash"] for e, r in first.elements.items()} == {
        e: r["hash"] for e, r in second.elements.items()
    }
    failed = next(op for op in lifecycle.journal.operations("i1") if op.kind == "upgrade")
    statuses = {s.status for s in lifecycle.journal.operation(failed.id).steps}
    assert "compensated" in statuses and "done" not in statuses


def test_input_rules_on_upgrade(lifecycle, tmp_path: Path, h) -> None:
    lifecycle.create("i1", h.write_project(tmp_path / "v1", {"a": {"quiet": True}}, project_triggers=False,
                                           inputs="- {name: size, type: integer, default: 1}\n"), {})
    typed = h.write_project(tmp_path / "v2", {"a": {"quiet": True}}, project_triggers=False,
                            inputs="- {name: size, type: string, default: x}\n")
    with pytest.raises(InputError, match="changes type from integer to string"):
        lifecycle.upgrade("i1", typed, {})
    required = h.write_project(
        tmp_path / "v3",
        {"a": {"quiet": True}},
        project_triggers=False,
        inputs="- {name: size, type: integer}\n- {name: zone, type: string, required: true}\n",
    )
    with pytest.raises(InputError, match="input 'zone' is required"):
        lifecycle.upgrade("i1", required, {})
    assert lifecycle.upgrade("i1", required, {"zone": "z1"}).status == "done"
    assert lifecycle.journal.revision("i1").inputs == {"size": 1, "zone": "z1"}


def test_scope_adds_and_removes_per_region_stacks(lifecycle, recorder, tmp_path: Path, h, cloud) -> None:
    stacks = {"core": {"quiet": True}, "edge": {"regions": "true", "events": ["PreScope", "PostScope"]}}
    lifecycle.create("i1", h.write_project(tmp_path / "v1", stacks, project_triggers=False), {})
    assert set(h.cfn_stacks(cloud)) == {"i1-core", "i1-edge"}
    recorder()
    lifecycle.scope("i1", ["us-east-1", "eu-west-1"])
    assert recorder() == ["edge@eu-west-1/PreScope", "edge@eu-west-1/PostScope"]
    assert set(h.cfn_stacks(cloud, "eu-west-1")) == {"i1-edge"}
    lifecycle.scope("i1", ["eu-west-1"])
    assert set(h.cfn_stacks(cloud)) == {"i1-core"}
    assert set(h.cfn_stacks(cloud, "eu-west-1")) == {"i1-edge"}
    lifecycle.delete("i1")
    assert h.cfn_stacks(cloud) == {} and h.cfn_stacks(cloud, "eu-west-1") == {}


def test_cleanup_deletes_fire_the_old_versions_delete_hooks(
    lifecycle, recorder, tmp_path: Path, h, cloud
) -> None:
    # v1 owns the delete hooks of `gone` (only in v1) and of the old copy of `imm` (v2 has none for it);
    # `gone` waits for `imm`, so the clean-up deletes `gone` first
    delete_events = ["PreDelete", "PostDelete", "OnError"]
    v1 = {
        "keep": {"quiet": True},
        "imm": {"immutable": True, "params": {"Label": "one"}, "events": delete_events},
        "gone": {"depends": ["imm"], "events": delete_events},
    }
    v2 = {"keep": {"quiet": True}, "imm": {"immutable": True, "params": {"Label": "two"},
                                           "events": ["PreUpgrade", "PostUpgrade"]}}
    lifecycle.create("i1", h.write_project(tmp_path / "v1", v1), {})
    recorder()
    h.set_control(recorder, {"fail": ["gone/PreDelete"]})
    with pytest.raises(Exception, match="gone/PreDelete"):
        lifecycle.upgrade("i1", h.write_project(tmp_path / "v2", v2, version="2.0"), {})
    # the add-on lifecycle document: the clean-up runs only once the add-on PostUpgrade succeeded
    assert recorder() == ["-/PreUpgrade", "imm/PreUpgrade", "imm/PostUpgrade", "-/PostUpgrade",
                          "gone/PreDelete", "gone/OnError", "-/OnError"]
    assert set(h.cfn_stacks(cloud)) == {"i1-keep", "i1-imm", "i1-imm-r2", "i1-gone"}  # the hook stopped it
    h.set_control(recorder, {})
    outcome = lifecycle.retry("i1")
    assert recorder() == [
        "-/PreUpgrade",  # the add-on Pre event fires again on every retry
        "gone/PreDelete",
        "gone/PostDelete",
        "imm/PreDelete",
        "imm/PostDelete",
    ]
    assert outcome.revision == 2
    assert set(h.cfn_stacks(cloud)) == {"i1-keep", "i1-imm-r2"}
    # rolling back deletes v2's copy of `imm` in clean-up: v2 gives it no delete hooks, so none fire
    lifecycle.rollback("i1", 1)
    assert [e for e in recorder() if e.endswith("Delete")] == []
    assert set(h.cfn_stacks(cloud)) == {"i1-keep", "i1-imm", "i1-gone"}


def test_upgrade_checks_the_elements_first_and_repair_creates_a_missing_one(
    lifecycle, recorder, tmp_path: Path, h, cloud
) -> None:
    v1 = {"a": {"quiet": True}, "b": {"quiet": True}}
    lifecycle.create("i1", h.write_project(tmp_path / "v1", v1, project_triggers=False), {})
    client = cloud.session().client("cloudformation", endpoint_url=cloud.endpoint, region_name="us-east-1")
    client.delete_stack(StackName="i1-b")  # behind formwright's back
    v2 = {"a": {"quiet": True, "params": {"Label": "two"}}, "b": {"quiet": True}}
    v2 = h.write_project(tmp_path / "v2", v2, version="2.0", project_triggers=False)
    with pytest.raises(InputError, match=r"stack 'i1-b' of element 'b' is not in the cloud.*--repair"):
        lifecycle.upgrade("i1", v2, {})
    assert lifecycle.journal.revision("i1").number == 1  # stopped before anything
    outcome = lifecycle.upgrade("i1", v2, {}, repair=True)
    actions = {s["element"]: s["action"] for s in outcome.steps if s["element"]}
    assert actions == {"a": "update", "b": "create"}
    assert set(h.cfn_stacks(cloud)) == {"i1-a", "i1-b"}
