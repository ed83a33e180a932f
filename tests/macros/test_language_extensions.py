"""AWS::LanguageExtensions from its documentation: Fn::ForEach, Fn::Length, Fn::ToJsonString,
Fn::FindInMap with DefaultValue, intrinsic DeletionPolicy / UpdateReplacePolicy."""

from __future__ import annotations

import json

import pytest

from formwright.macros import MacroError, MacroRegistry, expand
from tests.macros.conftest import template

REGISTRY = MacroRegistry.build()


def le(body: str, **kwargs) -> dict:
    return expand(template("Transform: AWS::LanguageExtensions\n" + body), registry=REGISTRY, **kwargs)


def le_error(body: str, **kwargs) -> MacroError:
    with pytest.raises(MacroError) as info:
        le(body, **kwargs)
    return info.value


def test_foreach_over_a_list_with_dollar_and_ampersand():
    out = le("""
Resources:
  Fn::ForEach::Buckets:
    - Name
    - [logs, data-lake]
    - Bucket&{Name}:
        Type: AWS::S3::Bucket
        Properties: {BucketName: "${Name}-bucket", Tag: {Ref: Name}}
""")
    assert out["Resources"] == {
        "Bucketlogs": {"Type": "AWS::S3::Bucket", "Properties": {"BucketName": "logs-bucket", "Tag": "logs"}},
        "Bucketdatalake": {
            "Type": "AWS::S3::Bucket",
            "Properties": {"BucketName": "data-lake-bucket", "Tag": "data-lake"},
        },
    }


def test_foreach_over_a_comma_delimited_list_parameter():
    body = """
Parameters:
  Names: {Type: CommaDelimitedList, Default: "a,b"}
Resources:
  Fn::ForEach::Topics: [N, {Ref: Names}, {"Topic${N}": {Type: AWS::SNS::Topic}}]
"""
    assert sorted(le(body)["Resources"]) == ["Topica", "Topicb"]
    assert sorted(le(body, parameter_values={"Names": "x,y,z"})["Resources"]) == [
        "Topicx",
        "Topicy",
        "Topicz",
    ]


def test_nested_foreach_in_resources_conditions_outputs_and_properties():
    out = le("""
Conditions:
  Fn::ForEach::Conds: [E, [Dev, Prod], {"Is${E}": {Fn::Equals: [{Ref: AWS::Region}, "${E}"]}}]
Resources:
  Fn::ForEach::Outer:
    - Env
    - [Dev, Prod]
    - Fn::ForEach::Inner:
        - App
        - [Web, Api]
        - "${Env}${App}":
            Type: AWS::SQS::Queue
            Properties:
              Tags:
                Fn::ForEach::Tags: [T, [a, b], {"${T}": "${Env}-${App}-${T}"}]
Outputs:
  Fn::ForEach::Outs: [Q, [DevWeb], {"${Q}Url": {Value: {Ref: "${Q}"}}}]
""")
    assert sorted(out["Resources"]) == ["DevApi", "DevWeb", "ProdApi", "ProdWeb"]
    assert out["Resources"]["ProdApi"]["Properties"]["Tags"] == {"a": "Prod-Api-a", "b": "Prod-Api-b"}
    assert sorted(out["Conditions"]) == ["IsDev", "IsProd"]
    assert out["Outputs"] == {"DevWebUrl": {"Value": {"Ref": "DevWeb"}}}


@pytest.mark.parametrize(
    "body,message",
    [
        (
            "Resources:\n  Fn::ForEach::L: [X, [a, a], {'R${X}': {Type: T}}]\n",
            "produced logical IDs that conflict with existing entries: Ra",
        ),
        (
            "Resources:\n  Ra: {Type: T}\n  Fn::ForEach::L: [X, [a], {'R${X}': {Type: T}}]\n",
            "conflict with existing entries: Ra",
        ),
        (
            "Resources:\n  L: {Type: T}\n  Fn::ForEach::L: [X, [a], {'R${X}': {Type: T}}]\n",
            "conflicts with a logical ID",
        ),
        (
            "Parameters: {X: {Type: String}}\nResources:\n  Fn::ForEach::L: [X, [a], {'R${X}': {Type: T}}]\n",
            "identifier 'X' conflicts with parameter name",
        ),
        (
            "Resources:\n  Fn::ForEach::L: [X, [a], "
            "{'R${X}': {Type: T, Properties: {Fn::ForEach::M: [X, [b], {'${X}': 1}]}}}]\n",
            "conflicts with another loop identifier",
        ),
        # An OutputKey without the identifier is valid (AWS: fnForEachWithNoIdentifierInOutputKeyAndValid);
        # with two items it makes the same key twice.
        (
            "Resources:\n  Fn::ForEach::L: [X, [a, b], {'Fixed': {Type: T}}]\n",
            "conflict with existing entries: Fixed",
        ),
        ("Resources:\n  Fn::ForEach::L: [X, [a]]\n", "Fn::ForEach::L layout is incorrect"),
        ("Resources:\n  Fn::ForEach::L: [X, {a: b}, {'R${X}': {Type: T}}]\n", "collection must be a list"),
        ("Resources:\n  Fn::ForEach::L: [X, [[a]], {'R${X}': {Type: T}}]\n", 'the collection holds ["a"]'),
        (
            "Parameters: {P: {Type: CommaDelimitedList}}\n"
            "Resources:\n  Fn::ForEach::L: [X, {Ref: P}, {'R${X}': {Type: T}}]\n",
            "could not be resolved: Ref P has no value",
        ),
        (
            "Resources:\n  Fn::ForEach::L: [X, {Fn::GetAZs: ''}, {'R${X}': {Type: T}}]\n",
            "could not be resolved",
        ),
        (
            "Resources:\n  Fn::ForEach::L: [X, [a-b], {'R${X}': {Type: T}}]\n",
            "Resource name Ra-b is non alphanumeric",
        ),
        (
            "Mappings:\n  Fn::ForEach::L: [X, [a], {'R${X}': {k: {v: 1}}}]\nResources: {}\n",
            "can't be used in the Mappings",
        ),
    ],
)
def test_foreach_errors(body, message):
    err = le_error(body)
    assert message in err.message
    assert err.message.startswith("Transform AWS::LanguageExtensions failed with: ")
    assert err.line and err.file == "template.yaml"


