"""What a local instance cannot be fails the resource with a named reason (through the CLI; slow).

Which image an ImageId is comes from the local cloud's image catalog (DescribeImages: `Platform` windows,
`Architecture`), or from the name of the public image parameter it was resolved from; an instance type's
processors and accelerators from EC2's list of instance types (DescribeInstanceTypes' ProcessorInfo
SupportedArchitectures, GpuInfo, ...). cfn-init installs `yum` packages with yum and `rpm` ones with rpm
(AWS::CloudFormation::Init, "packages"): neither exists on Debian, so names without a Debian package are
refused before the instance boots.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.instances.conftest import image_or_skip, instance_template, write_project

pytestmark = [pytest.mark.slow, pytest.mark.cloud]

WINDOWS_AMI = "ami-12c6146b"  # moto's catalog: Windows_Server-2008-R2_SP1-English-64Bit-Base
ARM64_AMI = "ami-0e9271c829888680e"  # moto's catalog: al2022-ami-2022.0.20220728.1-kernel-5.15-arm64
WINDOWS_PARAMETER = "/aws/service/ami-windows-latest/Windows_Server-2022-English-Full-Base"
NO_SUCH_PACKAGE = "amazon-ssm-agent-formwright-test"

CASES = {
    "windows-ami": ({"ImageId": WINDOWS_AMI}, None,
                    f"ImageId {WINDOWS_AMI} (Windows_Server-2008-R2_SP1-English-64Bit-Base-2017.10.13) is a "
                    "Windows image"),
    "windows-parameter": ({"ImageId": {"Ref": "Image"}}, None,
                          f"(the public image parameter {WINDOWS_PARAMETER}) is a Windows image"),
    "arm64-ami": ({"ImageId": ARM64_AMI}, None,
                  "is an arm64 image and this host's processor is x86_64"),
    "arm64-type": ({"InstanceType": "t4g.micro"}, None,
                   "InstanceType t4g.micro has arm64 processors and this host's is x86_64"),
    "gpu-type": ({"InstanceType": "g4dn.xlarge"}, None, "InstanceType g4dn.xlarge has GPUs"),
    "unknown-type": ({"InstanceType": "t9.huge"}, None,
                     "InstanceType t9.huge is not an EC2 instance type the local cloud knows"),
    "yum-only": ({}, {"packages": {"yum": {"httpd": [], NO_SUCH_PACKAGE: []}}},
                 f"config config packages: yum packages {NO_SUCH_PACKAGE} have no Debian package"),
    "rpm": ({}, {"packages": {"rpm": {"epel": "https://example.com/epel.rpm"}}},
            "config config packages: rpm packages (epel) cannot install on a local instance"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_what_a_local_instance_cannot_be_fails_it_by_name(case: str, tmp_path: Path, run_cli, cloud) -> None:
    image_or_skip()
    props, init, reason = CASES[case]
    template = instance_template("10.213.11.0/24", "10.213.11.11", "#!/bin/sh\necho never\n", **props)
    if case == "windows-parameter":
        template["Parameters"] = {"Image": {"Type": "AWS::SSM::Parameter::Value<AWS::EC2::Image::Id>",
                                            "Default": WINDOWS_PARAMETER}}
    if init:
        template["Resources"]["Web"]["Metadata"] = {"AWS::CloudFormation::Init": {"config": init}}
    write_project(tmp_path, f"no-{case}", template)
    deployed = run_cli("deploy", str(tmp_path), "-y")
    assert deployed.code != 0, deployed.out
    events = cloud.client("cloudformation").describe_stack_events(StackName=f"no-{case}-web")["StackEvents"]
    failed = [e["ResourceStatusReason"] for e in events
              if e["ResourceStatus"] == "CREATE_FAILED" and e["LogicalResourceId"] == "Web"]
    assert failed and "The local cloud cannot boot instance i-" in failed[0]
    assert reason in failed[0], failed[0]
    said = " ".join((deployed.out + deployed.err).split())
    assert reason in said  # the deploy shows the reason too
