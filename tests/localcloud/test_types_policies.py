"""Resource policies made by a stack, read back with each service's own API (issue 30, item 3).

Pages (AWS CloudFormation Template Reference): AWS::S3::BucketPolicy (Bucket create-only, PolicyDocument
"Update requires: No interruption"), AWS::SQS::QueuePolicy (Queues and PolicyDocument no interruption;
Fn::GetAtt Id), AWS::Events::EventBusPolicy (EventBusName and StatementId create-only; Statement,
Action, Principal, Condition no interruption).
"""

from __future__ import annotations

import json

from tests.localcloud.lifecycle import delete, deploy, drift, with_props


def _statement(action: str, resource: object) -> dict:
    return {
        "Version": "2012-10-17",
        "Statement": [
            {
                "Effect": "Allow",
                "Principal": {"AWS": "arn:aws:iam::123456789012:root"},
                "Action": action,
                "Resource": resource,
            }
        ],
    }


BUCKET_TEMPLATE = {
    "Resources": {
        "Bucket": {"Type": "AWS::S3::Bucket"},
        "Other": {"Type": "AWS::S3::Bucket"},
        "Policy": {
            "Type": "AWS::S3::BucketPolicy",
            "Properties": {
                "Bucket": {"Ref": "Bucket"},
                "PolicyDocument": _statement("s3:GetObject", {"Fn::Sub": "${Bucket.Arn}/*"}),
            },
        },
    },
    "Outputs": {
        "Policy": {"Value": {"Ref": "Policy"}},
        "Bucket": {"Value": {"Ref": "Bucket"}},
        "Other": {"Value": {"Ref": "Other"}},
    },
}


def test_a_bucket_policy_is_set_changed_moved_and_removed_with_the_stack(cfn, cloud) -> None:
    s3 = cloud.client("s3")
    out = deploy(cfn, "bp", BUCKET_TEMPLATE)
    assert out["Policy"] == out["Bucket"]  # Ref: the bucket's name
    policy = json.loads(s3.get_bucket_policy(Bucket=out["Bucket"])["Policy"])
    assert policy["Statement"][0]["Resource"] == f"arn:aws:s3:::{out['Bucket']}/*"
    assert drift(cfn, "bp", "Policy") == ("IN_SYNC", [])

    changed = with_props(
        BUCKET_TEMPLATE,
        "Policy",
        PolicyDocument=_statement(["s3:GetObject", "s3:PutObject"], {"Fn::Sub": "${Bucket.Arn}/*"}),
    )
    assert deploy(cfn, "bp", changed)["Policy"] == out["Bucket"]  # in place
    assert json.loads(s3.get_bucket_policy(Bucket=out["Bucket"])["Policy"])["Statement"][0]["Action"] == [
        "s3:GetObject",
        "s3:PutObject",
    ]

    # Bucket is create-only: the policy moves to the other bucket, the first one loses it in the clean-up
    moved = with_props(
        changed,
        "Policy",
        Bucket={"Ref": "Other"},
        PolicyDocument=_statement("s3:GetObject", {"Fn::Sub": "${Other.Arn}/*"}),
    )
    assert deploy(cfn, "bp", moved)["Policy"] == out["Other"]
    assert s3.get_bucket_policy(Bucket=out["Other"])["Policy"]
    try:
        s3.get_bucket_policy(Bucket=out["Bucket"])
        raise AssertionError("the replaced policy is still on the first bucket")
    except s3.exceptions.ClientError as err:
        assert err.response["Error"]["Code"] == "NoSuchBucketPolicy"

    s3.put_bucket_policy(
        Bucket=out["Other"], Policy=json.dumps(_statement("s3:ListBucket", f"arn:aws:s3:::{out['Other']}"))
    )
    status, diffs = drift(cfn, "bp", "Policy")
    assert status == "MODIFIED" and ("/PolicyDocument/Statement/Action", "NOT_EQUAL") in diffs, diffs
    s3.delete_bucket_policy(Bucket=out["Other"])
    assert drift(cfn, "bp", "Policy")[0] == "DELETED"
    delete(cfn, "bp")


