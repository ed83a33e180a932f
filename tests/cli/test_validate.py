"""`formwright validate` is the CI gate: it accepts what deploy accepts, lints each distinct template
once, and points findings at the template the user wrote (issue #16, item 3)."""

from __future__ import annotations

import shutil
from pathlib import Path

from .terminal import run_in_terminal

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

COUNTED = """\
AWSTemplateFormatVersion: "2010-09-09"
Transform: Count
Parameters:
  Unused:
    Type: String
    Default: "only the macro reads me"
Resources:
  Queue:
    Type: AWS::SQS::Queue
    Count: 2
    Properties:
      VisibilityTimeout: notanumber
"""
SHARED = """\
Parameters:
  Env:
    Type: String
Resources:
  Topic:
    Type: AWS::SNS::Topic
    Properties:
      TopicName: !Sub "${Env}-topic"
      Bogus: 1
"""


def test_findings_in_expanded_templates_point_at_the_source_line(tmp_path: Path, run_cli) -> None:
    shutil.copy(EXAMPLES / "macros" / "count.py", tmp_path / "count.py")
    (tmp_path / "a.yaml").write_text(COUNTED)
    (tmp_path / "formwright.yaml").write_text(
        "name: m\nmacros:\n  Count: count.py\nstacks:\n  a: {template: a.yaml}\n")
    result = run_cli("validate", str(tmp_path), "--output", "json")
    assert result.code == 2
    findings = result.json()["findings"]
    # Queue1 and Queue2 (the macro's copies) are one finding at the line of VisibilityTimeout in a.yaml
    assert [(Path(f["file"]).name, f["line"], f["rule"]) for f in findings] == [("a.yaml", 12, "E3012")]
    # W2001 (unused parameter) would be a false positive: the macro may read any parameter
    errors = result.json()["errors"]
    assert errors[0]["file"].endswith("a.yaml") and errors[0]["line"] == 12


def test_thirty_stacks_on_one_template_lint_it_once(tmp_path: Path, run_cli) -> None:
    (tmp_path / "shared.yaml").write_text(SHARED)
    stacks = "".join(f"  s{i}: {{template: shared.yaml, parameters: {{Env: e{i}}}}}\n" for i in range(30))
    (tmp_path / "formwright.yaml").write_text(f"name: many\nstacks:\n{stacks}")
    result = run_cli("validate", str(tmp_path), "--output", "json")
    assert result.code == 2
    answer = result.json()
    assert answer["templates_linted"] == 1 and len(answer["stacks"]) == 30
    assert [(Path(f["file"]).name, f["line"]) for f in answer["findings"]] == [("shared.yaml", 9)]


def test_a_tosca_stack_that_deploy_accepts_validates(tmp_path: Path, run_cli) -> None:
    # deploy gives a TOSCA stack its ArtifactBucket parameter; validate names the bucket the same way
    shutil.copytree(EXAMPLES / "tosca" / "nodejs", tmp_path / "nodejs")
    (tmp_path / "formwright.yaml").write_text("name: shop\nstacks:\n  app:\n    tosca: nodejs\n")
    result = run_cli("validate", str(tmp_path), "--output", "json")
    assert result.code == 0, result.out + result.err
    assert result.json()["ok"] is True
    assert all("processed.json" not in f["file"] for f in result.json()["findings"])


def test_linting_shows_progress_on_a_terminal(tmp_path: Path) -> None:
    # cfn-lint takes ~1.5 s to load: a terminal sees what validate is doing meanwhile (a real pty)
    (tmp_path / "shared.yaml").write_text(SHARED.replace("      Bogus: 1\n", ""))
    (tmp_path / "formwright.yaml").write_text(
        "name: tty\nstacks:\n  s: {template: shared.yaml, parameters: {Env: e}}\n")
    code, seen = run_in_terminal("validate", str(tmp_path))
    assert code == 0, seen
    assert "linting 1 template" in seen and "1 distinct templates linted, 0 errors" in seen
