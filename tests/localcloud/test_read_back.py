"""No quiet lie on create or delete (issue 30, item 0): what a template sets is read back from the
service after create, and a delete reads back that each resource is gone.

AWS::S3::Bucket (VersioningConfiguration, PublicAccessBlockConfiguration, NotificationConfiguration,
ReplicationConfiguration), AWS::IAM::Role ManagedPolicyArns and AWS::EC2::SubnetRouteTableAssociation
are applied as the CloudFormation User Guide's resource pages describe them; a network's route tables,
routes, gateways, Elastic IPs, NAT gateways and peering connections are deleted with their stack.
"""

from __future__ import annotations

import json

import boto3
from botocore.config import Config

NETWORK = {
    "Vpc": {"Type": "AWS::EC2::VPC", "Properties": {"CidrBlock": "10.0.0.0/16"}},
    "PeerVpc": {"Type": "AWS::EC2::VPC", "Properties": {"CidrBlock": "10.1.0.0/16"}},
    "Peering": {"Type": "AWS::EC2::VPCPeeringConnection",
                "Properties": {"VpcId": {"Ref": "Vpc"}, "PeerVpcId": {"Ref": "PeerVpc"}}},
    "Gateway": {"Type": "AWS::EC2::InternetGateway"},
    "Attachment": {"Type": "AWS::EC2::VPCGatewayAttachment",
                   "Properties": {"VpcId": {"Ref": "Vpc"}, "InternetGatewayId": {"Ref": "Gateway"}}},
    "Table": {"Type": "AWS::EC2::RouteTable", "Properties": {"VpcId": {"Ref": "Vpc"}}},
    "Default": {"Type": "AWS::EC2::Route", "DependsOn": "Attachment",
                "Properties": {"RouteTableId": {"Ref": "Table"}, "DestinationCidrBlock": "0.0.0.0/0",
                               "GatewayId": {"Ref": "Gateway"}}},
    "Subnet": {"Type": "AWS::EC2::Subnet",
               "Properties": {"VpcId": {"Ref": "Vpc"}, "CidrBlock": "10.0.1.0/24"}},
    "Association": {"Type": "AWS::EC2::SubnetRouteTableAssociation",
                    "Properties": {"SubnetId": {"Ref": "Subnet"}, "RouteTableId": {"Ref": "Table"}}},
    "Address": {"Type": "AWS::EC2::EIP", "Properties": {"Domain": "vpc"}},
    "Nat": {"Type": "AWS::EC2::NatGateway",
            "Properties": {"SubnetId": {"Ref": "Subnet"},
                           "AllocationId": {"Fn::GetAtt": ["Address", "AllocationId"]}}},
}
TRUST = {"Version": "2012-10-17", "Statement": [
    {"Effect": "Allow", "Principal": {"Service": "s3.amazonaws.com"}, "Action": "sts:AssumeRole"}]}
STORAGE = {
    "Events": {"Type": "AWS::SQS::Queue"},
    "Replica": {"Type": "AWS::S3::Bucket", "Properties": {"VersioningConfiguration": {"Status": "Enabled"}}},
    "Role": {"Type": "AWS::IAM::Role", "Properties": {
        "AssumeRolePolicyDocument": TRUST,
        "ManagedPolicyArns": ["arn:aws:iam::aws:policy/AmazonS3ReadOnlyAccess"]}},
    "Bucket": {"Type": "AWS::S3::Bucket", "Properties": {
        "VersioningConfiguration": {"Status": "Enabled"},
        "PublicAccessBlockConfiguration": {"BlockPublicAcls": True, "BlockPublicPolicy": True,
                                           "IgnorePublicAcls": True, "RestrictPublicBuckets": True},
        "NotificationConfiguration": {"QueueConfigurations": [
            {"Event": "s3:ObjectCreated:*", "Queue": {"Fn::GetAtt": ["Events", "Arn"]}}]},
        "ReplicationConfiguration": {"Role": {"Fn::GetAtt": ["Role", "Arn"]}, "Rules": [
            {"Id": "all", "Status": "Enabled", "Prefix": "",
             "Destination": {"Bucket": {"Fn::Sub": "arn:aws:s3:::${Replica}"}}}]}}},
}


def _physical(cfn, stack: str) -> dict[str, str]:
    return {r["LogicalResourceId"]: r["PhysicalResourceId"]
            for r in cfn.client.describe_stack_resources(StackName=stack)["StackResources"]}


def test_a_buckets_configuration_and_a_roles_managed_policies_are_applied(cfn, cloud) -> None:
    # AWS::S3::Bucket and AWS::IAM::Role, "Properties" (AWS CloudFormation User Guide)
    deployed = cfn.deploy("storage", {"Resources": STORAGE}, caps=["CAPABILITY_IAM"])
    assert deployed["StackStatus"] == "CREATE_COMPLETE"
    made = _physical(cfn, "storage")
    s3 = cloud.client("s3")
    assert s3.get_bucket_versioning(Bucket=made["Bucket"])["Status"] == "Enabled"
    assert s3.get_public_access_block(Bucket=made["Bucket"])["PublicAccessBlockConfiguration"] == {
        "BlockPublicAcls": True, "IgnorePublicAcls": True, "BlockPublicPolicy": True,
        "RestrictPublicBuckets": True}
    queues = s3.get_bucket_notification_configuration(Bucket=made["Bucket"])["QueueConfigurations"]
    assert [(q["Events"], q["QueueArn"].rsplit(":", 1)[-1]) for q in queues] == [
        (["s3:ObjectCreated:*"], made["Events"].rsplit("/", 1)[-1])]
    rules = s3.get_bucket_replication(Bucket=made["Bucket"])["ReplicationConfiguration"]["Rules"]
    assert [(r["ID"], r["Destination"]["Bucket"]) for r in rules] == [
        ("all", f"arn:aws:s3:::{made['Replica']}")]
    attached = cloud.client("iam").list_attached_role_policies(RoleName=made["Role"])["AttachedPolicies"]
    assert [p["PolicyArn"] for p in attached] == ["arn:aws:iam::aws:policy/AmazonS3ReadOnlyAccess"]


