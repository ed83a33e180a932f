"""Visitor for BlockStorage: an EBS volume attached (AttachesTo) to an instance.

The attachment's device is the relationship's `device`, else its `location` (heat-translator's examples put
the device there, `/dev/vdc`; the spec means a mount point), when it is a name EC2 accepts for a volume
(`/dev/sd[b-z]`, `/dev/xvd[b-z]`). Any other name would fail the attachment on AWS: OpenStack's `/dev/vdX`
keeps its letter as `/dev/sdX`, anything else gets the next free one of EC2's recommended `/dev/sd[f-p]`,
with a warning. No two volumes of an instance share a device.

A volume attached to several instances is what EBS calls Multi-Attach: only io1/io2 volumes (of at least
4 GiB, with provisioned IOPS) in the instances' zone, so the other instances are placed in the first one's
zone; a warning says so, and that an ordinary file system must not be mounted on two instances at once.
"""

from __future__ import annotations

import math
import re
from typing import Any

from troposphere import GetAtt, Ref, ec2

from formwright.errors import InputError
from formwright.tosca.functions import Context, InputRef
from formwright.tosca.model import Node, Relationship
from formwright.transform.cloudformation import kinds
from formwright.transform.cloudformation.context import Build
from formwright.transform.cloudformation.sizes import gigabytes
from formwright.transform.cloudformation.values import Renderer, expression
from formwright.transform.cloudformation.visitors.software import literal

_EC2_DEVICE = re.compile(r"^/dev/(?:sd|xvd)([b-z])$")
_OTHER_DEVICE = re.compile(r"^/dev/(?:vd|hd)([b-z])$")  # virtio / IDE names of OpenStack's guests
RECOMMENDED = "fghijklmnop"  # /dev/sd[f-p], EC2's recommended names for EBS volumes
MULTI_ATTACH = {"VolumeType": "io2", "Iops": 100, "MultiAttachEnabled": True}  # io2's least IOPS
MULTI_ATTACH_MIN_GIB = 4  # io1/io2 volumes are 4 GiB at least


def _next_free(used: set[str], node: Node) -> str:
    letter = next((c for c in RECOMMENDED if c not in used), None)
    if letter is None:
        loc = node.location
        raise InputError(f"block storage '{node.name}': its instance has no free device /dev/sd[f-p] left",
                         file=loc.file if loc else None, line=loc.line if loc else None)
    return letter


def device(build: Build, node: Node, rel: Relationship) -> Any:
    """The `Device` of the attachment of `node` by `rel` (see the module doc)."""
    used = build.devices.setdefault(build.plan.instances[rel.source], set())
    raw = rel.properties.get("device") or rel.properties.get("location")
    source = build.model.nodes[rel.source]
    ctx = Context(source, source, node, rel.location)
    resolved = build.resolver.resolve(raw, ctx) if raw is not None else None
    known = resolved.value if isinstance(resolved, InputRef) else resolved
    if raw is not None and not isinstance(known, str):
        return expression(Renderer.text(Renderer(build).value(raw, ctx)))  # known only at deploy time
    match = _EC2_DEVICE.match(known or "")
    if match and match.group(1) not in used:
        used.add(match.group(1))
        return expression(Renderer.text(Renderer(build).value(raw, ctx)))  # an input stays a parameter
    other = _OTHER_DEVICE.match(known or "")
    letter = other.group(1) if other and other.group(1) not in used else _next_free(used, node)
    used.add(letter)
    if known is not None:
        what = ("is taken by another volume of the instance" if match
                else "is not a device name EC2 accepts for a volume" if known.startswith("/dev/")
                else "is a mount point, not a device: the volume is not mounted there")
        build.warn(f"attachment of '{node.name}' to '{rel.source}': '{known}' {what}; attached as "
                   f"/dev/sd{letter}", rel.location,
                   hint="give the AttachesTo relationship a `device` such as /dev/sdf")
    return f"/dev/sd{letter}"


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
    kind: dict[str, Any] = {"Size": max(1, math.ceil(size)), "VolumeType": "gp3"}
    sharing = list(dict.fromkeys(r.source for r in instances))
    if len(sharing) > 1:
        kind = {"Size": max(MULTI_ATTACH_MIN_GIB, math.ceil(size)), **MULTI_ATTACH}
        for other in sharing[1:]:
            build.zones[build.plan.instances[other]] = GetAtt(first, "AvailabilityZone")
        build.warn(f"block storage '{node.name}' is attached to {len(sharing)} Computes "
                   f"({', '.join(sharing)}): an io2 volume with EBS Multi-Attach, the instances in one zone",
                   node.location, hint="an ordinary file system (ext4, xfs) must not be mounted on two "
                                       "instances at once")
    build.template.add_resource(ec2.Volume(volume, **kind, AvailabilityZone=GetAtt(first, "AvailabilityZone"),
                                           DeletionPolicy="Snapshot", UpdateReplacePolicy="Snapshot"))
    for rel in instances:
        build.template.add_resource(ec2.VolumeAttachment(
            build.plan.namer.name(node.name, "Attachment"), InstanceId=Ref(build.plan.instances[rel.source]),
            VolumeId=Ref(volume), Device=device(build, node, rel)))