def test_length_tojsonstring_findinmap_default():
    out = le("""
Parameters:
  Names: {Type: CommaDelimitedList, Default: "a,b,c"}
Mappings:
  Sizes: {us-east-1: {Type: m5.large}}
Resources:
  Q:
    Type: AWS::SQS::Queue
    Properties:
      DelaySeconds: {Fn::Length: {Ref: Names}}
      Literal: {Fn::Length: [1, 2]}
      Policy: {Fn::ToJsonString: {key1: value1, key2: {Ref: AWS::Region}}}
      Known: {Fn::FindInMap: [Sizes, {Ref: AWS::Region}, Type, {DefaultValue: small}]}
      Default: {Fn::FindInMap: [Sizes, eu-west-1, Type, {DefaultValue: small}]}
      Plain: {Fn::FindInMap: [Sizes, us-east-1, Type]}
""")
    props = out["Resources"]["Q"]["Properties"]
    assert props["DelaySeconds"] == 3 and props["Literal"] == 2
    assert json.loads(props["Policy"]) == {"key1": "value1", "key2": "us-east-1"}
    assert props["Known"] == "m5.large" and props["Default"] == "small"
    # A plain FindInMap is looked up too: AWS's transform refuses a missing key (templateWithNoMappingMatch).
    assert props["Plain"] == "m5.large"


def test_tojsonstring_with_values_known_only_at_deployment():
    out = le(
        "Resources:\n  Q: {Type: T, Properties: {P: {Fn::ToJsonString: {arn: {Fn::GetAtt: [B, Arn]}}}}}\n"
    )
    assert out["Resources"]["Q"]["Properties"]["P"] == {
        "Fn::Join": ["", ['{"arn":"', {"Fn::GetAtt": ["B", "Arn"]}, '"}']]
    }


def test_findinmap_without_default_and_missing_key():
    err = le_error(
        "Mappings: {M: {a: {b: c}}}\n"
        "Resources:\n  Q: {Type: T, Properties: {P: {Fn::FindInMap: [M, {Ref: AWS::Region}, b]}}}\n"
    )
    assert "Unable to get mapping for M::us-east-1::b" in err.message


def test_length_of_an_unknown_list():
    err = le_error("Resources:\n  Q: {Type: T, Properties: {P: {Fn::Length: {Fn::GetAZs: ''}}}}\n")
    assert "Fn::Length could not be resolved" in err.message and err.line == 3


@pytest.mark.parametrize("stage,policy", [("Prod", "Retain"), ("Dev", "Delete")])
def test_intrinsic_deletion_and_update_replace_policy(stage, policy):
    out = le(
        """
Parameters:
  Stage: {Type: String}
  Replace: {Type: String, Default: Snapshot}
Conditions:
  IsProd: {Fn::Equals: [{Ref: Stage}, Prod]}
Resources:
  Table:
    Type: AWS::DynamoDB::Table
    DeletionPolicy: {Fn::If: [IsProd, Retain, Delete]}
    UpdateReplacePolicy: {Ref: Replace}
""",
        parameter_values={"Stage": stage},
    )
    assert out["Resources"]["Table"]["DeletionPolicy"] == policy
    assert out["Resources"]["Table"]["UpdateReplacePolicy"] == "Snapshot"


@pytest.mark.parametrize(
    "value,message",
    [
        ("{Ref: P}", "resolves to 'Keep'"),
        ("{Ref: AWS::StackName}", "could not be resolved"),
        ("{Fn::If: [Nope, Retain, Delete]}", "Condition Nope is not defined"),
    ],
)
def test_bad_policies(value, message):
    err = le_error(
        "Parameters: {P: {Type: String, Default: Keep}}\n"
        f"Resources:\n  T:\n    Type: T\n    DeletionPolicy: {value}\n"
    )
    assert message in err.message and err.line == 6


def test_must_precede_serverless():
    doc = template("Transform: [AWS::Serverless-2016-10-31, AWS::LanguageExtensions]\nResources: {}\n")
    with pytest.raises(MacroError) as info:
        expand(doc, registry=REGISTRY)
    assert "AWS::LanguageExtensions must come before AWS::Serverless-2016-10-31" in info.value.message
    assert info.value.line == 1


def test_foreach_then_serverless():
    out = expand(
        template("""
Transform: [AWS::LanguageExtensions, AWS::Serverless-2016-10-31]
Resources:
  Fn::ForEach::Fns:
    - N
    - [One, Two]
    - "Fn${N}":
        Type: AWS::Serverless::Function
        Properties: {Runtime: python3.12, Handler: index.handler, InlineCode: "def handler(e, c): pass"}
"""),
        registry=REGISTRY,
    )
    assert out["Resources"]["FnOne"]["Type"] == "AWS::Lambda::Function"
    assert "FnTwoRole" in out["Resources"]
