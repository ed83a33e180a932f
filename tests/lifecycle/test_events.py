"""Event order for each operation, checked with a recording action (a real child process per event)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from formwright.errors import CloudError

CHAIN = {"a": {}, "b": {"params": {"Label": "!ref a.outputs.Name"}}, "c": {"depends": ["b"]}}


def test_create_fires_pre_stack_post_in_dependency_order(
    lifecycle, recorder, tmp_path: Path, h, cloud
) -> None:
    src = h.write_project(tmp_path / "v1", CHAIN)
    outcome = lifecycle.create("i1", src, {})
    assert outcome.revision == 1
    assert recorder() == ["-/PreCreate", "a/PreCreate", "a/PostCreate", "b/PreCreate", "b/PostCreate",
                          "c/PreCreate", "c/PostCreate", "-/PostCreate"]
    assert set(h.cfn_stacks(cloud)) == {"i1-a", "i1-b", "i1-c"}
    assert lifecycle.journal.transactions("i1", "a")[0]["where"] == "a/PreCreate"


def test_delete_walks_the_stacks_in_reverse(lifecycle, recorder, tmp_path: Path, h, cloud) -> None:
    lifecycle.create("i1", h.write_project(tmp_path / "v1", CHAIN), {})
    recorder()
    lifecycle.delete("i1")
    assert recorder() == ["-/PreDelete", "c/PreDelete", "c/PostDelete", "b/PreDelete", "b/PostDelete",
                          "a/PreDelete", "a/PostDelete", "-/PostDelete"]
    assert h.cfn_stacks(cloud) == {}
    assert lifecycle.instances() == []


def test_rollback_walks_in_reverse_firing_post_before_pre(
    lifecycle, recorder, tmp_path: Path, h, cloud
) -> None:
    lifecycle.create("i1", h.write_project(tmp_path / "v1", CHAIN), {})
    recorder()
    v2 = {"a": {"params": {"Label": "two"}}, "b": {"params": {"Label": "!ref a.outputs.Name"}},
          "c": {"depends": ["b"], "params": {"Label": "two"}}}
    lifecycle.upgrade("i1", h.write_project(tmp_path / "v2", v2, version="2.0"), {})
    upgraded = recorder()
    assert upgraded == ["-/PreUpgrade", "a/PreUpgrade", "a/PostUpgrade", "b/PreUpgrade", "b/PostUpgrade",
                        "c/PreUpgrade", "c/PostUpgrade", "-/PostUpgrade"]
    outcome = lifecycle.rollback("i1")
    # the add-on lifecycle document: a rollback fires the upgrade's events, PostUpgrade first
    assert recorder() == [
        "-/PostUpgrade",
        "c/PostUpgrade",
        "c/PreUpgrade",
        "b/PostUpgrade",
        "b/PreUpgrade",
        "a/PostUpgrade",
        "a/PreUpgrade",
        "-/PreUpgrade",
    ]
    first, third = lifecycle.journal.revision("i1", 1), lifecycle.journal.revision("i1", outcome.revision)
    assert outcome.revision == 3
    assert (third.version, third.inputs, third.source) == (first.version, first.inputs, first.source)
    assert {e: (r["hash"], r["parameters"], r["stack_name"]) for e, r in third.elements.items()} == \
        {e: (r["hash"], r["parameters"], r["stack_name"]) for e, r in first.elements.items()}


def test_failing_action_stops_fires_onerror_and_retry_resumes(lifecycle, recorder, tmp_path: Path, h,
                                                              cloud) -> None:
    h.set_control(recorder, {"fail": ["b/PreCreate"]})
    with pytest.raises(CloudError, match=r"b/PreCreate: python\S* exited with code 3: failing on purpose"):
        lifecycle.create("i1", h.write_project(tmp_path / "v1", CHAIN), {})
    assert recorder() == [
        "-/PreCreate",
        "a/PreCreate",
        "a/PostCreate",
        "b/PreCreate",
        "b/OnError",
        "-/OnError",
    ]
    assert set(h.cfn_stacks(cloud)) == {"i1-a"}
    op = lifecycle.journal.last_operation("i1")
    assert op.status == "failed"
    assert [s.status for s in op.steps] == ["done", "done", "failed", "planned", "planned"]
    h.set_control(recorder, {})
    outcome = lifecycle.retry("i1")
    # the add-on Pre event again, then the failed element's removal flow and its creation flow
    assert recorder() == ["-/PreCreate", "b/PreDelete", "b/PostDelete", "b/PreCreate", "b/PostCreate",
                          "c/PreCreate", "c/PostCreate", "-/PostCreate"]
    assert outcome.revision == 1
    assert set(h.cfn_stacks(cloud)) == {"i1-a", "i1-b", "i1-c"}
    assert lifecycle.journal.operation(op.id).attempt == 2


def test_timeout_stops_the_operation_and_leaves_it_retryable(lifecycle, recorder, tmp_path: Path, h) -> None:
    stacks = {"a": {"events": ["PreCreate"]}}
    src = h.write_project(tmp_path / "v1", stacks, project_triggers=False)
    text = (
        (src / "formwright.yaml")
        .read_text()
        .replace("hooks/record.py]", "hooks/record.py]\n        timeout: 0.5")
    )
    (src / "formwright.yaml").write_text(text)
    h.set_control(recorder, {"sleep": {"a/PreCreate": 30}})
    with pytest.raises(CloudError, match=r"timed out after 0\.5 s"):
        lifecycle.create("i1", src, {})
    h.set_control(recorder, {})
    assert lifecycle.retry("i1").revision == 1


def test_custom_operation_runs_its_action_between_pre_and_post(
    lifecycle, recorder, tmp_path: Path, h
) -> None:
    extra = """\
    operations:
      backup-db:
        inputs:
          - {name: target, type: string, required: true, values: [s3, disk]}
        action: [{python}, hooks/record.py]
    """.replace("{python}", __import__("sys").executable)
    events = ["PreBackupDb", "PostBackupDb"]
    src = h.write_project(tmp_path / "v1", {"a": {"events": events}}, extra=extra, project_triggers=False)
    text = (src / "formwright.yaml").read_text().replace("stacks:\n", "triggers:\n" + h.triggers(2, events)
                                                         + "\nstacks:\n", 1)
    (src / "formwright.yaml").write_text(text)
    lifecycle.create("i1", src, {})
    recorder()
    outcome = lifecycle.run("i1", "backup-db", {"target": "s3"})
    assert outcome.revision is None
    assert recorder() == [
        "-/PreBackupDb",
        "-/RunBackupDb",
        "a/PreBackupDb",
        "a/PostBackupDb",
        "-/PostBackupDb",
    ]
    with pytest.raises(Exception, match="must be one of"):
        lifecycle.run("i1", "backup-db", {"target": "tape"})


def test_cache_key_skips_a_hook_on_update_when_unchanged(lifecycle, recorder, tmp_path: Path, h) -> None:
    inputs = """\
    - {name: size, type: integer, default: 1}
    - {name: color, type: string, default: red}
    """
    src = h.write_project(tmp_path / "v1", {"a": {"params": {"Label": "\"{{ input('color') }}\""},
                                                   "events": ["PreUpdate"]}},
                          inputs=inputs, project_triggers=False)
    text = (src / "formwright.yaml").read_text().replace(
        "- event: PreUpdate\n", "- event: PreUpdate\n        cache_key: \"{{ input('size') }}\"\n")
    (src / "formwright.yaml").write_text(text)
    lifecycle.create("i1", src, {})
    lifecycle.update("i1", {"color": "blue"})
    assert recorder() == ["a/PreUpdate"]  # first time: no key recorded yet
    lifecycle.update("i1", {"color": "green"})
    assert recorder() == []  # same size: skipped
    lifecycle.update("i1", {"color": "pink", "size": "2"})
    assert recorder() == ["a/PreUpdate"]


SLOW_HOOK = """\
import json, os, time


