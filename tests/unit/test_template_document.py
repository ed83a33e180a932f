"""The template loader: short-form tags both ways, line numbers, and its errors."""

from __future__ import annotations

import copy
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from formwright.errors import TemplateError
from formwright.template import (
    SHORT_FORM_TAGS,
    TEMPLATE_BODY_LIMIT,
    check_size,
    dump_json,
    dump_yaml,
    loads,
    needs_upload,
    plain,
)
from formwright.template.lint import lint

TAG_CASES = {
    "!Ref Bucket": {"Ref": "Bucket"},
    "!GetAtt Bucket.Arn": {"Fn::GetAtt": ["Bucket", "Arn"]},
    "!GetAtt Stack.Outputs.Url": {"Fn::GetAtt": ["Stack", "Outputs.Url"]},
    "!Sub '${AWS::StackName}-x'": {"Fn::Sub": "${AWS::StackName}-x"},
    "!Sub ['${A}', {A: !Ref B}]": {"Fn::Sub": ["${A}", {"A": {"Ref": "B"}}]},
    "!Join [',', [a, b]]": {"Fn::Join": [",", ["a", "b"]]},
    "!If [IsProd, a, !Ref AWS::NoValue]": {"Fn::If": ["IsProd", "a", {"Ref": "AWS::NoValue"}]},
    "!Select [0, !GetAZs '']": {"Fn::Select": [0, {"Fn::GetAZs": ""}]},
    "!Split [',', a]": {"Fn::Split": [",", "a"]},
    "!FindInMap [M, k, v]": {"Fn::FindInMap": ["M", "k", "v"]},
    "!Base64 text": {"Fn::Base64": "text"},
    "!Cidr [10.0.0.0/16, 4, 8]": {"Fn::Cidr": ["10.0.0.0/16", 4, 8]},
    "!ImportValue shared-vpc": {"Fn::ImportValue": "shared-vpc"},
    "!GetAZs us-east-1": {"Fn::GetAZs": "us-east-1"},
    "!Equals [a, b]": {"Fn::Equals": ["a", "b"]},
    "!And [!Condition A, !Condition B]": {"Fn::And": [{"Condition": "A"}, {"Condition": "B"}]},
    "!Or [!Condition A, !Condition B]": {"Fn::Or": [{"Condition": "A"}, {"Condition": "B"}]},
    "!Not [!Condition A]": {"Fn::Not": [{"Condition": "A"}]},
    "!Condition IsProd": {"Condition": "IsProd"},
    "!Transform {Name: M, Parameters: {x: 1}}": {"Fn::Transform": {"Name": "M", "Parameters": {"x": 1}}},
    # the functions of Rules ("Rule functions", AWS CloudFormation User Guide), used in public templates
    "!ValueOf [Subnet, VpcId]": {"Fn::ValueOf": ["Subnet", "VpcId"]},
    "!ValueOfAll [AWS::EC2::Subnet::Id, VpcId]": {"Fn::ValueOfAll": ["AWS::EC2::Subnet::Id", "VpcId"]},
    "!RefAll AWS::EC2::VPC::Id": {"Fn::RefAll": "AWS::EC2::VPC::Id"},
    "!Contains [[a, b], !Ref Env]": {"Fn::Contains": [["a", "b"], {"Ref": "Env"}]},
    "!EachMemberEquals [!Ref Subnets, x]": {"Fn::EachMemberEquals": [{"Ref": "Subnets"}, "x"]},
    "!EachMemberIn [!Ref Subnets, [x]]": {"Fn::EachMemberIn": [{"Ref": "Subnets"}, ["x"]]},
}


def test_every_short_form_tag_is_covered() -> None:
    used = {case.split()[0][1:] for case in TAG_CASES}
    assert used == set(SHORT_FORM_TAGS)


@pytest.mark.parametrize("source,expected", list(TAG_CASES.items()))
def test_tag_loads_to_long_form_and_dumps_back(source: str, expected: dict) -> None:
    loaded = loads(f"Value: {source}\n")["Value"]
    assert plain(loaded) == expected
    dumped = dump_yaml({"Value": loaded})
    tag = source.split()[0]
    assert tag in dumped, dumped
    assert plain(loads(dumped)) == {"Value": expected}


def test_long_form_dump_has_no_tags() -> None:
    text = dump_yaml({"A": {"Ref": "B"}}, short_form=False)
    assert "!" not in text and plain(loads(text)) == {"A": {"Ref": "B"}}


def test_line_numbers_are_kept() -> None:
    doc = loads("AWSTemplateFormatVersion: 2010-09-09\nResources:\n  Queue:\n    Type: AWS::SQS::Queue\n")
    assert doc["AWSTemplateFormatVersion"] == "2010-09-09"  # a date stays text
    assert doc["Resources"].line_of("Queue") == 3
    assert doc["Resources"]["Queue"].line == 4


