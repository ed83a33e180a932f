"""Lambda aliases and function URLs made by a stack, read back with Lambda's own API (issue 30, item 3).

Pages (AWS CloudFormation Template Reference): AWS::Lambda::Alias (Ref: the alias ARN; FunctionName and Name
create-only; FunctionVersion, Description, RoutingConfig "No interruption"), AWS::Lambda::Url (FunctionArn,
FunctionUrl `https://{url-id}.lambda-url.{region}.on.aws/`; TargetFunctionArn and Qualifier create-only).
"""

from __future__ import annotations

import re

from tests.localcloud.lifecycle import delete, deploy, drift, with_props
from tests.localcloud.test_tags import ROLE_DOC

TEMPLATE = {
    "Resources": {
        "Role": {"Type": "AWS::IAM::Role", "Properties": {"AssumeRolePolicyDocument": ROLE_DOC}},
        "Function": {
            "Type": "AWS::Lambda::Function",
            "Properties": {
                "Runtime": "python3.12",
                "Handler": "index.handler",
                "Role": {"Fn::GetAtt": ["Role", "Arn"]},
                "Code": {"ZipFile": "def handler(event, context): return 1"},
            },
        },
        "V1": {"Type": "AWS::Lambda::Version", "Properties": {"FunctionName": {"Ref": "Function"}}},
        "Live": {
            "Type": "AWS::Lambda::Alias",
            "Properties": {
                "FunctionName": {"Ref": "Function"},
                "Name": "live",
                "FunctionVersion": {"Fn::GetAtt": ["V1", "Version"]},
                "Description": "what users call",
            },
        },
        "Url": {
            "Type": "AWS::Lambda::Url",
            "Properties": {
                "TargetFunctionArn": {"Fn::GetAtt": ["Function", "Arn"]},
                "AuthType": "NONE",
                "Cors": {"AllowOrigins": ["https://example.com"]},
            },
        },
    },
    "Outputs": {
        "Alias": {"Value": {"Ref": "Live"}},
        "AliasArn": {"Value": {"Fn::GetAtt": ["Live", "AliasArn"]}},
        "Function": {"Value": {"Ref": "Function"}},
        "Url": {"Value": {"Fn::GetAtt": ["Url", "FunctionUrl"]}},
        "UrlArn": {"Value": {"Fn::GetAtt": ["Url", "FunctionArn"]}},
        "FunctionArn": {"Value": {"Fn::GetAtt": ["Function", "Arn"]}},
    },
}


def test_an_alias_and_a_url_of_a_function(cfn, cloud) -> None:
    awslambda = cloud.client("lambda")
    out = deploy(cfn, "fn", TEMPLATE, caps=["CAPABILITY_IAM"])
    assert (
        out["Alias"]
        == out["AliasArn"]
        == f"arn:aws:lambda:us-east-1:123456789012:function:{out['Function']}:live"
    )
    alias = awslambda.get_alias(FunctionName=out["Function"], Name="live")
    assert (alias["FunctionVersion"], alias["Description"]) == ("1", "what users call")
    assert re.fullmatch(r"https://\w+\.lambda-url\.us-east-1\.on\.aws/", out["Url"])
    assert out["UrlArn"] == out["FunctionArn"]
    url = awslambda.get_function_url_config(FunctionName=out["Function"])
    assert (url["AuthType"], url["Cors"]["AllowOrigins"]) == ("NONE", ["https://example.com"])
    assert [drift(cfn, "fn", n)[0] for n in ("Live", "Url")] == ["IN_SYNC", "IN_SYNC"]

    # in place: a second version with a weight, a new description; the URL's auth type
    weighted = with_props(
        TEMPLATE,
        "Live",
        Description="canary",
        RoutingConfig={
            "AdditionalVersionWeights": [
                {"FunctionVersion": {"Fn::GetAtt": ["V2", "Version"]}, "FunctionWeight": 0.1}
            ]
        },
    )
    weighted["Resources"]["V2"] = {
        "Type": "AWS::Lambda::Version",
        "DependsOn": "V1",
        "Properties": {"FunctionName": {"Ref": "Function"}},
    }
    weighted["Resources"]["Url"]["Properties"]["AuthType"] = "AWS_IAM"
    weighted["Outputs"]["V2"] = {"Value": {"Fn::GetAtt": ["V2", "Version"]}}
    again = deploy(cfn, "fn", weighted, caps=["CAPABILITY_IAM"])
    assert (again["Alias"], again["Url"]) == (out["Alias"], out["Url"])
    alias = awslambda.get_alias(FunctionName=out["Function"], Name="live")
    assert alias["Description"] == "canary" and alias["RoutingConfig"]["AdditionalVersionWeights"] == {
        again["V2"]: 0.1
    }
    assert awslambda.get_function_url_config(FunctionName=out["Function"])["AuthType"] == "AWS_IAM"

    renamed = with_props(weighted, "Live", Name="stable")  # Name is create-only: a new alias
    third = deploy(cfn, "fn", renamed, caps=["CAPABILITY_IAM"])
    assert third["Alias"].endswith(":stable")
    assert [a["Name"] for a in awslambda.list_aliases(FunctionName=out["Function"])["Aliases"]] == ["stable"]

    awslambda.update_alias(
        FunctionName=out["Function"], Name="stable", FunctionVersion="1", Description="by hand"
    )
    status, diffs = drift(cfn, "fn", "Live")
    assert status == "MODIFIED" and ("/Description", "NOT_EQUAL") in diffs, diffs
    awslambda.delete_function_url_config(FunctionName=out["Function"])
    assert drift(cfn, "fn", "Url")[0] == "DELETED"
    delete(cfn, "fn")
    assert awslambda.list_functions()["Functions"] == []
