"""A network ACL, its entries and a subnet's association made by a stack, read back with EC2's own API
(issue 30: the first blocker of AWS's VPC sample templates once the listed types ran).

Pages (AWS CloudFormation Template Reference): AWS::EC2::NetworkAcl (VpcId "Update requires: Replacement",
Ref the ACL id), AWS::EC2::NetworkAclEntry (NetworkAclId, RuleNumber, Egress "Replacement"; Protocol,
RuleAction, CidrBlock, PortRange "No interruption"), AWS::EC2::SubnetNetworkAclAssociation (Fn::GetAtt
AssociationId; a subnet deleted from it returns to its VPC's default ACL, "Network ACLs" in the Amazon VPC
User Guide).
"""

from __future__ import annotations

from tests.localcloud.lifecycle import delete, deploy, drift, with_props

TEMPLATE = {
    "Resources": {
        "Vpc": {"Type": "AWS::EC2::VPC", "Properties": {"CidrBlock": "10.0.0.0/16"}},
        "Subnet": {"Type": "AWS::EC2::Subnet",
                   "Properties": {"VpcId": {"Ref": "Vpc"}, "CidrBlock": "10.0.1.0/24"}},
        "Acl": {"Type": "AWS::EC2::NetworkAcl",
                "Properties": {"VpcId": {"Ref": "Vpc"}, "Tags": [{"Key": "Name", "Value": "public"}]}},
        "Inbound": {"Type": "AWS::EC2::NetworkAclEntry", "Properties": {
            "NetworkAclId": {"Ref": "Acl"}, "RuleNumber": "100", "Protocol": "6", "RuleAction": "allow",
            "Egress": "false", "CidrBlock": "0.0.0.0/0", "PortRange": {"From": "443", "To": "443"}}},
        "Association": {"Type": "AWS::EC2::SubnetNetworkAclAssociation",
                        "Properties": {"SubnetId": {"Ref": "Subnet"}, "NetworkAclId": {"Ref": "Acl"}}},
    },
    "Outputs": {"Acl": {"Value": {"Ref": "Acl"}}, "Subnet": {"Value": {"Ref": "Subnet"}},
                "AssociationId": {"Value": {"Fn::GetAtt": ["Association", "AssociationId"]}}},
}


def _acl_of(ec2, subnet: str) -> str:
    acls = ec2.describe_network_acls(Filters=[{"Name": "association.subnet-id", "Values": [subnet]}])
    return str(acls["NetworkAcls"][0]["NetworkAclId"])


def test_a_network_acl_with_an_entry_and_a_subnet_is_made_updated_drifted_and_deleted(cfn, cloud) -> None:
    ec2 = cloud.client("ec2")
    outputs = deploy(cfn, "acl", TEMPLATE)
    assert _acl_of(ec2, outputs["Subnet"]) == outputs["Acl"]
    acl = ec2.describe_network_acls(NetworkAclIds=[outputs["Acl"]])["NetworkAcls"][0]
    assert {t["Key"]: t["Value"] for t in acl["Tags"]}["Name"] == "public"
    assert [(e["RuleNumber"], e["RuleAction"], e["PortRange"]) for e in acl["Entries"]] == [
        (100, "allow", {"From": 443, "To": 443})]
    assert drift(cfn, "acl", "Inbound") == ("IN_SYNC", [])

    # RuleAction in place: the same rule number, now deny
    outputs = deploy(cfn, "acl", with_props(TEMPLATE, "Inbound", RuleAction="deny"))
    acl = ec2.describe_network_acls(NetworkAclIds=[outputs["Acl"]])["NetworkAcls"][0]
    assert [(e["RuleNumber"], e["RuleAction"]) for e in acl["Entries"]] == [(100, "deny")]

    ec2.delete_network_acl_entry(NetworkAclId=outputs["Acl"], RuleNumber=100, Egress=False)
    assert drift(cfn, "acl", "Inbound")[0] == "DELETED"
    ec2.create_network_acl_entry(NetworkAclId=outputs["Acl"], RuleNumber=100, Protocol="6",
                                 RuleAction="deny", Egress=False, CidrBlock="0.0.0.0/0",
                                 PortRange={"From": 443, "To": 443})

    delete(cfn, "acl")
    assert outputs["Acl"] not in {a["NetworkAclId"] for a in ec2.describe_network_acls()["NetworkAcls"]}
