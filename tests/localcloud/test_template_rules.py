"""Valid templates the local cloud or the loader refused or misreported, and CloudFormation's own template
validation at CreateChangeSet (issue 30, items 4 and 5). Each found on a public template."""

from __future__ import annotations

import json

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

from formwright.cloud.local import STUB_TAG

QUEUE = {"Type": "AWS::SQS::Queue"}


@pytest.mark.parametrize(("template", "message"), [
    # texts as AWS answers them, quoted in aws-samples/aws-iot-chat-example#1, cfn-lint#92,
    # serverless/serverless#4745 and aws/serverless-application-model#1044
    ({"Resources": {"Q": QUEUE}, "Outputs": {"O": {"Description": "no value"}}},
     "Template format error: Every Outputs member must contain a Value object"),
    ({"Resources": {}}, "Template format error: At least one Resources member must be defined."),
    ({"Resources": {"Q": {**QUEUE, "Condition": "IsProd"}}},
     "Template format error: Condition IsProd is not defined."),
    ({"Resources": {"Q": {**QUEUE, "DependsOn": "Ghost"}}},
     "Template format error: Unresolved resource dependencies [Ghost] in the Resources block of the "
     "template"),
    ({"Resources": {"A": {**QUEUE, "DependsOn": "B"}, "B": {**QUEUE, "DependsOn": "A"}, "C": QUEUE}},
     "Circular dependency between resources: [A, B]"),
])
def test_an_invalid_template_is_refused_at_create_change_set_with_cloudformations_text(
        cfn, template: dict, message: str) -> None:
    with pytest.raises(ClientError) as refused:
        cfn.change_set("bad", template)
    assert refused.value.response["Error"]["Message"] == message
    assert not cfn.exists("bad")


def test_a_boolean_allowed_values_list_takes_its_default_false(cfn) -> None:
    # YAML's [true, false] are booleans; the default false is one of them ("Parameters", AllowedValues)
    template = {"Parameters": {"Flag": {"Type": "String", "AllowedValues": [True, False], "Default": False}},
                "Resources": {"Q": QUEUE}}
    assert cfn.deploy("flag", template)["StackStatus"] == "CREATE_COMPLETE"


def test_the_stack_id_is_an_arn_when_the_change_set_is_made(cfn) -> None:
    # "Pseudo parameters reference": AWS::StackId is the stack's ARN; its third part after '/' its id
    template = {"Resources": {"P": {"Type": "AWS::SSM::Parameter", "Properties": {
        "Type": "String", "Value": {"Fn::Select": [2, {"Fn::Split": ["/", {"Ref": "AWS::StackId"}]}]}}}}}
    stack = cfn.deploy("ids", template)
    value = cfn.target.client("ssm").get_parameter(Name=cfn.resource("ids", "P"))["Parameter"]["Value"]
    assert value == stack["StackId"].rsplit("/", 1)[-1]


def test_a_custom_resource_takes_any_properties(cfn) -> None:
    # AWS::CloudFormation::CustomResource: "ServiceToken" and any properties the provider reads
    template = {"Resources": {"Seed": {"Type": "Custom::Seed", "Properties": {
        "ServiceToken": "arn:aws:lambda:us-east-1:123456789012:function:seed", "Rows": 3, "Table": "t"}}}}
    desc = cfn.change_set("custom", template, tags={STUB_TAG: "Custom::Seed"})
    assert desc["Status"] == "CREATE_COMPLETE", desc.get("StatusReason")


def test_a_nested_stack_is_made_with_its_parents_capabilities(cfn) -> None:
    # "AWS::CloudFormation::Stack": the capabilities of the parent's operation apply to its nested stacks
    trust = {"Version": "2012-10-17", "Statement": [
        {"Effect": "Allow", "Principal": {"Service": "ec2.amazonaws.com"}, "Action": "sts:AssumeRole"}]}
    role = {"Type": "AWS::IAM::Role", "Properties": {"AssumeRolePolicyDocument": trust}}
    child = {"Resources": {"Role": role}}
    s3 = cfn.target.client("s3")
    s3.create_bucket(Bucket="templates")
    s3.put_object(Bucket="templates", Key="child.json", Body=json.dumps(child).encode())
    parent = {"Resources": {"Child": {"Type": "AWS::CloudFormation::Stack", "Properties": {
        "TemplateURL": "https://templates.s3.amazonaws.com/child.json"}}}}
    assert cfn.deploy("parent", parent, caps=["CAPABILITY_IAM"])["StackStatus"] == "CREATE_COMPLETE"