QUEUE_TEMPLATE = {
    "Resources": {
        "Queue": {"Type": "AWS::SQS::Queue"},
        "Second": {"Type": "AWS::SQS::Queue"},
        "Policy": {
            "Type": "AWS::SQS::QueuePolicy",
            "Properties": {
                "Queues": [{"Ref": "Queue"}],
                "PolicyDocument": _statement("sqs:SendMessage", {"Fn::GetAtt": ["Queue", "Arn"]}),
            },
        },
    },
    "Outputs": {
        "Ref": {"Value": {"Ref": "Policy"}},
        "Id": {"Value": {"Fn::GetAtt": ["Policy", "Id"]}},
        "Queue": {"Value": {"Ref": "Queue"}},
        "Second": {"Value": {"Ref": "Second"}},
    },
}


def _queue_policy(sqs, url: str) -> dict | None:
    found = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["Policy"]).get("Attributes", {})
    return json.loads(found["Policy"]) if "Policy" in found else None


def test_a_queue_policy_follows_its_queues_list_in_place(cfn, cloud) -> None:
    sqs = cloud.client("sqs")
    out = deploy(cfn, "qp", QUEUE_TEMPLATE)
    assert out["Ref"] == out["Id"] and out["Ref"].startswith("qp-Policy-")
    assert _queue_policy(sqs, out["Queue"])["Statement"][0]["Action"] == "sqs:SendMessage"
    assert _queue_policy(sqs, out["Second"]) is None
    assert drift(cfn, "qp", "Policy") == ("IN_SYNC", [])

    moved = with_props(QUEUE_TEMPLATE, "Policy", Queues=[{"Ref": "Second"}])
    assert deploy(cfn, "qp", moved)["Ref"] == out["Ref"]  # no replacement: Queues changes in place
    assert _queue_policy(sqs, out["Queue"]) is None
    assert _queue_policy(sqs, out["Second"])["Statement"][0]["Action"] == "sqs:SendMessage"

    sqs.set_queue_attributes(
        QueueUrl=out["Second"], Attributes={"Policy": json.dumps(_statement("sqs:DeleteMessage", "*"))}
    )
    status, diffs = drift(cfn, "qp", "Policy")
    assert status == "MODIFIED" and ("/PolicyDocument/Statement/Action", "NOT_EQUAL") in diffs, diffs
    delete(cfn, "qp")


def test_an_event_bus_policy_is_a_statement_of_the_bus_policy(cfn, cloud) -> None:
    events = cloud.client("events")
    template = {
        "Resources": {
            "Bus": {"Type": "AWS::Events::EventBus", "Properties": {"Name": "orders"}},
            "Policy": {
                "Type": "AWS::Events::EventBusPolicy",
                "Properties": {
                    "EventBusName": {"Ref": "Bus"},
                    "StatementId": "allow-partner",
                    "Statement": {
                        "Effect": "Allow",
                        "Principal": {"AWS": "arn:aws:iam::111122223333:root"},
                        "Action": "events:PutEvents",
                        "Resource": {"Fn::GetAtt": ["Bus", "Arn"]},
                    },
                },
            },
        },
        "Outputs": {"Ref": {"Value": {"Ref": "Policy"}}},
    }
    out = deploy(cfn, "ebp", template)
    assert out["Ref"] == "allow-partner"
    statements = json.loads(events.describe_event_bus(Name="orders")["Policy"])["Statement"]
    assert [(s["Sid"], s["Principal"]) for s in statements] == [
        ("allow-partner", {"AWS": "arn:aws:iam::111122223333:root"})
    ]
    assert drift(cfn, "ebp", "Policy") == ("IN_SYNC", [])

    changed = with_props(
        template,
        "Policy",
        Statement={
            **template["Resources"]["Policy"]["Properties"]["Statement"],
            "Principal": {"AWS": "arn:aws:iam::444455556666:root"},
        },
    )
    assert deploy(cfn, "ebp", changed)["Ref"] == "allow-partner"  # in place
    statements = json.loads(events.describe_event_bus(Name="orders")["Policy"])["Statement"]
    assert statements[0]["Principal"] == {"AWS": "arn:aws:iam::444455556666:root"}

    renamed = with_props(changed, "Policy", StatementId="allow-other")  # create-only: replaced
    assert deploy(cfn, "ebp", renamed)["Ref"] == "allow-other"
    statements = json.loads(events.describe_event_bus(Name="orders")["Policy"])["Statement"]
    assert [s["Sid"] for s in statements] == ["allow-other"]

    events.remove_permission(EventBusName="orders", StatementId="allow-other")
    assert drift(cfn, "ebp", "Policy")[0] == "DELETED"
    delete(cfn, "ebp")