def wait(context):
    control = json.load(open(os.environ["CONTROL_FILE"]))
    with open(control["pidfile"], "w") as f:
        f.write(str(os.getpid()))
    while control.get("hang"):  # until killed
        time.sleep(0.05)
    return {"logs": [{"level": "info", "msg": "slowhook finished for " + context["element"]}]}
"""


def test_python_hook_timeout_kills_it_fires_onerror_and_leaves_it_retryable(
    lifecycle, recorder, tmp_path: Path, h
) -> None:
    src = h.write_project(tmp_path / "v1", {"a": {"events": ["OnError"]}})
    (src / "slowhook.py").write_text(SLOW_HOOK)
    text = (
        (src / "formwright.yaml")
        .read_text()
        .replace(
            "    triggers:\n",
            '    triggers:\n      - {event: PreCreate, action: "slowhook:wait", timeout: 1}\n',
            1,
        )
    )
    (src / "formwright.yaml").write_text(text)
    pidfile = tmp_path / "hook.pid"
    h.set_control(recorder, {"hang": True, "pidfile": str(pidfile)})
    with pytest.raises(CloudError, match=r"a/PreCreate: slowhook:wait timed out after 1 s"):
        lifecycle.create("i1", src, {})
    assert recorder() == ["-/PreCreate", "a/OnError", "-/OnError"]
    pid = int(pidfile.read_text())
    assert pid != os.getpid()  # a child process …
    with pytest.raises(ProcessLookupError):  # … killed (and reaped) when the step failed, not left running
        os.kill(pid, 0)
    op = lifecycle.journal.last_operation("i1")
    assert op.status == "failed" and [s.status for s in op.steps] == ["done", "failed", "planned"]
    h.set_control(recorder, {"pidfile": str(pidfile)})
    assert lifecycle.retry("i1").revision == 1
    assert recorder() == ["-/PreCreate", "-/PostCreate"]  # the add-on Pre event fires again on retry
    log = (lifecycle.home / ".formwright" / "logs" / f"{op.id}.log").read_text()
    assert "slowhook finished for a" in log and "timed out after 1 s" in log
