"""Secrets, Cognito user pools and clients, IoT policy attachments made by a stack, read back with each
service's own API (issue 30, item 3).

Pages (AWS CloudFormation Template Reference): AWS::SecretsManager::Secret (Ref: the secret's ARN; Name
create-only; "GenerateSecretString ... SecretStringTemplate ... GenerateStringKey"; SecretString write-only),
AWS::Cognito::UserPool (Ref: the pool id; Arn, ProviderName `cognito-idp.{region}.amazonaws.com/{id}`,
ProviderURL `https://cognito-idp.{region}.amazonaws.com/{id}`), AWS::Cognito::UserPoolClient (Ref: the
client id; UserPoolId and GenerateSecret create-only), AWS::IoT::PolicyPrincipalAttachment (both
properties create-only).
"""

from __future__ import annotations

import json
import re

from tests.localcloud.lifecycle import delete, deploy, drift, with_props

SECRET = {
    "Resources": {
        "Secret": {
            "Type": "AWS::SecretsManager::Secret",
            "Properties": {
                "Description": "database login",
                "Tags": [{"Key": "team", "Value": "db"}],
                "GenerateSecretString": {
                    "SecretStringTemplate": '{"username": "admin"}',
                    "GenerateStringKey": "password",
                    "PasswordLength": 20,
                    "ExcludeCharacters": '"@/\\',
                },
            },
        }
    },
    "Outputs": {"Ref": {"Value": {"Ref": "Secret"}}, "Id": {"Value": {"Fn::GetAtt": ["Secret", "Id"]}}},
}


def test_a_generated_secret_is_made_changed_renamed_and_deleted(cfn, cloud) -> None:
    secrets = cloud.client("secretsmanager")
    out = deploy(cfn, "sec", SECRET)
    assert out["Ref"] == out["Id"]
    assert re.fullmatch(
        r"arn:aws:secretsmanager:us-east-1:123456789012:secret:sec-Secret-\w+-\w{6}", out["Ref"]
    )
    value = json.loads(secrets.get_secret_value(SecretId=out["Ref"])["SecretString"])
    assert value["username"] == "admin" and len(value["password"]) == 20
    assert not set(value["password"]) & set('"@/\\')
    described = secrets.describe_secret(SecretId=out["Ref"])
    assert described["Description"] == "database login"
    assert {t["Key"]: t["Value"] for t in described["Tags"]}["team"] == "db"
    assert drift(cfn, "sec", "Secret") == ("IN_SYNC", [])

    given = with_props(
        SECRET, "Secret", GenerateSecretString=None, SecretString="s3cret", Description="given"
    )
    assert deploy(cfn, "sec", given)["Ref"] == out["Ref"]  # in place: a new version of the same secret
    assert secrets.get_secret_value(SecretId=out["Ref"])["SecretString"] == "s3cret"
    assert secrets.describe_secret(SecretId=out["Ref"])["Description"] == "given"

    renamed = with_props(given, "Secret", Name="prod/db")  # Name is create-only
    new = deploy(cfn, "sec", renamed)["Ref"]
    assert new.split(":")[-1].startswith("prod/db-") and [
        s["Name"] for s in secrets.list_secrets()["SecretList"]
    ] == ["prod/db"]

    secrets.update_secret(SecretId=new, Description="by hand")
    assert drift(cfn, "sec", "Secret") == ("MODIFIED", [("/Description", "NOT_EQUAL")])
    delete(cfn, "sec")
    # deleted at once (ForceDeleteWithoutRecovery), so the name can be taken again
    assert secrets.list_secrets()["SecretList"] == []


POOL = {
    "Resources": {
        "Pool": {
            "Type": "AWS::Cognito::UserPool",
            "Properties": {
                "AutoVerifiedAttributes": ["email"],
                "UserPoolTags": {"team": "auth"},
                "Policies": {"PasswordPolicy": {"MinimumLength": 12}},
            },
        },
        "Client": {
            "Type": "AWS::Cognito::UserPoolClient",
            "Properties": {
                "UserPoolId": {"Ref": "Pool"},
                "ClientName": "web",
                "ExplicitAuthFlows": ["ALLOW_USER_SRP_AUTH", "ALLOW_REFRESH_TOKEN_AUTH"],
            },
        },
    },
    "Outputs": {
        "Pool": {"Value": {"Ref": "Pool"}},
        "Arn": {"Value": {"Fn::GetAtt": ["Pool", "Arn"]}},
        "Url": {"Value": {"Fn::GetAtt": ["Pool", "ProviderURL"]}},
        "Client": {"Value": {"Ref": "Client"}},
        "Name": {"Value": {"Fn::GetAtt": ["Client", "Name"]}},
    },
}