def test_deepcopy_keeps_lines() -> None:
    doc = loads("a:\n  b: 1\n")
    clone = copy.deepcopy(doc)
    assert clone == doc and clone["a"].line == 2 and clone.key_lines == {"a": 1}


def test_duplicate_key_is_an_error_with_its_line() -> None:
    with pytest.raises(TemplateError) as err:
        loads("Resources:\n  A: 1\n  A: 2\n", file="t.yaml")
    assert str(err.value).startswith("t.yaml:3: duplicate key 'A'")


def test_bad_yaml_reports_file_and_line() -> None:
    with pytest.raises(TemplateError) as err:
        loads("Resources:\n  A: [1, 2\n  B: 3\n", file="bad.yaml")
    assert err.value.file == "bad.yaml" and err.value.line is not None


def test_unknown_tag_is_named() -> None:
    with pytest.raises(TemplateError, match="unknown tag"):
        loads("A: !Bogus x\n", file="t.yaml")


def test_getatt_without_dot_is_an_error() -> None:
    with pytest.raises(TemplateError, match=r"Resource\.Attribute"):
        loads("A: !GetAtt Bucket\n")


def test_json_templates_load_including_tab_indentation() -> None:
    text = '{\n\t"Resources": {\n\t\t"Q": {"Type": "AWS::SQS::Queue"}\n\t}\n}\n'
    assert plain(loads(text)) == {"Resources": {"Q": {"Type": "AWS::SQS::Queue"}}}
    with pytest.raises(TemplateError) as err:
        loads('{\n\t"a": 1,\n\t"a": 2\n}', file="t.json")
    assert "duplicate key" in str(err.value)


def test_size_rules() -> None:
    small = "x" * TEMPLATE_BODY_LIMIT
    assert not needs_upload(small) and needs_upload(small + "x")
    assert check_size("x" * 1_000_000) == 1_000_000
    with pytest.raises(TemplateError, match="may not exceed 1000000 bytes"):
        check_size("x" * 1_000_001, where="big")


def test_dumped_yaml_is_accepted_by_cfn_lint() -> None:
    source = """AWSTemplateFormatVersion: "2010-09-09"
Parameters:
  Name: {Type: String}
Conditions:
  HasName: !Not [!Equals [!Ref Name, ""]]
Resources:
  Queue:
    Type: AWS::SQS::Queue
    Properties:
      QueueName: !If [HasName, !Sub "${Name}-q", !Ref AWS::NoValue]
Outputs:
  Arn:
    Value: !GetAtt Queue.Arn
"""
    text = dump_yaml(loads(source))
    assert "!GetAtt Queue.Arn" in text and "!If" in text
    findings = lint(loads(text), file="t.yaml", text=text)
    assert [f for f in findings if f.level == "error"] == []


def test_lint_reports_source_lines() -> None:
    text = "Resources:\n  Queue:\n    Type: AWS::SQS::Queue\n    Properties:\n      Bogus: 1\n"
    findings = lint(loads(text), file="q.yaml", text=text)
    assert any(f.line == 5 and f.rule.startswith("E3") for f in findings), findings
    assert str(findings[0]).startswith("q.yaml:")


# ---- property: anything made of intrinsic functions and plain values round-trips ----------------
names = st.from_regex(r"[A-Za-z][A-Za-z0-9]{0,8}", fullmatch=True)
scalars = st.one_of(names, st.integers(-1000, 1000), st.booleans(), st.text(max_size=20))


def functions(children: st.SearchStrategy) -> st.SearchStrategy:
    list_functions = ["Fn::Join", "Fn::If", "Fn::Select", "Fn::Split", "Fn::FindInMap", "Fn::Cidr",
                      "Fn::Equals", "Fn::And", "Fn::Or", "Fn::Not", "Fn::Sub"]
    return st.one_of(
        names.map(lambda n: {"Ref": n}),
        st.tuples(names, names).map(lambda p: {"Fn::GetAtt": list(p)}),
        names.map(lambda n: {"Condition": n}),
        names.map(lambda n: {"Fn::ImportValue": n}),
        st.sampled_from(["Fn::Base64", "Fn::GetAZs", "Fn::Sub"]).flatmap(
            lambda f: st.text(max_size=10).map(lambda t: {f: t})
        ),
        st.tuples(st.sampled_from(list_functions), st.lists(children, max_size=3)).map(
            lambda p: {p[0]: p[1]}
        ),
        st.dictionaries(names, children, max_size=3).map(lambda d: {"Fn::Transform": d}),
    )


documents = st.recursive(
    scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(names, children, max_size=4),
        functions(children),
    ),
    max_leaves=25,
)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(names, documents, min_size=1, max_size=4))
def test_round_trip_property(document: dict) -> None:
    for short_form in (True, False):
        assert plain(loads(dump_yaml(document, short_form=short_form))) == document
    assert plain(loads(dump_json(document))) == json.loads(dump_json(document))
