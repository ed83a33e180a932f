"""An instance from a launch template, without booting (the stub mode): the template's parameters it does not
set itself are its own (AWS::EC2::Instance LaunchTemplate; EC2 User Guide, "Launch an instance from a launch
template": "parameters that you specify for the new instance override" the template's). moto's model ignored
LaunchTemplate and failed without ImageId (InternalFailure). Booted: tests/instances/test_launch_template.py.
"""

from __future__ import annotations

import base64

from tests.localcloud.lifecycle import deploy


def test_an_instance_takes_what_its_launch_template_gives_and_overrides_the_rest(cfn, cloud) -> None:
    template = {
        "Resources": {
            "Launch": {"Type": "AWS::EC2::LaunchTemplate", "Properties": {"LaunchTemplateData": {
                "ImageId": "ami-760aaa0f", "InstanceType": "t3.micro",
                "UserData": {"Fn::Base64": "#!/bin/sh\necho from-template\n"},
                "TagSpecifications": [{"ResourceType": "instance",
                                       "Tags": [{"Key": "Made", "Value": "by-template"}]}]}}},
            "Web": {"Type": "AWS::EC2::Instance", "Properties": {
                "InstanceType": "t3.small",
                "LaunchTemplate": {"LaunchTemplateId": {"Ref": "Launch"},
                                   "Version": {"Fn::GetAtt": ["Launch", "LatestVersionNumber"]}}}},
        },
        "Outputs": {"Web": {"Value": {"Ref": "Web"}}},
    }
    instance_id = deploy(cfn, "from-template", template)["Web"]
    ec2 = cloud.client("ec2")
    found = ec2.describe_instances(InstanceIds=[instance_id])["Reservations"][0]["Instances"][0]
    assert (found["ImageId"], found["InstanceType"]) == ("ami-760aaa0f", "t3.small")
    assert {"Key": "Made", "Value": "by-template"} in found["Tags"]
    user_data = ec2.describe_instance_attribute(InstanceId=instance_id, Attribute="userData")["UserData"]
    assert base64.b64decode(user_data["Value"]) == b"#!/bin/sh\necho from-template\n"