def test_an_rds_engine_in_any_case_and_io1_block_devices_are_made(cfn) -> None:
    # AWS::RDS::DBInstance Engine "MySQL" (case-insensitive); AWS::EC2::Instance Ebs io1 with Iops
    template = {"Resources": {
        "Db": {"Type": "AWS::RDS::DBInstance", "Properties": {
            "Engine": "MySQL", "DBInstanceClass": "db.t3.micro", "AllocatedStorage": "20",
            "MasterUsername": "admin", "MasterUserPassword": "password123"}},
        "Host": {"Type": "AWS::EC2::Instance", "Properties": {
            "ImageId": "ami-12c6146b", "InstanceType": "t2.micro", "BlockDeviceMappings": [
                {"DeviceName": "/dev/sdb", "Ebs": {"VolumeType": "io1", "Iops": 200, "VolumeSize": 20}}]}}}}
    assert cfn.deploy("db", template)["StackStatus"] == "CREATE_COMPLETE"
    volumes = cfn.target.client("ec2").describe_volumes(Filters=[
        {"Name": "attachment.instance-id", "Values": [cfn.resource("db", "Host")]}])["Volumes"]
    assert [(v["VolumeType"], v.get("Iops")) for v in volumes if v["VolumeType"] == "io1"] == [("io1", 200)]


def test_a_rollback_that_cannot_delete_is_rollback_failed_and_delete_tries_again(
        inprocess_cloud, monkeypatch) -> None:
    # "Stack status codes": ROLLBACK_FAILED; a DeleteStack then deletes what the rollback left, and says
    # DELETE_FAILED, never a quiet DELETE_COMPLETE, while a resource stays. The failures are stand-ins
    # (a create that fails its read-back, a delete that leaves the gateway) switched on and off here.
    from formwright.cloud.emulator import completions, resources

    client = boto3.client("cloudformation", endpoint_url=inprocess_cloud, region_name="us-east-1",
                          aws_access_key_id="testing", aws_secret_access_key="testing",
                          config=Config(retries={"total_max_attempts": 1}))
    monkeypatch.setitem(resources.COMPLETE_CREATE, "AWS::S3::Bucket", lambda *args: None)
    monkeypatch.setitem(completions.OWN_DELETE, "AWS::EC2::InternetGateway", lambda obj, backend: None)
    template = {"Resources": {"Gateway": {"Type": "AWS::EC2::InternetGateway"},
                              "Bucket": {"Type": "AWS::S3::Bucket", "DependsOn": "Gateway", "Properties": {
                                  "VersioningConfiguration": {"Status": "Enabled"}}}}}
    made = client.create_change_set(StackName="stuck", ChangeSetName="c", ChangeSetType="CREATE",
                                    TemplateBody=json.dumps(template))
    client.execute_change_set(ChangeSetName=made["Id"])
    assert client.describe_stacks(StackName="stuck")["Stacks"][0]["StackStatus"] == "ROLLBACK_FAILED"
    gateway = client.describe_stack_resource(StackName="stuck", LogicalResourceId="Gateway")[
        "StackResourceDetail"]["PhysicalResourceId"]
    client.delete_stack(StackName="stuck")
    assert client.describe_stacks(StackName="stuck")["Stacks"][0]["StackStatus"] == "DELETE_FAILED"
    monkeypatch.undo()
    client.delete_stack(StackName="stuck")
    ec2 = boto3.client("ec2", endpoint_url=inprocess_cloud, region_name="us-east-1",
                       aws_access_key_id="testing", aws_secret_access_key="testing")
    gateways = ec2.describe_internet_gateways()["InternetGateways"]
    assert gateway not in {g["InternetGatewayId"] for g in gateways}
    assert "stuck" not in {s["StackName"] for s in client.describe_stacks()["Stacks"]}
