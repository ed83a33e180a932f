"""Stack tags and the aws:cloudformation:* tags on every taggable resource (issue 9, item 2)."""

from __future__ import annotations

from typing import Any

from tests.localcloud.conftest import Cfn

ROLE_DOC = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "sts:AssumeRole",
                                                   "Principal": {"Service": "lambda.amazonaws.com"}}]}
TABLE = {"BillingMode": "PAY_PER_REQUEST", "AttributeDefinitions": [{"AttributeName": "id",
                                                                    "AttributeType": "S"}],
         "KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}]}
TEMPLATE = {"Resources": {
    "Queue": {"Type": "AWS::SQS::Queue"},
    "Topic": {"Type": "AWS::SNS::Topic"},
    "Bucket": {"Type": "AWS::S3::Bucket"},
    "Table": {"Type": "AWS::DynamoDB::Table", "Properties": TABLE},
    "Role": {"Type": "AWS::IAM::Role", "Properties": {"AssumeRolePolicyDocument": ROLE_DOC}},
    "Function": {"Type": "AWS::Lambda::Function", "Properties": {
        "Runtime": "python3.12", "Handler": "index.handler", "Role": {"Fn::GetAtt": ["Role", "Arn"]},
        "Code": {"ZipFile": "def handler(event, context): pass"}}},
    "Logs": {"Type": "AWS::Logs::LogGroup"},
    "Param": {"Type": "AWS::SSM::Parameter", "Properties": {"Type": "String", "Value": "v"}},
    "Vpc": {"Type": "AWS::EC2::VPC", "Properties": {"CidrBlock": "10.0.0.0/16"}},
}}


def _pairs(tags: Any) -> dict[str, str]:
    if isinstance(tags, dict):
        return dict(tags)
    return {t["Key"]: t["Value"] for t in tags}


def listed_tags(cfn: Cfn, stack: str) -> dict[str, dict[str, str]]:
    """Each resource's tags as its own service's list-tags call answers them."""
    ids = {r["LogicalResourceId"]: r["PhysicalResourceId"]
           for r in cfn.client.describe_stack_resources(StackName=stack)["StackResources"]}
    client = cfn.target.client
    table_arn = client("dynamodb").describe_table(TableName=ids["Table"])["Table"]["TableArn"]
    function_arn = client("lambda").get_function(FunctionName=ids["Function"])["Configuration"]["FunctionArn"]
    return {
        "Queue": client("sqs").list_queue_tags(QueueUrl=ids["Queue"]).get("Tags", {}),
        "Topic": client("sns").list_tags_for_resource(ResourceArn=ids["Topic"])["Tags"],
        "Bucket": client("s3").get_bucket_tagging(Bucket=ids["Bucket"])["TagSet"],
        "Table": client("dynamodb").list_tags_of_resource(ResourceArn=table_arn)["Tags"],
        "Role": client("iam").list_role_tags(RoleName=ids["Role"])["Tags"],
        "Function": client("lambda").list_tags(Resource=function_arn)["Tags"],
        "Logs": client("logs").list_tags_log_group(logGroupName=ids["Logs"])["tags"],
        "Param": client("ssm").list_tags_for_resource(ResourceType="Parameter", ResourceId=ids["Param"])[
            "TagList"],
        "Vpc": client("ec2").describe_tags(Filters=[{"Name": "resource-id", "Values": [ids["Vpc"]]}])["Tags"],
    }


def test_stack_tags_and_cloudformation_tags_reach_every_taggable_resource(cfn) -> None:
    # "Resource tag" (AWS CloudFormation User Guide, aws-properties-resource-tags): "all stack-level
    # tags, including automatically created tags, are propagated to resources that CloudFormation
    # supports", the automatic ones being aws:cloudformation:logical-id, :stack-id and :stack-name.
    stack = cfn.deploy("tagged", TEMPLATE, caps=["CAPABILITY_IAM"], tags={"team": "blue"})
    system = {"aws:cloudformation:stack-name": "tagged", "aws:cloudformation:stack-id": stack["StackId"]}
    for logical, tags in listed_tags(cfn, "tagged").items():
        assert _pairs(tags) == {"team": "blue", **system, "aws:cloudformation:logical-id": logical}, logical

    # a tag-only update changes the stack tag everywhere and keeps the aws:cloudformation:* tags
    desc = cfn.change_set("tagged", TEMPLATE, caps=["CAPABILITY_IAM"], tags={"team": "green"})
    assert desc["Status"] == "CREATE_COMPLETE", desc.get("StatusReason")
    cfn.client.execute_change_set(ChangeSetName=desc["ChangeSetId"])
    assert cfn.stack("tagged")["StackStatus"] == "UPDATE_COMPLETE"
    for logical, tags in listed_tags(cfn, "tagged").items():
        assert _pairs(tags) == {"team": "green", **system, "aws:cloudformation:logical-id": logical}, logical
