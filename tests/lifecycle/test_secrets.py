"""Secure inputs per revision and per operation: a rollback restores revision N's secrets, a retried custom
operation gets its secure inputs again; neither ever reaches the journal, the logs or the CLI's output."""

from __future__ import annotations

import json
from pathlib import Path

SECRET_TEMPLATE = """\
AWSTemplateFormatVersion: "2010-09-09"
Parameters:
  Secret:
    Type: String
    NoEcho: true
Resources:
  Queue:
    Type: AWS::SQS::Queue
Outputs:
  QueueUrl:
    Value: !Ref Queue
"""
PASSWORD = "- {name: password, type: string, secure: true, required: true}\n"
P1, P2 = "first-pass-1111", "second-pass-2222"


def _run(h, args: list[str], home: Path) -> tuple[int, str]:
    proc = h.cli([*args, str(home)], home)  # the project home is the positional [DIR] (issue #16)
    out, err = proc.communicate(timeout=300)
    return proc.returncode, out + err


def _seen(path: Path) -> list[tuple[str, dict]]:
    lines = path.read_text().splitlines() if path.exists() else []
    path.unlink(missing_ok=True)
    return [(where, json.loads(inputs)) for where, inputs in (line.split(" ", 1) for line in lines)]


def _leaks(state: Path, journal_dump: str, outputs: list[str], secrets: list[str]) -> list[str]:
    logs = "".join(p.read_text() for p in (state / "logs").glob("*.log"))
    journal_files = "".join(p.read_text(errors="replace") for p in state.glob("journal.db*"))
    return [f"{secret} in {where}" for secret in secrets
            for where, text in (("journal", journal_dump + journal_files), ("logs", logs),
                                ("CLI output", "\n".join(outputs)))
            if secret in text]


def test_rollback_restores_the_secure_inputs_of_that_revision(lifecycle, recorder, tmp_path: Path, h,
                                                              cloud) -> None:
    src = h.write_project(tmp_path / "v1", {"a": {"params": {"Secret": "\"{{ input('password') }}\""},
                                                  "events": ["PreUpdate", "PreUpgrade"]}},
                          inputs=PASSWORD)
    (src / "templates" / "secret.yaml").write_text(SECRET_TEMPLATE)
    text = (src / "formwright.yaml").read_text().replace("templates/queue.yaml", "templates/secret.yaml")
    (src / "formwright.yaml").write_text(text)
    home, seen = lifecycle.home, tmp_path / "seen.txt"
    h.set_control(recorder, {"seen": str(seen)})
    outputs = []
    for args in (["instance", "create", "i1", "--from", str(src), "--input", f"password={P1}"],
                 ["instance", "update", "i1", "--input", f"password={P2}"]):
        code, output = _run(h, args, home)
        assert code == 0, output
        outputs.append(output)
    assert {inputs["password"] for _, inputs in _seen(seen)} == {P1, P2}
    recorder()

    code, output = _run(h, ["instance", "rollback", "i1", "--to-revision", "1", "--output", "json"], home)
    assert code == 0, output
    outputs.append(output)
    assert json.loads(output)["revision"] == 3
    # every action of the rollback (the project's and the stack's) got revision 1's password
    rolled = _seen(seen)
    # a rollback fires the upgrade's events, last one first (see test_flows.py)
    assert [where for where, _ in rolled] == ["-/PostUpgrade", "a/PreUpgrade", "-/PreUpgrade"]
    assert {inputs["password"] for _, inputs in rolled} == {P1}
    # revision 3 equals revision 1: the stack was deployed again with P1 (same hash), not with P2
    first, second, third = (lifecycle.journal.revision("i1", n) for n in (1, 2, 3))
    assert third.elements["a"]["hash"] == first.elements["a"]["hash"] != second.elements["a"]["hash"]
    assert (third.inputs, third.source, third.version) == (first.inputs, first.source, first.version)
    assert third.inputs == {"password": "****"}
    # an update after the rollback keeps P1 (the current revision's), rolling back again brings P2
    lifecycle.update("i1", {})
    assert {inputs["password"] for _, inputs in _seen(seen)} == {P1}
    lifecycle.rollback("i1", 2)
    assert {inputs["password"] for _, inputs in _seen(seen)} == {P2}
    assert lifecycle.journal.revision("i1").elements["a"]["hash"] == second.elements["a"]["hash"]

    for args in (["instance", "show", "i1", "--output", "json"], ["instance", "show", "i1"],
                 ["history", "i1", "--output", "json"]):
        code, output = _run(h, args, home)
        assert code == 0, output
        outputs.append(output)
    state = home / ".formwright"
    assert _leaks(state, "\n".join(lifecycle.journal.lines()), outputs, [P1, P2]) == []
    store = state / "secrets" / "instances" / "i1.json"
    assert store.stat().st_mode & 0o077 == 0 and P1 in store.read_text() and P2 in store.read_text()


def test_retry_of_a_custom_operation_gets_its_secure_inputs_again(
    lifecycle, recorder, tmp_path: Path, h
) -> None:
    token = "rotate-token-7777"
    extra = """\
    operations:
      rotate-key:
        inputs:
          - {name: token, type: string, secure: true, required: true}
        action: [{python}, hooks/record.py]
    """.replace("{python}", __import__("sys").executable)
    src = h.write_project(tmp_path / "v1", {"a": {"quiet": True}}, extra=extra, project_triggers=False)
    lifecycle.create("i1", src, {})
    seen, marker = tmp_path / "seen.txt", tmp_path / "failed-once"
    h.set_control(recorder, {"seen": str(seen), "fail_once": {"-/RunRotateKey": str(marker)}})
    home = lifecycle.home

    code, failed = _run(h, ["instance", "run", "i1", "rotate-key", "--input", f"token={token}"], home)
    assert code != 0 and "RunRotateKey" in failed and marker.exists(), failed
    op = lifecycle.journal.last_operation("i1")
    assert op.status == "failed" and op.params["inputs"]["token"] == "****"
    code, retried = _run(h, ["instance", "retry", "i1", "--output", "json"], home)
    assert code == 0, retried
    assert json.loads(retried)["operation_id"] == op.id and lifecycle.journal.operation(op.id).attempt == 2
    assert _seen(seen) == [("-/RunRotateKey", {"token": token}), ("-/RunRotateKey", {"token": token})]

    state = home / ".formwright"
    assert _leaks(state, "\n".join(lifecycle.journal.lines()), [failed, retried], [token]) == []
    # done, the operation's secure inputs are dropped: a custom operation makes no revision to roll back to
    store = state / "secrets" / "instances" / "i1.json"
    assert not store.exists() or token not in store.read_text()
