"""An instance from a launch template boots with the template's UserData (through the CLI; slow).

AWS::EC2::Instance LaunchTemplate (LaunchTemplateId or LaunchTemplateName, and Version): the instance gets
the template version's LaunchTemplateData, and "any parameters that you specify for the new instance
override the corresponding parameters in the launch template" (EC2 User Guide, "Launch an instance from a
launch template"). Here the template gives the image, type and UserData; the instance its subnet, address
and a type of its own.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.instances.conftest import (
    LINUX_AMI,
    free_subnet,
    image_or_skip,
    instance_template,
    processes_in,
    wait_for,
    write_project,
)

pytestmark = [pytest.mark.slow, pytest.mark.cloud]

USER_DATA = "#!/bin/sh\necho \"from the launch template on $(hostname)\" > /root/marker\n"


def test_an_instance_of_a_launch_template_boots_with_its_user_data(tmp_path: Path, run_cli, cloud) -> None:
    image_or_skip()
    third = free_subnet()
    address = f"10.213.{third}.17"
    template = instance_template(f"10.213.{third}.0/24", address, "unused")
    web = template["Resources"]["Web"]["Properties"]
    for key in ("ImageId", "UserData"):
        del web[key]
    web["InstanceType"] = "t3.small"  # the instance's own type wins over the template's
    web["LaunchTemplate"] = {"LaunchTemplateId": {"Ref": "Launch"},
                             "Version": {"Fn::GetAtt": ["Launch", "LatestVersionNumber"]}}
    template["Resources"]["Launch"] = {"Type": "AWS::EC2::LaunchTemplate", "Properties": {
        "LaunchTemplateData": {"ImageId": LINUX_AMI, "InstanceType": "t3.micro",
                               "UserData": {"Fn::Base64": USER_DATA}}}}
    write_project(tmp_path, "from-template", template)
    deployed = run_cli("deploy", str(tmp_path), "-y")
    assert deployed.code == 0, deployed.err + deployed.out
    try:
        found = cloud.client("ec2").describe_instances()["Reservations"][0]["Instances"][0]
        assert (found["ImageId"], found["InstanceType"], found["PrivateIpAddress"]) == \
            (LINUX_AMI, "t3.small", address)
        root = Path(os.environ["FORMWRIGHT_HOME"]) / "instances" / found["InstanceId"] / "root"
        hostname = "ip-" + address.replace(".", "-")
        assert wait_for(root / "root/marker") == f"from the launch template on {hostname}\n"
        assert processes_in(root)
    finally:
        deleted = run_cli("delete", str(tmp_path), "-y")
    assert deleted.code == 0, deleted.err
    assert not root.exists()
