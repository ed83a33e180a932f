"""Plans show the change: per resource the action, Replacement (never None) and the changed properties
with old -> new; parameter and tag changes; `diff` covers them too (issue #16, item 4)."""

from __future__ import annotations

from pathlib import Path

from formwright.engine.results import ResourceChange

from .terminal import run_in_terminal

QUEUE = """\
Parameters:
  Env:
    Type: String
Resources:
  Q:
    Type: AWS::SQS::Queue
    Properties:
      VisibilityTimeout: {timeout}
"""


def project(folder: Path, timeout: int, env: str, team: str) -> Path:
    (folder / "q.yaml").write_text(QUEUE.format(timeout=timeout))
    (folder / "formwright.yaml").write_text(
        f"name: pp\nregion: us-east-1\ntags:\n  team: {team}\nstacks:\n"
        f"  q:\n    template: q.yaml\n    parameters:\n      Env: {env}\n")
    return folder


def test_plan_names_the_property_its_old_and_new_value_and_the_tag(tmp_path: Path, run_cli, cloud) -> None:
    folder = project(tmp_path, 30, "dev", "a")
    assert run_cli("deploy", str(folder), "-y").code == 0
    project(tmp_path, 60, "prod", "b")
    plan = run_cli("plan", str(folder), "--output", "json")
    assert plan.code == 0, plan.err
    q = plan.json()["plans"]["q"]
    [change] = q["resources"]
    assert change["action"] == "Modify" and change["replacement"] in ("True", "False", "Conditional")
    timeout = {d["name"]: d for d in change["details"]}["VisibilityTimeout"]
    assert (str(timeout["old"]), str(timeout["new"])) == ("30", "60")
    # the template writes no Tags: they change through the stack's tags, not "(none) -> (none)"
    tags = {d["name"]: d for d in change["details"]}["Tags"]
    assert (tags["known"], tags["via"]) == (False, "the stack's tags")
    assert q["parameters"] == [{"key": "Env", "old": "dev", "new": "prod"}]
    assert q["tags"] == [{"key": "team", "old": "a", "new": "b"}]
    text = run_cli("plan", str(folder)).out
    assert "replacement None" not in text and "VisibilityTimeout" in text and "30 → 60" in text
    assert "(none) → (none)" not in text and "(changed: through the stack's tags)" in text

    # on a terminal: coloured, the old value red, the new one green (rich's SGR codes), replacement flagged
    code, shown = run_in_terminal("plan", str(folder))
    assert code == 0, shown
    assert "\x1b[31m30\x1b[0m → \x1b[32m60\x1b[0m" in shown
    code, coloured = run_in_terminal("diff", str(folder))
    assert code == 0 and "\x1b[31m-      VisibilityTimeout: 30" in coloured
    assert "\x1b[32m+      VisibilityTimeout: 60" in coloured

    diff = run_cli("diff", str(folder), "--exit-code")
    assert diff.code == 1
    assert "-      VisibilityTimeout: 30" in diff.out and "+      VisibilityTimeout: 60" in diff.out  # YAML
    assert "-  Env: dev" in diff.out and "+  team: b" in diff.out


def test_replacement_comes_from_the_details_when_the_change_set_leaves_it_out() -> None:
    # ResourceChange.Replacement is documented as True | False | Conditional; RequiresRecreation of the
    # Details (Never | Conditionally | Always) decides when it is missing
    change = ResourceChange.from_change_set({"ResourceChange": {
        "Action": "Modify", "LogicalResourceId": "Q", "ResourceType": "AWS::SQS::Queue",
        "Details": [{"Target": {"Attribute": "Properties", "Name": "QueueName",
                                "RequiresRecreation": "Always"}},
                    {"Target": {"Attribute": "Properties", "Name": "DelaySeconds",
                                "RequiresRecreation": "Never"}}]}})
    assert change.replacement == "True"
    assert [(d.name, d.requires_recreation) for d in change.details] == [
        ("QueueName", "Always"), ("DelaySeconds", "Never")]
    added = ResourceChange.from_change_set({"ResourceChange": {"Action": "Add", "LogicalResourceId": "T"}})
    assert added.replacement == "False"


def test_diff_of_a_json_template_is_json(tmp_path: Path, run_cli, cloud) -> None:
    # the template's own format: a JSON template diffs as JSON, its parameters and tags below it
    def write(timeout: int) -> None:
        (tmp_path / "q.json").write_text(
            '{"Resources": {"Q": {"Type": "AWS::SQS::Queue", '
            f'"Properties": {{"VisibilityTimeout": {timeout}}}}}}}}}')
        (tmp_path / "formwright.yaml").write_text("name: pj\nstacks:\n  q: {template: q.json}\n")

    write(30)
    assert run_cli("deploy", str(tmp_path), "-y").code == 0
    assert run_cli("diff", str(tmp_path), "--exit-code").code == 0  # nothing differs
    write(45)
    diff = run_cli("diff", str(tmp_path), "--exit-code")
    assert diff.code == 1
    assert '-        "VisibilityTimeout": 30' in diff.out and '+        "VisibilityTimeout": 45' in diff.out