def test_a_user_pool_and_its_client(cfn, cloud) -> None:
    idp = cloud.client("cognito-idp")
    out = deploy(cfn, "pool", POOL)
    assert re.fullmatch(r"us-east-1_\w+", out["Pool"])
    assert out["Arn"] == f"arn:aws:cognito-idp:us-east-1:123456789012:userpool/{out['Pool']}"
    assert out["Url"] == f"https://cognito-idp.us-east-1.amazonaws.com/{out['Pool']}"
    pool = idp.describe_user_pool(UserPoolId=out["Pool"])["UserPool"]
    assert (
        pool["Policies"]["PasswordPolicy"]["MinimumLength"] == 12 and pool["UserPoolTags"]["team"] == "auth"
    )
    client = idp.describe_user_pool_client(UserPoolId=out["Pool"], ClientId=out["Client"])["UserPoolClient"]
    assert client["ClientName"] == out["Name"] == "web" and "ClientSecret" not in client
    assert [drift(cfn, "pool", n)[0] for n in ("Pool", "Client")] == ["IN_SYNC", "IN_SYNC"]

    changed = with_props(POOL, "Client", ClientName="mobile", CallbackURLs=["https://example.com/cb"])
    assert deploy(cfn, "pool", changed)["Client"] == out["Client"]  # in place
    client = idp.describe_user_pool_client(UserPoolId=out["Pool"], ClientId=out["Client"])["UserPoolClient"]
    assert (client["ClientName"], client["CallbackURLs"]) == ("mobile", ["https://example.com/cb"])

    secret = with_props(changed, "Client", GenerateSecret=True)  # create-only: a new client with a secret
    new = deploy(cfn, "pool", secret)["Client"]
    assert new != out["Client"]
    clients = idp.list_user_pool_clients(UserPoolId=out["Pool"])["UserPoolClients"]
    assert [c["ClientId"] for c in clients] == [new]
    assert idp.describe_user_pool_client(UserPoolId=out["Pool"], ClientId=new)["UserPoolClient"][
        "ClientSecret"
    ]

    idp.update_user_pool_client(UserPoolId=out["Pool"], ClientId=new, ClientName="by-hand")
    assert drift(cfn, "pool", "Client") == ("MODIFIED", [("/ClientName", "NOT_EQUAL")])
    delete(cfn, "pool")
    assert idp.list_user_pools(MaxResults=10)["UserPools"] == []


def test_an_iot_policy_attached_to_a_certificate(cfn, cloud) -> None:
    iot = cloud.client("iot")
    cert = iot.create_keys_and_certificate(setAsActive=True)["certificateArn"]
    other = iot.create_keys_and_certificate(setAsActive=True)["certificateArn"]
    template = {
        "Resources": {
            "Policy": {
                "Type": "AWS::IoT::Policy",
                "Properties": {
                    "PolicyDocument": {
                        "Version": "2012-10-17",
                        "Statement": [{"Effect": "Allow", "Action": "iot:Connect", "Resource": "*"}],
                    }
                },
            },
            "Attachment": {
                "Type": "AWS::IoT::PolicyPrincipalAttachment",
                "Properties": {"PolicyName": {"Ref": "Policy"}, "Principal": cert},
            },
        },
        "Outputs": {"Policy": {"Value": {"Ref": "Policy"}}},
    }
    policy = deploy(cfn, "iot", template)["Policy"]
    assert [p["policyName"] for p in iot.list_principal_policies(principal=cert)["policies"]] == [policy]
    assert drift(cfn, "iot", "Attachment") == ("IN_SYNC", [])
    deploy(cfn, "iot", with_props(template, "Attachment", Principal=other))  # create-only: replaced
    assert iot.list_principal_policies(principal=cert)["policies"] == []
    assert [p["policyName"] for p in iot.list_principal_policies(principal=other)["policies"]] == [policy]
    iot.detach_principal_policy(policyName=policy, principal=other)
    assert drift(cfn, "iot", "Attachment")[0] == "DELETED"
    delete(cfn, "iot")
