"""An Auto Scaling group with its launch template, read back with Auto Scaling's own API (issue 30, item 3).

Pages (AWS CloudFormation Template Reference): AWS::AutoScaling::AutoScalingGroup (Ref: the group's name;
AutoScalingGroupName create-only, MinSize/MaxSize/DesiredCapacity/LaunchTemplate "No interruption"; Tags
with PropagateAtLaunch), AWS::EC2::LaunchTemplate (Fn::GetAtt LatestVersionNumber; a LaunchTemplateData
change makes a new version).
"""

from __future__ import annotations

from tests.localcloud.lifecycle import delete, deploy, drift, with_props

TEMPLATE = {
    "Resources": {
        "Vpc": {"Type": "AWS::EC2::VPC", "Properties": {"CidrBlock": "10.0.0.0/16"}},
        "Subnet": {
            "Type": "AWS::EC2::Subnet",
            "Properties": {"VpcId": {"Ref": "Vpc"}, "CidrBlock": "10.0.1.0/24"},
        },
        "Template": {
            "Type": "AWS::EC2::LaunchTemplate",
            "Properties": {"LaunchTemplateData": {"ImageId": "ami-12c6146b", "InstanceType": "t3.micro"}},
        },
        "Group": {
            "Type": "AWS::AutoScaling::AutoScalingGroup",
            "Properties": {
                "MinSize": "1",
                "MaxSize": "2",
                "VPCZoneIdentifier": [{"Ref": "Subnet"}],
                "LaunchTemplate": {
                    "LaunchTemplateId": {"Ref": "Template"},
                    "Version": {"Fn::GetAtt": ["Template", "LatestVersionNumber"]},
                },
                "Tags": [{"Key": "team", "Value": "web", "PropagateAtLaunch": True}],
            },
        },
    },
    "Outputs": {"Group": {"Value": {"Ref": "Group"}}, "Template": {"Value": {"Ref": "Template"}}},
}


def _group(autoscaling, name: str) -> dict:
    return autoscaling.describe_auto_scaling_groups(AutoScalingGroupNames=[name])["AutoScalingGroups"][0]


def test_an_auto_scaling_group_with_its_launch_template(cfn, cloud) -> None:
    autoscaling = cloud.client("autoscaling")
    out = deploy(cfn, "asg", TEMPLATE)
    assert out["Group"].startswith("asg-Group-")
    group = _group(autoscaling, out["Group"])
    assert (
        group["LaunchTemplate"]["LaunchTemplateId"] == out["Template"]
        and group["LaunchTemplate"]["Version"] == "1"
    )
    assert (group["MinSize"], group["MaxSize"], len(group["Instances"])) == (1, 2, 1)
    tags = {t["Key"]: t for t in group["Tags"]}
    assert (
        tags["team"]["PropagateAtLaunch"] is True
        and tags["aws:cloudformation:logical-id"]["Value"] == "Group"
    )
    assert drift(cfn, "asg", "Group") == ("IN_SYNC", [])

    # in place: sizes, and a new launch template version the group moves to
    resized = with_props(TEMPLATE, "Group", MinSize="2", MaxSize="4")
    resized["Resources"]["Template"]["Properties"]["LaunchTemplateData"]["InstanceType"] = "t3.small"
    assert deploy(cfn, "asg", resized)["Group"] == out["Group"]
    group = _group(autoscaling, out["Group"])
    assert (group["MinSize"], group["MaxSize"], group["LaunchTemplate"]["Version"]) == (2, 4, "2")

    # AutoScalingGroupName is create-only: a new group, the old one deleted in the clean-up
    named = with_props(resized, "Group", AutoScalingGroupName="web")
    assert deploy(cfn, "asg", named)["Group"] == "web"
    assert [
        g["AutoScalingGroupName"] for g in autoscaling.describe_auto_scaling_groups()["AutoScalingGroups"]
    ] == ["web"]

    autoscaling.update_auto_scaling_group(AutoScalingGroupName="web", MaxSize=6)
    assert drift(cfn, "asg", "Group") == ("MODIFIED", [("/MaxSize", "NOT_EQUAL")])
    delete(cfn, "asg")
    assert autoscaling.describe_auto_scaling_groups()["AutoScalingGroups"] == []
