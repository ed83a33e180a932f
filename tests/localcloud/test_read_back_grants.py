"""Lambda permissions and versions and security group ingress rules: made under CloudFormation's identifiers,
read back after create, in drift detection and after delete (issue 30, item 0).

Pages: AWS::Lambda::Permission (AWS CloudFormation Template Reference; Id read-only, FunctionName and Id the
primary identifier of its provider schema; Lambda API AddPermission / GetPolicy / RemovePermission),
AWS::Lambda::Version ("Return values": Ref the version's ARN, Version its number; PublishVersion,
GetFunction with Qualifier, DeleteFunction with Qualifier), AWS::EC2::SecurityGroupIngress (Id, the security
group rule id, its primary identifier; DescribeSecurityGroupRules). moto's models gave the first two and the
third a Python object's text or the logical id as Ref, and kept nothing to read them back by.
"""

from __future__ import annotations

import json

import pytest

from tests.localcloud.lifecycle import deploy, drift, with_props

TRUST = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": {
    "Service": "lambda.amazonaws.com"}, "Action": "sts:AssumeRole"}]}
RULE = "arn:aws:events:us-east-1:123456789012:rule/nightly"


def _template() -> dict:
    return {
        "Resources": {
            "Role": {"Type": "AWS::IAM::Role", "Properties": {"AssumeRolePolicyDocument": TRUST}},
            "Fn": {"Type": "AWS::Lambda::Function", "Properties": {
                "Runtime": "python3.12", "Handler": "index.handler", "Role": {"Fn::GetAtt": ["Role", "Arn"]},
                "Code": {"ZipFile": "def handler(event, context):\n    return event\n"}}},
            "Perm": {"Type": "AWS::Lambda::Permission", "Properties": {
                "FunctionName": {"Ref": "Fn"}, "Action": "lambda:InvokeFunction",
                "Principal": "events.amazonaws.com", "SourceArn": RULE, "SourceAccount": "123456789012"}},
            "Ver": {"Type": "AWS::Lambda::Version", "Properties": {
                "FunctionName": {"Ref": "Fn"}, "Description": "first release"}},
            "Group": {"Type": "AWS::EC2::SecurityGroup", "Properties": {"GroupDescription": "web"}},
            "Http": {"Type": "AWS::EC2::SecurityGroupIngress", "Properties": {
                "GroupId": {"Fn::GetAtt": ["Group", "GroupId"]}, "IpProtocol": "tcp", "FromPort": 80,
                "ToPort": 80, "CidrIp": "0.0.0.0/0"}},
        },
        "Outputs": {
            "Fn": {"Value": {"Fn::GetAtt": ["Fn", "Arn"]}},
            "Perm": {"Value": {"Ref": "Perm"}}, "PermId": {"Value": {"Fn::GetAtt": ["Perm", "Id"]}},
            "Ver": {"Value": {"Ref": "Ver"}}, "VerNumber": {"Value": {"Fn::GetAtt": ["Ver", "Version"]}},
            "Http": {"Value": {"Ref": "Http"}}, "HttpId": {"Value": {"Fn::GetAtt": ["Http", "Id"]}},
        },
    }


def test_permission_version_and_ingress_rule_have_aws_identifiers_and_are_read_back(cfn, cloud) -> None:
    out = deploy(cfn, "grants", _template(), caps=["CAPABILITY_IAM"])
    function_arn = out["Fn"]
    # the statement id CloudFormation generates, `<stack>-<logical>-<suffix>`; Ref joins the primary
    # identifier's FunctionName and Id
    assert out["PermId"].startswith("grants-Perm-")
    assert out["Perm"] == f"{function_arn}|{out['PermId']}"
    statement = next(s for s in json.loads(cloud.client("lambda").get_policy(FunctionName=function_arn)[
        "Policy"])["Statement"] if s["Sid"] == out["PermId"])
    assert statement["Condition"]["ArnLike"]["AWS:SourceArn"] == RULE
    assert (out["Ver"], out["VerNumber"]) == (f"{function_arn}:1", "1")
    version = cloud.client("lambda").get_function(FunctionName=function_arn, Qualifier="1")["Configuration"]
    assert version["Description"] == "first release"
    assert out["Http"].startswith("sgr-") and out["HttpId"] == out["Http"]
    rules = cloud.client("ec2").describe_security_group_rules(SecurityGroupRuleIds=[out["Http"]])
    assert [(r["FromPort"], r["CidrIpv4"]) for r in rules["SecurityGroupRules"]] == [(80, "0.0.0.0/0")]
    # each was read back after create: none is "not verified"
    assert not [e for e in cfn.events("grants") if e[0] in ("Perm", "Ver", "Http") and "Not verified" in e[2]]
    for logical in ("Perm", "Ver", "Http"):
        assert drift(cfn, "grants", logical)[0] == "IN_SYNC"


def test_a_permission_or_version_removed_outside_the_stack_is_deleted_drift_and_the_stack_deletes_them(
        cfn, cloud) -> None:
    # Detect drift on an entire CloudFormation stack: a resource its service no longer has is DELETED
    out = deploy(cfn, "gone", _template(), caps=["CAPABILITY_IAM"])
    lam = cloud.client("lambda")
    lam.remove_permission(FunctionName=out["Fn"], StatementId=out["PermId"])
    lam.delete_function(FunctionName=out["Fn"], Qualifier="1")
    assert drift(cfn, "gone", "Perm")[0] == "DELETED"
    assert drift(cfn, "gone", "Ver")[0] == "DELETED"

    # removing them from the template deletes them (RemovePermission, DeleteFunction with Qualifier): the
    # function's policy and versions no longer have them
    deploy(cfn, "kept", _template(), caps=["CAPABILITY_IAM"])
    fn = cfn.outputs("kept")["Fn"]
    smaller = _template()
    for logical in ("Perm", "Ver"):
        del smaller["Resources"][logical]
        for key in [k for k in smaller["Outputs"] if k.startswith(logical)]:
            del smaller["Outputs"][key]
    deploy(cfn, "kept", smaller, caps=["CAPABILITY_IAM"])
    with pytest.raises(lam.exceptions.ResourceNotFoundException):
        lam.get_policy(FunctionName=fn)
    assert "1" not in [v["Version"] for v in lam.list_versions_by_function(FunctionName=fn)["Versions"]]
    with pytest.raises(lam.exceptions.ResourceNotFoundException):
        lam.get_function(FunctionName=fn, Qualifier="1")


def test_a_version_setting_the_local_cloud_cannot_apply_fails_the_create_naming_it(cfn) -> None:
    # moto keeps no provisioned concurrency: the read-back after create finds it missing and says so,
    # never CREATE_COMPLETE without it
    template = with_props(_template(), "Ver", ProvisionedConcurrencyConfig={
        "ProvisionedConcurrentExecutions": 2})
    desc = cfn.change_set("concurrency", template, caps=["CAPABILITY_IAM"])
    cfn.client.execute_change_set(ChangeSetName=desc["ChangeSetId"])
    assert cfn.stack("concurrency")["StackStatus"] == "ROLLBACK_COMPLETE"
    reason = next(e[2] for e in cfn.events("concurrency") if e[0] == "Ver" and e[1] == "CREATE_FAILED")
    assert "ProvisionedConcurrencyConfig not applied" in reason
