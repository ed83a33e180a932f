"""Visitor for Compute: the EC2 instance, assembled after the software on it was visited.

Instance type from the host capability's num_cpus / mem_size, image from the `ImageId` parameter
(an SSM public parameter path resolved by CloudFormation at deploy time: no AWS call now), disk
size as the root EBS volume, init configs as one config set, and a CreationPolicy with cfn-signal
so the stack completes only when the software is installed.
"""

from __future__ import annotations

import math
from typing import cast

from troposphere import Base64, GetAtt, Ref, Sub, Tags, ec2
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
from formwright.transform.cloudformation.lifecycle import AUTH, runtime_config
from formwright.transform.cloudformation.sizes import gigabytes, instance_type, megabytes
from formwright.transform.cloudformation.visitors.software import literal

IMAGE_PARAMETER = "ImageId"
IMAGE_DEFAULT = "/aws/service/ami-amazon-linux-latest/al2023-ami-kernel-default-x86_64"
SIGNAL_TIMEOUT = "PT30M"
USER_DATA = """#!/bin/bash -x
/opt/aws/bin/cfn-init -v --stack ${AWS::StackName} --resource %(id)s --configsets default \
--region ${AWS::Region}
/opt/aws/bin/cfn-signal -e $? --stack ${AWS::StackName} --resource %(id)s --region ${AWS::Region}
"""


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
    image = build.parameter(
        IMAGE_PARAMETER,
        Type="AWS::SSM::Parameter::Value<AWS::EC2::Image::Id>",
        Default=IMAGE_DEFAULT,
        Description="Image of the instances (an SSM parameter path).",
    )
    properties: dict = {
        "ImageId": Ref(image),
        "InstanceType": kind,
        "SecurityGroupIds": [GetAtt(group, "GroupId")],
        "UserData": Base64(Sub(USER_DATA % {"id": instance_id})),
        "Tags": Tags(Name=Sub("${AWS::StackName}-" + node.name)),
        "Metadata": _metadata(build, node),
        "CreationPolicy": CreationPolicy(ResourceSignal=ResourceSignal(Count=1, Timeout=SIGNAL_TIMEOUT)),
    }
    if node.name in build.instance_roles:
        properties["IamInstanceProfile"] = Ref(iam.artifact_reader(build))
    if disk:
        properties["BlockDeviceMappings"] = [ec2.BlockDeviceMapping(
            DeviceName="/dev/xvda", Ebs=ec2.EbsBlockDevice(VolumeSize=disk, VolumeType="gp3"))]
    depends = sorted(build.depends_on.get(instance_id, ()))
    if depends:
        properties["DependsOn"] = depends
    build.template.add_resource(ec2.Instance(instance_id, **properties))
