"""Visitor for Compute: the EC2 instance, assembled after the software on it was visited.

Instance type from the host capability's num_cpus / mem_size, image from the `os` capability (an SSM
public parameter path resolved by CloudFormation at deploy time: no AWS call now, see `images`), disk
size as the root EBS volume, init configs as one config set, and a CreationPolicy with cfn-signal
so the stack completes only when the software is installed.
"""

from __future__ import annotations

import math
from typing import cast

from troposphere import Base64, Equals, GetAtt, If, Not, NoValue, Ref, Sub, Tags, ec2
from troposphere.cloudformation import (
    Authentication,
    AuthenticationBlock,
    Init,
    InitConfig,
    InitConfigSets,
    Metadata,
)
from troposphere.policies import CreationPolicy, ResourceSignal

from formwright.tosca.model import Node
from formwright.transform.cloudformation import iam, network
from formwright.transform.cloudformation.context import Build
from formwright.transform.cloudformation.images import Image, image_of
from formwright.transform.cloudformation.lifecycle import AUTH, runtime_config
from formwright.transform.cloudformation.sizes import gigabytes, instance_type, megabytes
from formwright.transform.cloudformation.visitors.software import literal

SIGNAL_TIMEOUT = "PT30M"
KEY_PARAMETER = "KeyName"
# Amazon Linux ships cfn-init in /opt/aws/bin; elsewhere the user data installs AWS's
# aws-cfn-bootstrap package (the documented tarball) into a virtual environment first.
BOOTSTRAP = """if [ ! -x /opt/aws/bin/cfn-init ]; then
  apt-get update -y && apt-get install -y python3-venv curl
  python3 -m venv /opt/aws/cfn
  /opt/aws/cfn/bin/pip install https://s3.amazonaws.com/cloudformation-examples/aws-cfn-bootstrap-py3-latest.tar.gz
  mkdir -p /opt/aws/bin && ln -sf /opt/aws/cfn/bin/cfn-* /opt/aws/bin/
fi
"""
USER_DATA = """#!/bin/bash -x
%(bootstrap)s/opt/aws/bin/cfn-init -v --stack ${AWS::StackName} --resource %(id)s --configsets default \
--region ${AWS::Region}
/opt/aws/bin/cfn-signal -e $? --stack ${AWS::StackName} --resource %(id)s --region ${AWS::Region}
"""
WINDOWS_USER_DATA = """<powershell>
cfn-init.exe -v --stack ${AWS::StackName} --resource %(id)s --configsets default --region ${AWS::Region}
cfn-signal.exe -e $LASTEXITCODE --stack ${AWS::StackName} --resource %(id)s --region ${AWS::Region}
</powershell>
"""


def _user_data(image: Image, instance_id: str) -> str:
    if image.family == "windows":
        return WINDOWS_USER_DATA % {"id": instance_id}
    return USER_DATA % {"id": instance_id, "bootstrap": BOOTSTRAP if image.family == "apt" else ""}


def key_name(build: Build) -> object:
    """`KeyName` of the instances: the optional key-pair parameter, left out when it is empty."""
    parameter = build.parameter(KEY_PARAMETER, Type="String", Default="",
                                Description="Name of an EC2 key pair for SSH to the instances (empty: none).")
    condition = f"Has{parameter}"
    if condition not in build.template.conditions:
        build.template.add_condition(condition, Not(Equals(Ref(parameter), "")))
    return If(condition, Ref(parameter), NoValue)


def _host_properties(build: Build, node: Node) -> tuple[str, int | None]:
    host = node.capabilities.get("host", {})
    cpus = literal(build, node, host.get("num_cpus"))
    memory = literal(build, node, host.get("mem_size"))
    disk = literal(build, node, host.get("disk_size"))
    # num_cpus is an integer property (tosca-parser checks it, inputs included): int() takes it as is
    kind = instance_type(
        int(cast("int | str", cpus)) if cpus else None,
        megabytes(memory, node.location) if memory else None,
        node.location,
    )
    size = max(8, math.ceil(gigabytes(disk, node.location))) if disk else None
    return kind, size


def _metadata(build: Build, node: Node) -> Metadata:
    configs = list(build.init_configs.get(node.name, []))
    if node.name in build.operation_hosts:
        configs.insert(0, ("FormwrightRuntime", runtime_config(build)))
    if not configs:
        return Metadata(Init(InitConfigSets(default=["Ready"]), Ready=InitConfig(commands={})))
    init = Init(InitConfigSets(default=[name for name, _ in configs]),
                **{name: InitConfig(**config) for name, config in configs})
    if node.name in build.instance_roles:
        auth = Authentication({AUTH: AuthenticationBlock(type="S3", roleName=Ref(iam.INSTANCE_ROLE),
                                                         buckets=[Ref(build.bucket())])})
        return Metadata(init, auth)
    return Metadata(init)


def assemble(build: Build, node: Node) -> None:
    """Emit the instance (and its security group) of Compute `node`."""
    instance_id = build.plan.instances[node.name]
    kind, disk = _host_properties(build, node)
    group = network.group_for(build, node.name, f"{node.name}: instance")
    os_image = image_of(node)
    if os_image.note:
        build.warn(os_image.note, node.location,
                   hint=f"override the {os_image.name} parameter at deploy time")
    image = build.parameter(
        os_image.name,
        Type="AWS::SSM::Parameter::Value<AWS::EC2::Image::Id>",
        Default=os_image.path,
        Description=f"Image of the {os_image.label} instances (an SSM parameter path).",
    )
    properties: dict = {
        "ImageId": Ref(image),
        "InstanceType": kind,
        "KeyName": key_name(build),
        "SecurityGroupIds": [GetAtt(group, "GroupId")],
        "UserData": Base64(Sub(_user_data(os_image, instance_id))),
        "Tags": Tags(Name=Sub("${AWS::StackName}-" + node.name)),
        "Metadata": _metadata(build, node),
        "CreationPolicy": CreationPolicy(ResourceSignal=ResourceSignal(Count=1, Timeout=SIGNAL_TIMEOUT)),
    }
    if instance_id in build.zones:  # beside a volume it shares with another instance
        properties["AvailabilityZone"] = build.zones[instance_id]
    if node.name in build.instance_roles:
        properties["IamInstanceProfile"] = Ref(iam.artifact_reader(build))
    if disk:
        properties["BlockDeviceMappings"] = [ec2.BlockDeviceMapping(
            DeviceName="/dev/xvda", Ebs=ec2.EbsBlockDevice(VolumeSize=disk, VolumeType="gp3"))]
    depends = sorted(build.depends_on.get(instance_id, ()))
    if depends:
        properties["DependsOn"] = depends
    build.template.add_resource(ec2.Instance(instance_id, **properties))
