"""validate's cfn-lint workers (template/lint_workers.py): started before the project is loaded, several
templates at once, findings in the order of the templates, the same findings as cfn-lint's own API."""

from __future__ import annotations

import multiprocessing

import pytest
from cfnlint.api import ManualArgs
from cfnlint.api import lint as cfn_lint

from formwright.template.lint import lint
from formwright.template.lint_workers import MORE_WORKERS_FROM, LintWorkers

GOOD = "Resources:\n  Topic:\n    Type: AWS::SNS::Topic\n"
BAD = """\
Resources:
  Queue:
    Type: AWS::SQS::Queue
    Properties:
      VisibilityTimeout: notanumber
      Bogus: 1
  Param:
    Type: AWS::SSM::Parameter
    Properties:
      Type: String
      Value: !GetAtt Missing.Arn
"""


def test_rules_loaded_once_find_what_cfn_lints_own_api_finds() -> None:
    matches = cfn_lint(BAD, config=ManualArgs(regions=["us-east-1"]))
    expected = sorted((m.rule.id, m.linenumber) for m in matches)
    assert expected  # the template is bad in several ways
    for _ in range(2):  # the second run reuses the rules of the first
        assert sorted((f.rule, f.line) for f in lint(None, file="t.yaml", text=BAD)) == expected


def test_several_templates_come_back_in_order() -> None:
    workers = LintWorkers().start()
    jobs = [(BAD, "a.yaml", "us-east-1"),
            (GOOD, "b.yaml", "us-east-1"),
            ("Resources: [1", "c.yaml", "eu-west-1"),
            (GOOD, "d.yaml", "eu-west-1"),
            (BAD, "e.yaml", "us-west-2")]
    assert len(jobs) >= MORE_WORKERS_FROM  # a second worker joins once it has loaded cfn-lint
    try:
        done: list[int] = []
        results = workers.run(jobs, progress=done.append)
    finally:
        workers.close()
    assert done == [1, 2, 3, 4, 5]
    assert {f.file for f in results[0]} == {"a.yaml"} and {f.rule for f in results[0]} >= {"E3012", "E3002"}
    assert results[1] == [] and results[3] == []
    assert [f.rule for f in results[2]] == ["E0000"]  # not even YAML: cfn-lint's parse error
    assert [(f.rule, f.line) for f in results[4]] == [(f.rule, f.line) for f in results[0]]


def test_a_failure_in_a_worker_is_raised_in_the_parent() -> None:
    workers = LintWorkers()
    try:
        with pytest.raises(RuntimeError, match="cfn-lint failed: InvalidRegionException"):
            workers.run([(GOOD, "a.yaml", "mars-north-1")])
    finally:
        workers.close()


def test_closing_stops_a_worker_still_loading_cfn_lint() -> None:
    # a validate that fails before linting must not wait for the worker's ~1.5 s of loading
    workers = LintWorkers().start()
    assert [p.name for p in multiprocessing.active_children()].count("formwright-lint") == 1
    workers.close()
    assert "formwright-lint" not in [p.name for p in multiprocessing.active_children()]
