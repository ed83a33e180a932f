"""Parsing CloudFormationStack / GitRepository documents: Flux's schema, defaults, file:line errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from formwright.errors import InputError
from formwright.sync.durations import parse_duration, parse_interval
from formwright.sync.naming import change_set_name
from formwright.sync.objects import load_objects
from formwright.sync.passes import backoff

FLUX_OBJECT = """\
apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata:
  name: my-cfn-templates-repo
  namespace: flux-system
spec:
  interval: 5m
  url: https://github.com/example/my-cloudformation-templates
  ref:
    branch: main
---
apiVersion: cloudformation.contrib.fluxcd.io/v1alpha1
kind: CloudFormationStack
metadata:
  name: my-cfn-stack
  namespace: flux-system
spec:
  stackName: my-cfn-stack-deployed-by-flux
  templatePath: ./my-cloudformation-template.yaml
  sourceRef:
    kind: GitRepository
    name: my-cfn-templates-repo
  interval: 1h
  retryInterval: 5m
  stackParameters:
  - key: ParamKey
    value: ParamValue
  stackTags:
  - key: TagKey
    value: TagValue
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: ignored
spec: {}
"""


def write(tmp_path: Path, text: str) -> Path:
    (tmp_path / "objects.yaml").write_text(text)
    return tmp_path


def test_flux_example_parses_unchanged_with_defaults(tmp_path):
    found = load_objects(write(tmp_path, FLUX_OBJECT))
    obj = found.stacks["flux-system/my-cfn-stack"]
    assert obj.spec.interval == 3600 and obj.spec.poll_interval == 5 and obj.retry_interval == 300
    assert obj.template_path == "./my-cloudformation-template.yaml"
    assert [(p.key, p.value) for p in obj.spec.stack_parameters] == [("ParamKey", "ParamValue")]
    assert obj.source_key == "flux-system/my-cfn-templates-repo"
    assert not obj.spec.destroy_stack_on_deletion and not obj.spec.suspend
    assert found.sources["flux-system/my-cfn-templates-repo"].interval == 300


def test_retry_interval_defaults_to_interval_and_template_path_to_template_yaml(tmp_path):
    text = FLUX_OBJECT.replace("  retryInterval: 5m\n", "").replace(
        "  templatePath: ./my-cloudformation-template.yaml\n", "")
    obj = load_objects(write(tmp_path, text)).stacks["flux-system/my-cfn-stack"]
    assert obj.retry_interval == 3600 and obj.template_path == "template.yaml"


@pytest.mark.parametrize(
    "old,new,line,words",
    [
        ("  interval: 1h\n", "  interval: soon\n", 23, "spec.interval"),
        # issue 17: NaN, infinite and absurd intervals are refused, not scheduled
        # the YAML loader refuses NaN and infinity itself (no JSON form), at the value's line
        ("  interval: 1h\n", "  interval: .nan\n", 23, "NaN or infinity"),
        ("  interval: 1h\n", "  interval: .inf\n", 23, "NaN or infinity"),
        ("  interval: 1h\n", "  interval: 1ns\n", 23, "too short"),
        ("  interval: 1h\n", "  interval: 100000h\n", 23, "too long"),
        ("  interval: 1h\n", "  interval: -5\n", 23, "spec.interval"),
        ("  - key: ParamKey\n", "  - kee: ParamKey\n", 26, "spec.stackParameters[0]"),
        (
            "  templatePath: ./my-cloudformation-template.yaml",
            "  templatePath: ../../etc/passwd",
            19,
            "spec.templatePath",
        ),
        ("  stackName: my-cfn-stack-deployed-by-flux\n", "", 17, "stackName is required"),
    ],
)
def test_errors_name_file_line_and_field(tmp_path, old, new, line, words):
    assert old in FLUX_OBJECT
    with pytest.raises(InputError) as caught:
        load_objects(write(tmp_path, FLUX_OBJECT.replace(old, new)))
    text = str(caught.value)
    assert f"objects.yaml:{line}:" in text and words in text, text
    assert "\n" not in text


def test_bad_yaml_is_one_line(tmp_path):
    with pytest.raises(InputError, match=r"objects.yaml:2: not valid YAML"):
        load_objects(write(tmp_path, "kind: X\n  bad: [\n"))


def test_durations_and_names():
    assert parse_duration("1h30m") == 5400 and parse_duration("500ms") == 0.5 and parse_duration(3) == 3
    with pytest.raises(ValueError):
        parse_duration("5 minutes")
    for bad in (float("nan"), float("inf"), -1, "1ns", "999ms"):  # issue 17: refused with a clear error
        with pytest.raises(ValueError):
            parse_interval(bad)
    assert parse_interval("200ms", minimum=0.1) == 0.2
    name = change_set_name(3, "main@sha1:" + "a" * 40)
    assert name == "flux-3-main-sha1-" + "a" * 40  # the controller's GetChangeSetName
    assert len(change_set_name(1, "x" * 300)) == 128
    assert change_set_name(1, "feature/a__b@sha1:1") == "flux-1-feature-a-b-sha1-1"
    assert [backoff(n, 1, 10) for n in (1, 2, 3, 4, 5)] == [1, 2, 4, 8, 10]
