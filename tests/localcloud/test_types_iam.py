"""IAM inline policies of a role, user or group, IAM groups and user-to-group additions
(emulator/types_iam.py): moto has no model of them, and AWS's samples using them were refused by name
(issue 30, item 3).

Pages (AWS CloudFormation Template Reference): AWS::IAM::RolePolicy, AWS::IAM::UserPolicy,
AWS::IAM::GroupPolicy (PolicyName and the entity's name create-only, PolicyDocument in place),
AWS::IAM::Group (Ref the name, Arn; ManagedPolicyArns and Policies in place), AWS::IAM::UserToGroupAddition.
"""

from __future__ import annotations

from tests.localcloud.lifecycle import delete, deploy, drift, with_props

TRUST = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "sts:AssumeRole",
                                                 "Principal": {"Service": "lambda.amazonaws.com"}}]}
READ = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3:GetObject",
                                                "Resource": "*"}]}
WRITE = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3:PutObject",
                                                 "Resource": "*"}]}
AUDIT = "arn:aws:iam::aws:policy/ReadOnlyAccess"


def _template() -> dict:
    return {
        "Resources": {
            "Role": {"Type": "AWS::IAM::Role", "Properties": {"AssumeRolePolicyDocument": TRUST}},
            "RoleRead": {"Type": "AWS::IAM::RolePolicy", "Properties": {
                "PolicyName": "read", "RoleName": {"Ref": "Role"}, "PolicyDocument": READ}},
            "Team": {"Type": "AWS::IAM::Group", "Properties": {
                "Path": "/teams/", "ManagedPolicyArns": [AUDIT],
                "Policies": [{"PolicyName": "write", "PolicyDocument": WRITE}]}},
            "TeamRead": {"Type": "AWS::IAM::GroupPolicy", "Properties": {
                "PolicyName": "read", "GroupName": {"Ref": "Team"}, "PolicyDocument": READ}},
            "Alice": {"Type": "AWS::IAM::User"},
            "AliceRead": {"Type": "AWS::IAM::UserPolicy", "Properties": {
                "PolicyName": "read", "UserName": {"Ref": "Alice"}, "PolicyDocument": READ}},
            "Members": {"Type": "AWS::IAM::UserToGroupAddition", "Properties": {
                "GroupName": {"Ref": "Team"}, "Users": [{"Ref": "Alice"}]}},
        },
        "Outputs": {"Role": {"Value": {"Ref": "Role"}}, "Team": {"Value": {"Ref": "Team"}},
                    "TeamArn": {"Value": {"Fn::GetAtt": ["Team", "Arn"]}},
                    "Alice": {"Value": {"Ref": "Alice"}},
                    "RoleRead": {"Value": {"Ref": "RoleRead"}}},
    }


def test_inline_policies_groups_and_members_are_made_updated_drifted_and_deleted(cfn, cloud) -> None:
    out = deploy(cfn, "iam", _template(), caps=["CAPABILITY_IAM"])
    iam = cloud.client("iam")
    assert out["RoleRead"] == f"read|{out['Role']}"
    assert iam.get_role_policy(RoleName=out["Role"], PolicyName="read")["PolicyDocument"] == READ
    group = iam.get_group(GroupName=out["Team"])
    assert (group["Group"]["Path"], group["Group"]["Arn"]) == ("/teams/", out["TeamArn"])
    assert [u["UserName"] for u in group["Users"]] == [out["Alice"]]
    assert [p["PolicyArn"] for p in iam.list_attached_group_policies(GroupName=out["Team"])[
        "AttachedPolicies"]] == [AUDIT]
    assert sorted(iam.list_group_policies(GroupName=out["Team"])["PolicyNames"]) == ["read", "write"]
    assert iam.get_user_policy(UserName=out["Alice"], PolicyName="read")["PolicyDocument"] == READ
    for logical in ("RoleRead", "Team", "TeamRead", "AliceRead", "Members"):
        assert drift(cfn, "iam", logical)[0] == "IN_SYNC", logical

    # PolicyDocument in place: the same physical id, the new document
    deploy(cfn, "iam", with_props(_template(), "RoleRead", PolicyDocument=WRITE), caps=["CAPABILITY_IAM"])
    assert cfn.outputs("iam")["RoleRead"] == out["RoleRead"]
    assert iam.get_role_policy(RoleName=out["Role"], PolicyName="read")["PolicyDocument"] == WRITE

    # a policy deleted outside the stack is DELETED drift (Detect drift on an entire stack)
    iam.delete_user_policy(UserName=out["Alice"], PolicyName="read")
    assert drift(cfn, "iam", "AliceRead")[0] == "DELETED"

    delete(cfn, "iam")
    assert out["Team"] not in [g["GroupName"] for g in iam.list_groups()["Groups"]]
