"""Visitor for BlockStorage: an EBS volume attached (AttachesTo) to an instance."""

from __future__ import annotations

import math

from troposphere import GetAtt, Ref, ec2

from formwright.errors import InputError
from formwright.tosca.functions import Context
from formwright.tosca.model import Node
from formwright.transform.cloudformation import kinds
from formwright.transform.cloudformation.context import Build
from formwright.transform.cloudformation.sizes import gigabytes
from formwright.transform.cloudformation.values import Renderer, expression
from formwright.transform.cloudformation.visitors.software import literal

DEFAULT_DEVICE = "/dev/sdf"


def visit(build: Build, node: Node) -> None:
    """Emit the volume (in the instance's zone) and one attachment per AttachesTo."""
    attachments = build.model.sources_of(node, kinds.ATTACHES_TO)
    instances = [r for r in attachments if r.source in build.plan.instances]
    if not instances:
        loc = node.location
        raise InputError(f"block storage '{node.name}' is not attached to a Compute",
                         file=loc.file if loc else None, line=loc.line if loc else None)
    first = build.plan.instances[instances[0].source]
    size = gigabytes(literal(build, node, node.properties.get("size")) or "1 GB", node.location)
    volume = build.plan.volumes[node.name]
    build.template.add_resource(ec2.Volume(volume, Size=max(1, math.ceil(size)), VolumeType="gp3",
                                           AvailabilityZone=GetAtt(first, "AvailabilityZone"),
                                           DeletionPolicy="Snapshot", UpdateReplacePolicy="Snapshot"))
    for rel in instances:
        raw = rel.properties.get("device") or rel.properties.get("location") or DEFAULT_DEVICE
        source = build.model.nodes[rel.source]
        device = Renderer(build).value(raw, Context(source, source, node, rel.location))
        build.template.add_resource(ec2.VolumeAttachment(
            build.plan.namer.name(node.name, "Attachment"), InstanceId=Ref(build.plan.instances[rel.source]),
            VolumeId=Ref(volume), Device=expression(Renderer.text(device))))
