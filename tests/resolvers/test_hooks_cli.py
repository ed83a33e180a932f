"""Issue 24 item 2: deploy hooks on project stacks, through the real CLI against the local cloud: in order
around each stack, only when it changes (`always: true` opts in), a failing before_deploy stopping the
stack and its dependents before anything executes, after_* failures failing the deploy once the stack is
done, on_failure, the JSON context on stdin with secrets masked.

sceptre runs its hooks (before_create/after_update/...) on every launch; formwright runs them on a change
(engine/hooks.py says why)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

TEMPLATE = """\
Parameters:
  Secret: {Type: String, NoEcho: true, Default: x}
  Size: {Type: String, Default: small}
Resources:
  Q:
    Type: AWS::SQS::Queue
Outputs:
  Name: {Value: !GetAtt Q.QueueName}
"""
RECORDER = """\
import json, sys
context = json.load(sys.stdin)
with open("record.jsonl", "a") as out:
    out.write(json.dumps({"argv": sys.argv[1:], "context": context}) + "\\n")
print("hook says hello to", context["stack"]["name"])
if sys.argv[-1] == "fail":
    print("the check refused: database not ready", file=sys.stderr)
    sys.exit(3)
"""
PY_HOOK = """\
import json
def record(context):
    with open("record.jsonl", "a") as out:
        out.write(json.dumps({"argv": ["python-hook", context["event"]], "context": context}) + "\\n")
"""


def project(folder: Path, hooks_a: str = "", extra: str = "") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "t.yaml").write_text(TEMPLATE)
    (folder / "rec.py").write_text(RECORDER)
    (folder / "hookmod.py").write_text(PY_HOOK)
    py = sys.executable
    (folder / "formwright.yaml").write_text(f"""\
name: hk
region: us-east-1
hooks:
  before_deploy: [[{py}, rec.py, before_deploy]]
  after_deploy: [[{py}, rec.py, after_deploy]]
  before_delete: [[{py}, rec.py, before_delete]]
  after_delete: [[{py}, rec.py, after_delete]]
  on_failure: [[{py}, rec.py, on_failure]]
