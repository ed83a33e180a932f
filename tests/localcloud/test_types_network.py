"""An Elastic IP association made by a stack, read back with EC2's own API (issue 30, item 3).

Page (AWS CloudFormation Template Reference): AWS::EC2::EIPAssociation — AllocationId, EIP, InstanceId,
NetworkInterfaceId, PrivateIpAddress all "Update requires: Replacement"; Fn::GetAtt Id. Issue 30 item 4: a
stubbed EIPAssociation broke every later DescribeInstances; a modelled one leaves EC2 answering.
"""

from __future__ import annotations

import re

from tests.localcloud.lifecycle import delete, deploy, drift, with_props

TEMPLATE = {
    "Resources": {
        "Vpc": {"Type": "AWS::EC2::VPC", "Properties": {"CidrBlock": "10.0.0.0/16"}},
        "Subnet": {
            "Type": "AWS::EC2::Subnet",
            "Properties": {"VpcId": {"Ref": "Vpc"}, "CidrBlock": "10.0.1.0/24"},
        },
        "First": {
            "Type": "AWS::EC2::Instance",
            "Properties": {
                "ImageId": "ami-12c6146b",
                "InstanceType": "t3.micro",
                "SubnetId": {"Ref": "Subnet"},
            },
        },
        "Second": {
            "Type": "AWS::EC2::Instance",
            "Properties": {
                "ImageId": "ami-12c6146b",
                "InstanceType": "t3.micro",
                "SubnetId": {"Ref": "Subnet"},
            },
        },
        "Address": {"Type": "AWS::EC2::EIP", "Properties": {"Domain": "vpc"}},
        "Association": {
            "Type": "AWS::EC2::EIPAssociation",
            "Properties": {
                "AllocationId": {"Fn::GetAtt": ["Address", "AllocationId"]},
                "InstanceId": {"Ref": "First"},
            },
        },
    },
    "Outputs": {
        "Association": {"Value": {"Ref": "Association"}},
        "Id": {"Value": {"Fn::GetAtt": ["Association", "Id"]}},
        "First": {"Value": {"Ref": "First"}},
        "Second": {"Value": {"Ref": "Second"}},
        "Ip": {"Value": {"Ref": "Address"}},
    },
}


def _address(ec2, ip: str) -> dict:
    return ec2.describe_addresses(PublicIps=[ip])["Addresses"][0]


def test_an_elastic_ip_is_associated_moved_and_released(cfn, cloud) -> None:
    ec2 = cloud.client("ec2")
    out = deploy(cfn, "eip", TEMPLATE)
    assert out["Association"] == out["Id"] and re.fullmatch(r"eipassoc-\w+", out["Association"])
    address = _address(ec2, out["Ip"])
    assert (address["InstanceId"], address["AssociationId"]) == (out["First"], out["Association"])
    assert drift(cfn, "eip", "Association") == ("IN_SYNC", [])

    moved = with_props(TEMPLATE, "Association", InstanceId={"Ref": "Second"})  # create-only: replaced
    again = deploy(cfn, "eip", moved)
    assert again["Association"] != out["Association"]
    address = _address(ec2, out["Ip"])
    assert (address["InstanceId"], address["AssociationId"]) == (out["Second"], again["Association"])
    assert len(ec2.describe_instances()["Reservations"]) == 2  # EC2 still answers (issue 30, item 4)

    ec2.disassociate_address(AssociationId=again["Association"])
    assert drift(cfn, "eip", "Association")[0] == "DELETED"
    ec2.associate_address(AllocationId=address["AllocationId"], InstanceId=out["First"])  # made by hand
    delete(cfn, "eip")
    # the association the stack no longer holds is not its to remove (the address itself, an AWS::EC2::EIP, is
    # moto's own model: whether its delete releases it is issue 30 item 0's read-back after delete)
    assert [a.get("InstanceId") for a in ec2.describe_addresses()["Addresses"]] in ([out["First"]], [])
