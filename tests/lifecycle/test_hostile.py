"""Lifecycle failures always land, and hostile manifests are refused: property() between stacks, a bad
property() mid-run, an action whose detached child holds its output, a secure input in a stack name,
unknown regions."""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path

import pytest

from formwright.errors import CloudError, ProjectError
from formwright.lifecycle.rendering import load_for_validation


def test_property_of_a_finished_stack_resolves_like_ref(lifecycle, tmp_path: Path, h) -> None:
    stacks = {"a": {"params": {"Label": "alpha"}},
              "b": {"params": {"Label": "\"{{ property('a.Name') }}\""}, "depends": ["a"]}}
    src = h.write_project(tmp_path / "v1", stacks, project_triggers=False, stack_triggers=False)
    lifecycle.create("i1", src, {})
    assert lifecycle.journal.revision("i1").elements["b"]["parameters"]["Label"] == "alpha"


def test_a_bad_property_mid_run_fails_the_operation_and_its_step(lifecycle, tmp_path: Path, h) -> None:
    stacks = {"a": {}, "b": {"params": {"Label": "\"{{ property('a.Missing') }}\""}, "depends": ["a"]}}
    src = h.write_project(tmp_path / "v1", stacks, project_triggers=False, stack_triggers=False)
    with pytest.raises(CloudError, match=r"property 'a\.Missing' is not known"):
        lifecycle.create("i1", src, {})
    op = lifecycle.journal.last_operation("i1")
    assert op.status == "failed"
    assert [s.status for s in op.steps] == ["done", "done", "failed", "planned"]


DETACHING = """\
import os, subprocess, sys, time
child = subprocess.Popen(["sleep", "60"], start_new_session=True)  # leaves the group, keeps our stdout
open(sys.argv[1], "w").write(str(child.pid))
time.sleep(60)
"""


def test_a_timed_out_action_returns_though_a_detached_child_holds_its_output(
    lifecycle, tmp_path: Path, h
) -> None:
    src = h.write_project(tmp_path / "v1", {"a": {"quiet": True}}, project_triggers=False)
    (src / "hooks" / "detach.py").write_text(DETACHING)
    pidfile = tmp_path / "child.pid"
    text = (src / "formwright.yaml").read_text().replace(
        "stacks:\n", f"triggers:\n  - {{event: PreCreate, action: [{sys.executable}, hooks/detach.py, "
        f"{pidfile}], timeout: 1}}\nstacks:\n")
    (src / "formwright.yaml").write_text(text)
    try:
        with pytest.raises(CloudError, match="timed out after 1 s"):
            lifecycle.create("i1", src, {})
        op = lifecycle.journal.last_operation("i1")
        assert op.status == "failed" and "started" not in {s.status for s in op.steps}
        log = (lifecycle.home / ".formwright" / "logs" / f"{op.id}.log").read_text()
        assert "output lost" in log  # the pipes were closed instead of waiting for the detached child
    finally:
        if pidfile.exists():
            os.kill(int(pidfile.read_text()), signal.SIGKILL)


def test_a_secure_input_in_a_stack_name_is_refused_and_never_printed(lifecycle, tmp_path: Path, h) -> None:
    inputs = "- {name: token, type: string, secure: true, required: true}\n"
    src = h.write_project(tmp_path / "v1", {"a": {"stack_name": "{{ input('token') }}-a"}},
                          inputs=inputs, multiple=False, project_triggers=False, stack_triggers=False)
    with pytest.raises(ProjectError, match="renders the secure input 'token' into its name") as err:
        load_for_validation(src)
    assert err.value.location().endswith("formwright.yaml:9")
    secret = "Hunter2Hunter2"
    with pytest.raises(ProjectError) as err:
        lifecycle.create("i1", src, {"token": secret})
    assert secret not in str(err.value) and lifecycle.instances() == []


def test_unknown_regions_create_nothing(cloud, tmp_path: Path, h) -> None:
    home = h.write_project(tmp_path / "home", {"a": {}}, project_triggers=False, stack_triggers=False)
    run = h.cli(["instance", "create", "i1", "--regions", "mars-1"], home)
    code, _, err = run.wait(timeout=120), *run.communicate()
    assert code == 2 and "unknown region 'mars-1' in --regions" in err and "Traceback" not in err
    listed = h.cli(["instance", "list", "--output", "json"], home)
    assert listed.wait(timeout=120) == 0 and '"instances": []' in listed.communicate()[0]


def test_retry_says_when_the_project_changed_since_the_failed_attempt(lifecycle, recorder, tmp_path: Path,
                                                                      h) -> None:
    src = h.write_project(tmp_path / "v1", {"a": {}}, project_triggers=False)
    h.set_control(recorder, {"fail": ["a/PreCreate"]})
    with pytest.raises(CloudError):
        lifecycle.create("i1", src, {})
    template = src / "templates" / "queue.yaml"
    template.write_text(template.read_text() + "\n# edited after the failure\n")
    h.set_control(recorder, {})
    outcome = lifecycle.retry("i1")
    assert outcome.status == "done"
    assert outcome.note is not None and f"the project at {src.resolve()} changed since the failed attempt" \
        in outcome.note and f"instance upgrade i1 --to {src.resolve()}" in outcome.note


def test_a_killed_operation_leaves_a_lock_that_the_next_one_takes_over(lifecycle, tmp_path: Path, h) -> None:
    src = h.write_project(tmp_path / "v1", {"a": {"quiet": True}}, project_triggers=False)
    lifecycle.create("i1", src, {})
    dead = h.cli(["--version"], tmp_path)  # a real process that is gone by the time its lock is looked at
    dead.wait(timeout=60)
    lifecycle.journal.acquire("i1", "op-killed")
    lifecycle.journal.db.execute("UPDATE locks SET pid = ? WHERE instance = 'i1'", (dead.pid,))
    outcome = lifecycle.update("i1", {})
    assert outcome.note is not None and "took over the lock of operation op-killed" in outcome.note
    assert f"pid {dead.pid}" in outcome.note and lifecycle.journal.lock_holder("i1") is None


LEAKY = """\
AWSTemplateFormatVersion: "2010-09-09"
Parameters:
  Secret:
    Type: String
Resources:
  Queue:
    Type: AWS::SQS::Queue
Outputs:
  Connection:
    Value: !Sub "user:${Secret}@db"
"""


def test_an_output_built_from_a_secure_input_is_kept_masked(lifecycle, tmp_path: Path, h) -> None:
    # the template forgot NoEcho: the cloud hands the output back in clear; formwright keeps it masked
    secret = "Sesame-Open-4242"
    src = h.write_project(tmp_path / "v1", {"a": {"params": {"Secret": "\"{{ input('token') }}\""}}},
                          inputs="- {name: token, type: string, secure: true, required: true}\n",
                          project_triggers=False, stack_triggers=False)
    (src / "templates" / "queue.yaml").write_text(LEAKY)
    lifecycle.create("i1", src, {"token": secret})
    state = lifecycle.home / ".formwright"
    cached = [p for p in (state / "instances" / "i1").rglob("*.json") if "applied" in p.parts]
    assert cached and all(secret not in p.read_text() for p in cached)
    assert any("user:****@db" in p.read_text() for p in cached)