def test_a_network_is_made_and_deleted_whole(cfn, cloud) -> None:
    # AWS::EC2::SubnetRouteTableAssociation, "Return values": Ref gives the association id
    assert cfn.deploy("net", {"Resources": NETWORK})["StackStatus"] == "CREATE_COMPLETE"
    made = _physical(cfn, "net")
    ec2 = cloud.client("ec2")
    table = ec2.describe_route_tables(RouteTableIds=[made["Table"]])["RouteTables"][0]
    assert [(a["RouteTableAssociationId"], a["SubnetId"]) for a in table["Associations"]] == [
        (made["Association"], made["Subnet"])]
    cfn.client.delete_stack(StackName="net")
    assert not cfn.exists("net")
    assert ec2.describe_vpcs(Filters=[{"Name": "is-default", "Values": ["false"]}])["Vpcs"] == []
    assert ec2.describe_internet_gateways()["InternetGateways"] == []
    assert ec2.describe_addresses()["Addresses"] == []
    assert {n["State"] for n in ec2.describe_nat_gateways()["NatGateways"]} <= {"deleted"}
    assert {p["Status"]["Code"] for p in ec2.describe_vpc_peering_connections()["VpcPeeringConnections"]} <= {
        "deleted"}
    assert [t for t in ec2.describe_route_tables()["RouteTables"] if t["VpcId"] == made["Vpc"]] == []


def test_a_resource_left_by_its_delete_fails_the_delete_naming_it(inprocess_cloud, monkeypatch) -> None:
    # "DELETE_FAILED": a resource the delete did not remove is named, never a quiet DELETE_COMPLETE
    from formwright.cloud.emulator import completions

    client = _client(inprocess_cloud)
    _deploy(client, "left", {"Gateway": {"Type": "AWS::EC2::InternetGateway"}})
    monkeypatch.setitem(completions.OWN_DELETE, "AWS::EC2::InternetGateway", lambda obj, backend: None)
    client.delete_stack(StackName="left")
    stack = client.describe_stacks(StackName="left")["Stacks"][0]
    assert stack["StackStatus"] == "DELETE_FAILED"
    failed = [e for e in client.describe_stack_events(StackName="left")["StackEvents"]
              if e["ResourceStatus"] == "DELETE_FAILED" and e["LogicalResourceId"] == "Gateway"]
    assert "left it in place (read back after delete)" in failed[0]["ResourceStatusReason"]


def test_a_property_moto_leaves_out_fails_the_create_naming_it(inprocess_cloud, monkeypatch) -> None:
    # stands in for a property moto's model does not apply: the bucket's completion is switched off
    from formwright.cloud.emulator import resources

    monkeypatch.setitem(resources.COMPLETE_CREATE, "AWS::S3::Bucket", lambda *args: None)
    client = _client(inprocess_cloud)
    _deploy(client, "unapplied", {"Bucket": {"Type": "AWS::S3::Bucket", "Properties": {
        "VersioningConfiguration": {"Status": "Enabled"}}}})
    assert client.describe_stacks(StackName="unapplied")["Stacks"][0]["StackStatus"] == "ROLLBACK_COMPLETE"
    reasons = [e.get("ResourceStatusReason", "") for e in client.describe_stack_events(StackName="unapplied")[
        "StackEvents"] if e["ResourceStatus"] == "CREATE_FAILED"]
    assert reasons == ["the local cloud cannot create AWS::S3::Bucket as the template sets it: read back "
                       "after create, VersioningConfiguration not applied"]


def test_a_type_without_a_reader_is_said_not_verified_once(cfn) -> None:
    cfn.deploy("unread", {"Resources": {"One": {"Type": "AWS::ECR::Repository"},
                                        "Two": {"Type": "AWS::ECR::Repository"}}})
    done = [reason for logical, status, reason in cfn.events("unread") if status == "CREATE_COMPLETE"
            and logical in ("One", "Two")]
    assert sorted(done) == ["", "Not verified: the local cloud cannot read AWS::ECR::Repository back, so "
                                "what it applied is moto's word (docs/local-cloud.md)"]


def _client(endpoint: str):
    return boto3.client("cloudformation", endpoint_url=endpoint, region_name="us-east-1",
                        aws_access_key_id="testing", aws_secret_access_key="testing",
                        config=Config(retries={"total_max_attempts": 1}))


def _deploy(client, name: str, resources: dict) -> None:
    made = client.create_change_set(StackName=name, ChangeSetName="c", ChangeSetType="CREATE",
                                    TemplateBody=json.dumps({"Resources": resources}))
    client.execute_change_set(ChangeSetName=made["Id"])

