"""The CLI: lock contention between two processes, exit codes, one-line errors, secrets never written."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from formwright.errors import ProjectError
from formwright.lifecycle.manifest import parse_manifest
from formwright.lifecycle.rendering import check_instance_names, load_for_instance
from formwright.model.project import load_project


def _wait_for(path: Path) -> None:
    deadline = time.monotonic() + 120
    while not path.exists():
        assert time.monotonic() < deadline, f"{path} never appeared"
        time.sleep(0.05)


def test_second_operation_on_a_locked_instance_exits_3_naming_the_holder(cloud, tmp_path: Path, h,
                                                                         recorder) -> None:
    home = h.write_project(tmp_path / "home", {"a": {}}, stack_triggers=False)
    go = tmp_path / "go"
    h.set_control(recorder, {"wait": {"-/PreCreate": str(go)}})
    first = h.cli(["instance", "create", "i1"], home)
    try:
        _wait_for(Path(str(go) + ".ready"))
        second = h.cli(["instance", "delete", "i1", "--yes"], home)
        code, _, err = second.wait(timeout=120), *second.communicate()
        assert code == 3, err
        holder = err.split("locked by operation ")[1].split()[0]
        assert holder.startswith("op-") and "Traceback" not in err and len(err.strip().splitlines()) == 1
        assert f"(pid {first.pid} on " in err and ", since 20" in err  # who holds it, where, since when
        wrong = h.cli(["instance", "retry", "i1", "--force-unlock", "op-nope"], home)
        assert wrong.wait(timeout=120) == 2
    finally:
        go.touch()
        assert first.wait(timeout=120) == 0, first.communicate()[1]
    done = h.cli(["instance", "delete", "i1", "--yes"], home)
    assert done.wait(timeout=120) == 0
    assert h.cfn_stacks(cloud) == {}


def test_force_unlock_drops_a_lock(lifecycle, tmp_path: Path, h) -> None:
    lifecycle.create(
        "i1", h.write_project(tmp_path / "v1", {"a": {"quiet": True}}, project_triggers=False), {}
    )
    lifecycle.journal.acquire("i1", "op-ghost")
    with pytest.raises(Exception, match="locked by operation op-ghost") as err:
        lifecycle.update("i1", {})
    assert err.value.exit_code == 3
    lifecycle.force_unlock("i1", "op-ghost")
    assert lifecycle.update("i1", {}).status == "done"


def test_bad_input_is_one_line_with_file_and_line_exit_2(cloud, tmp_path: Path, h) -> None:
    home = h.write_project(tmp_path / "home", {"a": {}}, stack_triggers=False)
    text = (home / "formwright.yaml").read_text().replace("event: PreCreate", "event: PreCreat", 1)
    (home / "formwright.yaml").write_text(text)
    line = text.splitlines().index("- event: PreCreat".rjust(len("- event: PreCreat") + 2)) + 1
    proc = h.cli(["instance", "create", "i1"], home)
    code, _, err = proc.wait(timeout=120), *proc.communicate()
    assert code == 2
    assert f"{home.resolve()}/formwright.yaml:{line}: unknown event 'PreCreat'" in err
    assert "did you mean 'PreCreate'" in err and len(err.strip().splitlines()) == 1
    unknown = h.cli(["instance", "show", "nobody"], home)
    assert unknown.wait(timeout=120) == 2


def test_secure_inputs_reach_the_action_but_never_logs_or_journal(lifecycle, recorder, tmp_path: Path, h,
                                                                  cloud) -> None:
    inputs = """\
    - {name: password, type: string, secure: true, required: true}
    - {name: user, type: string, default: admin}
    """
    src = h.write_project(tmp_path / "v1", {"a": {"params": {"Label": "\"{{ input('password') }}\""}}},
                          inputs=inputs)
    h.set_control(recorder, {"props": {"a/PostCreate": {"secretToken": "tok-98765", "plain": "visible"}}})
    lifecycle.create("i1", src, {"password": "hunter2-s3cret"})
    state = lifecycle.home / ".formwright"
    logs = "".join(p.read_text() for p in (state / "logs").glob("*.log"))
    assert "plain output: inputs" in logs and "****" in logs  # the action saw the secret; the log masks it
    dump = "\n".join(lifecycle.journal.lines())
    for secret in ("hunter2-s3cret", "tok-98765"):
        assert secret not in logs and secret not in dump
        for path in state.rglob("*"):
            if path.is_file() and (
                path.name.startswith("journal.db") or "logs" in path.parts or "build" in path.parts
            ):
                assert secret not in path.read_text(errors="replace"), path
    assert lifecycle.journal.revision("i1").inputs == {"password": "****", "user": "admin"}
    assert lifecycle.journal.properties("i1")["a.plain"] == "visible"
    assert (state / "secrets" / "instances" / "i1.json").stat().st_mode & 0o077 == 0


def test_single_instance_project_refuses_a_second(lifecycle, tmp_path: Path, h) -> None:
    src = h.write_project(tmp_path / "v1", {"a": {"quiet": True}}, multiple=False, project_triggers=False)
    lifecycle.create("one", src, {})
    with pytest.raises(Exception, match="allows a single instance and 'one' exists") as err:
        lifecycle.create("two", src, {})
    assert err.value.exit_code == 2


def test_multi_instance_stack_names_must_contain_the_instance_name(tmp_path: Path, h) -> None:
    src = h.write_project(
        tmp_path / "v1",
        {"a": {"quiet": True}, "b": {"quiet": True, "stack_name": "fixed-b"}},
        project_triggers=False,
    )
    project = load_for_instance(src, "x", {})
    with pytest.raises(
        ProjectError, match=r"formwright.yaml:\d+: stack 'b' is named 'fixed-b' whatever the instance"
    ):
        check_instance_names(project)
    assert parse_manifest(load_project(src, context={"instance": {"name": "y"}})).multiple_instances


def test_manifest_errors_carry_file_and_line(tmp_path: Path, h) -> None:
    bad = {
        "inputs:\n  - {name: n, type: strng}\n": "unknown type 'strng'",
        "inputs:\n  - {name: n, type: integer, default: abc}\n": "must be a integer",
        "triggers:\n  - {event: PreCreate, action: x, when: y}\n": "unknown key 'when' in a trigger",
        "operations:\n  create: {action: x}\n": "clashes with a built-in",
        "operations:\n  backup: {action: x, timeout: -1}\n": "positive number",
        # hostile input (#17): a NaN timeout once left the operation `running` for ever
        # (the project loader refuses YAML NaN and infinities first; the lifecycle would on its own)
        "operations:\n  backup: {action: x, timeout: .nan}\n": "positive number.*got nan|NaN or infinity",
        "triggers:\n  - {event: PreCreate, action: x, timeout: .inf}\n": "positive number|NaN or infinity",
        "triggers:\n  - {event: PreRollback, action: x}\n": "no event 'PreRollback'.*PreUpgrade",
        "inputs:\n  - {name: n, type: number, default: .nan}\n": "must be a finite number|NaN or infinity",
        "inputs:\n  - {name: n, type: number, default: '1e999'}\n": "must be a finite number",
        # a ReDoS pattern is stopped after 2 s
        "inputs:\n  - {name: n, default: " + "a" * 90 + "!, validation: '(a|aa)+$'}\n": "ran over 2 s",
    }
    for extra, message in bad.items():
        src = h.write_project(tmp_path / "p", {"a": {"quiet": True}}, project_triggers=False)
        text = (src / "formwright.yaml").read_text().replace("stacks:\n", extra + "stacks:\n")
        (src / "formwright.yaml").write_text(text)
        with pytest.raises(Exception, match=message) as err:
            parse_manifest(load_for_instance(src, "x", {}))
        assert ":" in err.value.location() and err.value.exit_code == 2


def test_a_stack_with_its_own_target_is_refused_not_overridden(cloud, tmp_path: Path, h) -> None:
    """An instance deploys every stack with the project's target; a stack's own `region:` would be
    silently ignored, so it is refused before anything is written (issue 11: targets flow
    project -> group -> stack; an instance cannot honour a per-stack target)."""
    home = h.write_project(tmp_path / "home", {"a": {}, "b": {}}, stack_triggers=False)
    text = (home / "formwright.yaml").read_text()
    text = text.replace("  b:\n", "  b:\n    region: eu-west-1\n", 1)
    (home / "formwright.yaml").write_text(text)
    line = text.splitlines().index("  b:") + 1
    proc = h.cli(["instance", "create", "i1"], home)
    code, _, err = proc.wait(timeout=120), *proc.communicate()
    assert code == 2, err
    assert f"{home.resolve()}/formwright.yaml:{line}: stack 'b' sets its own region" in err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert h.cfn_stacks(cloud) == {}