stacks:
  a:
    template: t.yaml
    parameters: {{Secret: hunter2-hunter2}}
{hooks_a}
  b:
    template: t.yaml
    depends_on: [a]
  c:
    template: t.yaml
{extra}""")
    return folder


def records(folder: Path) -> list[dict]:
    path = folder / "record.jsonl"
    lines = path.read_text().splitlines() if path.exists() else []
    path.unlink(missing_ok=True)
    return [json.loads(line) for line in lines]


def test_hooks_run_in_order_around_each_changed_stack_with_the_context(tmp_path: Path, run_cli,
                                                                       cloud) -> None:
    folder = project(tmp_path / "p",
                     extra="    hooks: {after_deploy: [{run: hookmod:record, always: true}]}\n")
    done = run_cli("deploy", str(folder), "-y")
    assert done.code == 0, done.err
    found = records(folder)
    order = [(r["context"]["stack"]["name"], r["argv"][-1]) for r in found]
    assert order.index(("a", "before_deploy")) < order.index(("a", "after_deploy")) \
        < order.index(("b", "before_deploy")) < order.index(("b", "after_deploy"))
    assert ("c", "before_deploy") in order  # the project's
    c_after = [r["argv"] for r in found
               if r["context"]["stack"]["name"] == "c" and r["argv"][-1] == "after_deploy"]
    assert c_after == [["python-hook", "after_deploy"]]  # c's own after_deploy list replaced the project's
    before = next(r["context"] for r in found if r["argv"][-1] == "before_deploy" and
                  r["context"]["stack"]["name"] == "a")
    assert before["parameters"]["Secret"] == "****"  # NoEcho: masked in the context
    assert before["changes"]["kind"] == "create"
    assert [c["logical_id"] for c in before["changes"]["resources"]] == ["Q"]
    assert before["stack"]["stack_name"] == "hk-a" and before["stack"]["region"] == "us-east-1"
    after = next(r["context"] for r in found if r["argv"][-1] == "after_deploy" and
                 r["context"]["stack"]["name"] == "a")
    assert "Name" in after["outputs"]
    log = (folder / ".formwright" / "logs" / "hooks.log").read_text()
    assert "hook says hello to a" in log and "hunter2" not in log

    again = run_cli("deploy", str(folder), "-y")  # no change: only the `always` hook runs
    assert again.code == 0, again.err
    assert [(r["context"]["stack"]["name"], r["argv"]) for r in records(folder)] == \
        [("c", ["python-hook", "after_deploy"])]

    gone = run_cli("delete", str(folder), "-y")
    assert gone.code == 0, gone.err
    order = [(r["context"]["stack"]["name"], r["argv"][-1]) for r in records(folder)]
    assert order.index(("b", "before_delete")) < order.index(("b", "after_delete")) \
        < order.index(("a", "before_delete")) < order.index(("a", "after_delete"))


def test_a_failing_before_deploy_stops_the_stack_and_its_dependents(tmp_path: Path, run_cli, cloud) -> None:
    py = sys.executable
    folder = project(tmp_path / "p", hooks_a=f"    hooks: {{before_deploy: [[{py}, rec.py, fail]]}}")
    done = run_cli("deploy", str(folder), "-y", "--output", "json")
    assert done.code == 1, done.err
    stacks = done.json()["stacks"]
    assert stacks["a"]["outcome"] == "failed"
    assert "before_deploy hook" in stacks["a"]["error"] and "database not ready" in stacks["a"]["error"]
    assert stacks["b"]["outcome"] == "skipped"
    assert stacks["c"]["outcome"] == "created"
    names = {s["StackName"] for s in cloud.client("cloudformation").describe_stacks()["Stacks"]}
    assert names == {"hk-c"}  # a was never created (its change set and review stack are gone)
    order = [(r["context"]["stack"]["name"], r["argv"][-1]) for r in records(folder)]
    assert ("a", "on_failure") in order and ("b", "before_deploy") not in order


def test_an_after_deploy_failure_fails_the_deploy_after_the_stack_is_done(tmp_path: Path, run_cli,
                                                                           cloud) -> None:
    py = sys.executable
    folder = project(tmp_path / "p", hooks_a=f"    hooks: {{after_deploy: [[{py}, rec.py, fail]]}}")
    done = run_cli("deploy", str(folder), "-y", "--output", "json")
    assert done.code == 1
    stacks = done.json()["stacks"]
    assert stacks["a"]["outcome"] == "failed" and stacks["a"]["status"] == "CREATE_COMPLETE"
    assert "after_deploy hook" in stacks["a"]["error"]
    assert stacks["b"]["outcome"] == "skipped"
    stack = cloud.client("cloudformation").describe_stacks(StackName="hk-a")["Stacks"][0]
    assert stack["StackStatus"] == "CREATE_COMPLETE"


def test_bad_hooks_are_one_line_at_their_line(tmp_path: Path, run_cli) -> None:
    folder = project(tmp_path / "p", hooks_a="    hooks: {before_create: [x]}")
    result = run_cli("validate", str(folder), "--no-lint")
    assert result.code == 2 and "unknown hook event 'before_create'" in result.err
    assert "sceptre's `before_create` is `before_deploy` here" in result.err
    assert "formwright.yaml:" in result.err
    folder = project(tmp_path / "q", hooks_a="    hooks: {before_deploy: [{run: x, always: maybe}]}")
    result = run_cli("validate", str(folder), "--no-lint")
    assert result.code == 2 and "`always` must be true or false" in result.err


def test_hooks_are_refused_under_the_sandbox(tmp_path: Path, run_cli, cloud) -> None:
    folder = project(tmp_path / "p")
    result = run_cli("--sandbox", "plan", str(folder))
    assert result.code == 2 and "refused by the sandbox" in result.err


def test_a_hook_past_its_timeout_is_killed_and_fails_the_stack(tmp_path: Path, run_cli, cloud) -> None:
    py = sys.executable
    folder = project(tmp_path / "p", hooks_a=f"    hooks: {{before_deploy: [{{run: [{py}, -c, "
                                             f"'import time; time.sleep(60)'], timeout: 1}}]}}")
    done = run_cli("deploy", str(folder), "-y", "--output", "json", "-s", "a")
    assert done.code == 1, done.err
    assert "timed out after 1 s" in done.json()["stacks"]["a"]["error"]
