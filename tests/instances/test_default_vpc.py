"""An instance without a subnet boots in its zone's default subnet, on the instance network, and answers.

EC2 puts an instance launched without a subnet into the default subnet of its Availability Zone, with an
address of that subnet ("Default VPCs", Amazon VPC User Guide). The local cloud's default VPC is the instance
network 10.213.0.0/16 (AWS's is 172.31.0.0/16; docs/local-cloud.md says why), so that address is one the
host reaches: what every TOSCA artifact and most sample templates need, since they name no subnet.
"""

from __future__ import annotations

import ipaddress
from pathlib import Path

import pytest

from tests.instances.conftest import LINUX_AMI, get, image_or_skip, write_project

pytestmark = [pytest.mark.slow, pytest.mark.cloud]

USER_DATA = """#!/bin/sh
mkdir -p /srv/www && echo "default subnet" > /srv/www/index.html
cd /srv/www && nohup python3 -m http.server 8080 --bind 0.0.0.0 >/var/log/web.log 2>&1 &
"""


def test_an_instance_without_a_subnet_gets_a_default_subnet_address_the_host_reaches(
        tmp_path: Path, run_cli, cloud) -> None:
    image_or_skip()
    template = {"Resources": {"Web": {"Type": "AWS::EC2::Instance", "Properties": {
        "ImageId": LINUX_AMI, "InstanceType": "t3.micro", "UserData": {"Fn::Base64": USER_DATA}}}},
        "Outputs": {"Address": {"Value": {"Fn::GetAtt": ["Web", "PrivateIp"]}}}}
    deployed = run_cli("deploy", str(write_project(tmp_path, "nosubnet", template)), "-y", "--output", "json")
    assert deployed.code == 0, deployed.err + deployed.out
    ec2 = cloud.client("ec2")
    found = ec2.describe_instances()["Reservations"][0]["Instances"][0]
    default_vpc = ec2.describe_vpcs(Filters=[{"Name": "is-default", "Values": ["true"]}])["Vpcs"][0]
    assert default_vpc["CidrBlock"] == "10.213.0.0/16"
    subnet = ec2.describe_subnets(SubnetIds=[found["SubnetId"]])["Subnets"][0]
    assert subnet["DefaultForAz"] and subnet["AvailabilityZone"] == found["Placement"]["AvailabilityZone"]
    address = found["PrivateIpAddress"]
    assert ipaddress.ip_address(address) in ipaddress.ip_network(subnet["CidrBlock"])
    assert found["VpcId"] == default_vpc["VpcId"]
    assert get(f"http://{address}:8080/index.html") == "default subnet\n"
    deleted = run_cli("delete", str(tmp_path), "-y", "--output", "json")
    assert deleted.code == 0, deleted.err + deleted.out
