"""The add-on lifecycle flows, event by event: a recording action on every event at both levels writes
(event, element, operation, retry_of, attempt) and each test asserts the exact sequence.

The rules come from VMware Cloud Director's "Understanding Solution Add-On Behavior"
(docs.vmware.com/en/VMware-Cloud-Director-Extension-SDK/10.5.1/vcd-ext-developer-guide/extension-sdk-behavior.html):
the add-on Pre event, each element in turn (Pre, the operation, Post), the add-on Post event; an upgrade
cleans up removed elements only once the add-on PostUpgrade succeeded; a rollback fires the upgrade's
events the other way round (PostUpgrade first … PreUpgrade last); a retry fires the add-on Pre event
again and, for a failed creation, the element's removal flow before its creation flow.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from formwright.errors import CloudError, InputError

TWO = {"a": {}, "b": {"depends": ["a"]}}


def _flow(recorder, *rows: tuple) -> list[tuple]:
    """Rows written as (event, element, operation[, retry_of, attempt])."""
    return [(*r, None, 1) if len(r) == 3 else r for r in rows]


def test_create_and_delete(lifecycle, recorder, tmp_path: Path, h) -> None:
    lifecycle.create("i1", h.write_project(tmp_path / "v1", TWO), {})
    assert recorder.flow() == _flow(recorder, ("PreCreate", "", "create"), ("PreCreate", "a", "create"),
                                    ("PostCreate", "a", "create"), ("PreCreate", "b", "create"),
                                    ("PostCreate", "b", "create"), ("PostCreate", "", "create"))
    lifecycle.delete("i1")
    assert recorder.flow() == _flow(recorder, ("PreDelete", "", "delete"), ("PreDelete", "b", "delete"),
                                    ("PostDelete", "b", "delete"), ("PreDelete", "a", "delete"),
                                    ("PostDelete", "a", "delete"), ("PostDelete", "", "delete"))


def test_manifest_order_one_at_a_time_and_nothing_starts_after_a_failure(
    lifecycle, recorder, tmp_path: Path, h, cloud
) -> None:
    # z is listed first and needs nothing: it goes first; y waits for x, listed after it
    stacks = {"z": {}, "y": {"depends": ["x"]}, "x": {}, "w": {}}
    lifecycle.create("i1", h.write_project(tmp_path / "v1", stacks, project_triggers=False), {})
    assert [e for e in recorder() if e.endswith("/PreCreate")] == \
        ["z/PreCreate", "x/PreCreate", "y/PreCreate", "w/PreCreate"]
    h.set_control(recorder, {"fail": ["z/PreCreate"]})
    with pytest.raises(CloudError, match="z/PreCreate"):
        lifecycle.create("i2", tmp_path / "v1", {})
    assert recorder() == ["z/PreCreate", "z/OnError"]  # x, y, w never start
    assert not [n for n in h.cfn_stacks(cloud) if n.startswith("i2-")]
    steps = lifecycle.journal.last_operation("i2").steps
    assert [s.status for s in steps] == ["done", "failed", "planned", "planned", "planned", "planned"]


def test_upgrade_cleans_up_after_postupgrade_and_rollback_reverses_it(
    lifecycle, recorder, tmp_path: Path, h, cloud
) -> None:
    v1 = {"a": {}, "b": {"params": {"Label": "one"}}, "gone": {}}
    v2 = {"a": {}, "b": {"params": {"Label": "two"}}, "new": {}}
    lifecycle.create("i1", h.write_project(tmp_path / "v1", v1), {})
    recorder.flow()
    lifecycle.upgrade("i1", h.write_project(tmp_path / "v2", v2, version="2.0"), {})
    # a is unchanged: skipped with no events; gone is removed with its delete events after PostUpgrade
    assert recorder.flow() == _flow(
        recorder, ("PreUpgrade", "", "upgrade"), ("PreUpgrade", "b", "upgrade"),
        ("PostUpgrade", "b", "upgrade"), ("PreUpgrade", "new", "upgrade"), ("PostUpgrade", "new", "upgrade"),
        ("PostUpgrade", "", "upgrade"), ("PreDelete", "gone", "upgrade"), ("PostDelete", "gone", "upgrade"))
    lifecycle.rollback("i1")
    # PostUpgrade first; each element in reverse (the one the upgrade created is removed in its turn,
    # with the hooks of the version that made it); PreUpgrade last; operation: rollback
    assert recorder.flow() == _flow(
        recorder, ("PostUpgrade", "", "rollback"), ("PostUpgrade", "new", "rollback"),
        ("PreUpgrade", "new", "rollback"), ("PostUpgrade", "gone", "rollback"),
        ("PreUpgrade", "gone", "rollback"), ("PostUpgrade", "b", "rollback"),
        ("PreUpgrade", "b", "rollback"), ("PreUpgrade", "", "rollback"))
    assert set(h.cfn_stacks(cloud)) == {"i1-a", "i1-b", "i1-gone"}


def test_scope(lifecycle, recorder, tmp_path: Path, h) -> None:
    stacks = {"core": {}, "edge": {"regions": "true", "depends": ["core"]}}
    lifecycle.create("i1", h.write_project(tmp_path / "v1", stacks), {})
    recorder.flow()
    lifecycle.scope("i1", ["us-east-1", "eu-west-1"])
    assert recorder.flow() == _flow(recorder, ("PreScope", "", "scope"),
                                    ("PreScope", "edge@eu-west-1", "scope"),
                                    ("PostScope", "edge@eu-west-1", "scope"), ("PostScope", "", "scope"))
    lifecycle.scope("i1", ["eu-west-1"])
    assert recorder.flow() == _flow(recorder, ("PreScope", "", "scope"), ("PostScope", "", "scope"),
                                    ("PreDelete", "edge@us-east-1", "scope"),
                                    ("PostDelete", "edge@us-east-1", "scope"))
    with pytest.raises(InputError, match="unknown region 'mars-1'"):
        lifecycle.scope("i1", ["mars-1"])


def test_retry_of_a_creation_removes_then_creates_the_failed_element(
    lifecycle, recorder, tmp_path: Path, h, cloud
) -> None:
    h.set_control(recorder, {"fail": ["b/PostCreate"]})
    with pytest.raises(CloudError, match="b/PostCreate"):
        lifecycle.create("i1", h.write_project(tmp_path / "v1", TWO), {})
    recorder.flow()
    assert set(h.cfn_stacks(cloud)) == {"i1-a", "i1-b"}
    h.set_control(recorder, {})
    lifecycle.retry("i1")
    assert recorder.flow() == [
        ("PreCreate", "", "retry", "create", 2), ("PreDelete", "b", "retry", "create", 2),
        ("PostDelete", "b", "retry", "create", 2), ("PreCreate", "b", "retry", "create", 2),
        ("PostCreate", "b", "retry", "create", 2), ("PostCreate", "", "retry", "create", 2)]


def test_retry_of_a_removal_runs_the_removal_flow_again(lifecycle, recorder, tmp_path: Path, h,
                                                        cloud) -> None:
    lifecycle.create("i1", h.write_project(tmp_path / "v1", TWO), {})
    h.set_control(recorder, {"fail": ["a/PostDelete"]})
    with pytest.raises(CloudError, match="a/PostDelete"):
        lifecycle.delete("i1")
    recorder.flow()
    h.set_control(recorder, {})
    lifecycle.retry("i1")
    assert recorder.flow() == [
        ("PreDelete", "", "retry", "delete", 2), ("PreDelete", "a", "retry", "delete", 2),
        ("PostDelete", "a", "retry", "delete", 2), ("PostDelete", "", "retry", "delete", 2)]
    assert h.cfn_stacks(cloud) == {}


def test_retry_of_an_upgrade_updates_again_with_the_transaction_log(
    lifecycle, recorder, tmp_path: Path, h
) -> None:
    lifecycle.create("i1", h.write_project(tmp_path / "v1", {"a": {"params": {"Label": "one"}}}), {})
    h.set_control(recorder, {"fail": ["a/PostUpgrade"]})
    with pytest.raises(CloudError, match="a/PostUpgrade"):
        lifecycle.upgrade("i1", h.write_project(tmp_path / "v2", {"a": {"params": {"Label": "two"}}},
                                                version="2.0"), {})
    recorder.flow()
    h.set_control(recorder, {})
    lifecycle.retry("i1")
    assert recorder.flow() == [
        ("PreUpgrade", "", "retry", "upgrade", 2), ("PreUpgrade", "a", "retry", "upgrade", 2),
        ("PostUpgrade", "a", "retry", "upgrade", 2), ("PostUpgrade", "", "retry", "upgrade", 2)]
    # the element's actions saw the last execution's transaction log (attempt 1's records first)
    attempts = [t["attempt"] for t in lifecycle.journal.transactions("i1", "a") if "Upgrade" in t["where"]]
    assert attempts == [1, 1, 2, 2]


def test_a_failed_day2_operation_leaves_the_instance_as_it_was(lifecycle, recorder, tmp_path: Path,
                                                               h) -> None:
    extra = f"""\
    operations:
      backup-db:
        action: [{__import__('sys').executable}, hooks/record.py]
    """
    lifecycle.create("i1", h.write_project(tmp_path / "v1", {"a": {}}, extra=extra,
                                           project_triggers=False), {})
    recorder.flow()
    h.set_control(recorder, {"fail": ["-/RunBackupDb"]})
    with pytest.raises(CloudError, match="RunBackupDb") as err:
        lifecycle.run("i1", "backup-db", {})
    assert err.value.exit_code == 1 and "instance is unchanged" in str(err.value)
    assert recorder.flow() == _flow(recorder, ("RunBackupDb", "", "backup-db"))
    assert lifecycle.journal.instance("i1").status == "deployed"
    failed = lifecycle.journal.last_operation("i1")
    assert (failed.kind, failed.status) == ("run", "failed")
    assert all(s.status != "started" for s in failed.steps)
    h.set_control(recorder, {})
    assert lifecycle.update("i1", {}).status == "done"  # not blocked by the failed day-2 operation
