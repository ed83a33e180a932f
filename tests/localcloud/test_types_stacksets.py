"""A stack set with its instances made by a stack, read back with CloudFormation's own API (issue 30, item 3).

Page (AWS CloudFormation Template Reference): AWS::CloudFormation::StackSet — Ref: the StackSetId
(`{name}:{uuid}`); StackSetName and PermissionModel create-only; TemplateBody, Parameters, Description and
StackInstancesGroup "No interruption". Each instance is a stack in its account and region.
"""

from __future__ import annotations

import json

from tests.localcloud.lifecycle import delete, deploy, drift, with_props

INNER = {
    "Parameters": {"Timeout": {"Type": "String", "Default": "30"}},
    "Resources": {
        "Queue": {"Type": "AWS::SQS::Queue", "Properties": {"VisibilityTimeout": {"Ref": "Timeout"}}}
    },
}

TEMPLATE = {
    "Resources": {
        "Set": {
            "Type": "AWS::CloudFormation::StackSet",
            "Properties": {
                "StackSetName": "queues",
                "PermissionModel": "SELF_MANAGED",
                "Description": "a queue per region",
                "TemplateBody": json.dumps(INNER),
                "StackInstancesGroup": [
                    {"DeploymentTargets": {"Accounts": ["123456789012"]}, "Regions": ["us-west-2"]}
                ],
            },
        }
    },
    "Outputs": {"Id": {"Value": {"Ref": "Set"}}, "Att": {"Value": {"Fn::GetAtt": ["Set", "StackSetId"]}}},
}


def _queues(cloud, region: str) -> list[str]:
    import boto3

    sqs = boto3.client(
        "sqs",
        region_name=region,
        endpoint_url=cloud.endpoint,
        aws_access_key_id="x",
        aws_secret_access_key="x",
    )
    return sqs.list_queues().get("QueueUrls", [])


def test_a_stack_set_and_its_instances(cfn, cloud) -> None:
    out = deploy(cfn, "ss", TEMPLATE)
    assert out["Id"] == out["Att"] and out["Id"].startswith("queues:")
    described = cfn.client.describe_stack_set(StackSetName="queues")["StackSet"]
    assert (described["StackSetId"], described["Description"]) == (out["Id"], "a queue per region")
    instances = cfn.client.list_stack_instances(StackSetName="queues")["Summaries"]
    assert [(i["Account"], i["Region"]) for i in instances] == [("123456789012", "us-west-2")]
    assert len(_queues(cloud, "us-west-2")) == 1
    assert drift(cfn, "ss", "Set") == ("IN_SYNC", [])

    wider = with_props(
        TEMPLATE,
        "Set",
        Description="queues",
        StackInstancesGroup=[
            {"DeploymentTargets": {"Accounts": ["123456789012"]}, "Regions": ["us-west-2", "eu-west-1"]}
        ],
    )
    assert deploy(cfn, "ss", wider)["Id"] == out["Id"]  # in place: one more instance
    regions = sorted(i["Region"] for i in cfn.client.list_stack_instances(StackSetName="queues")["Summaries"])
    assert regions == ["eu-west-1", "us-west-2"] and len(_queues(cloud, "eu-west-1")) == 1

    renamed = with_props(wider, "Set", StackSetName="queues-2")  # create-only: a new stack set
    again = deploy(cfn, "ss", renamed)
    assert again["Id"].startswith("queues-2:")
    live = [s["StackSetName"] for s in cfn.client.list_stack_sets()["Summaries"] if s["Status"] == "ACTIVE"]
    assert live == ["queues-2"]  # a deleted stack set is still listed, as DELETED
    delete(cfn, "ss")
    assert {s["Status"] for s in cfn.client.list_stack_sets()["Summaries"]} == {"DELETED"}
    assert _queues(cloud, "us-west-2") == [] and _queues(cloud, "eu-west-1") == []
