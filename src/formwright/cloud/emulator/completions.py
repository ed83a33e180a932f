"""What moto's CloudFormation models leave out on create and delete, done through its service backends.

Found by reading resources back after a create or a delete (issue 30): moto's `AWS::S3::Bucket` sets
encryption and tags only, its `AWS::IAM::Role` attaches no `ManagedPolicyArns`, its
`AWS::EC2::SubnetRouteTableAssociation` is kept apart from the route table (DescribeRouteTables never
shows it), and its delete of route tables, routes, gateways, gateway attachments, Elastic IPs, NAT
gateways and peering connections does nothing. Each is done here as the service's API does it.
"""

from __future__ import annotations

import functools
import json
from typing import Any

from formwright.cloud.emulator import completions_services as services
from formwright.cloud.emulator import lambda_grants
from formwright.cloud.emulator.drift_readers import ec2_backend


def _flag(value: Any) -> bool:
    return str(value).lower() == "true"


def _replication(cfn: dict[str, Any]) -> dict[str, Any]:
    """AWS::S3::Bucket ReplicationConfiguration as PutBucketReplication's input."""
    rules = []
    for rule in cfn.get("Rules") or []:
        made = {k: v for k, v in rule.items() if k != "Id"}
        if "Id" in rule:
            made["ID"] = rule["Id"]
        rules.append(made)
    return {"Role": cfn.get("Role"), "Rule": rules}


def bucket_created(obj: Any, props: dict[str, Any], account: str, region: str) -> None:
    """Versioning, the public access block, notifications and replication of a new bucket."""
    from moto.s3.models import s3_backends
    from moto.utilities.utils import get_partition

    backend = s3_backends[account][get_partition(region)]
    versioning = (props.get("VersioningConfiguration") or {}).get("Status")
    if versioning:
        backend.put_bucket_versioning(obj.name, versioning)
    block = props.get("PublicAccessBlockConfiguration")
    if block:
        backend.put_public_access_block(obj.name, {k: _flag(v) for k, v in block.items()})
    # NotificationConfiguration: applied by moto's bucket model as patched in lambda_runtime/install.py
    if props.get("ReplicationConfiguration"):
        backend.put_bucket_replication(obj.name, _replication(props["ReplicationConfiguration"]))


def role_created(obj: Any, props: dict[str, Any], account: str, region: str) -> None:
    """The managed policies of a new role."""
    role_policies(obj, props, set(props), account, region)


def role_policies(obj: Any, props: dict[str, Any], names: set[str], account: str, region: str) -> None:
    """A role's attached managed policies made those `ManagedPolicyArns` lists (moto's model neither
    attaches them on create nor changes them on update)."""
    from moto.iam.models import iam_backends
    from moto.utilities.utils import get_partition

    if "ManagedPolicyArns" not in names:
        return
    backend = iam_backends[account][get_partition(region)]
    wanted = set(props.get("ManagedPolicyArns") or [])
    for arn in sorted(set(obj.managed_policies) - wanted):
        backend.detach_role_policy(arn, obj.name)
    for arn in sorted(wanted - set(obj.managed_policies)):
        aws_managed(backend, arn)
        backend.attach_role_policy(arn, obj.name)


@functools.cache
def _aws_policies() -> dict[str, Any]:
    from moto.iam.aws_managed_policies import aws_managed_policies_data

    return dict(json.loads(aws_managed_policies_data))


def aws_managed(backend: Any, arn: str) -> None:
    """An AWS managed policy (`arn:aws:iam::aws:policy/...`) made known to moto's IAM on first use: moto
    loads none of them unless told to load all (MOTO_IAM_LOAD_MANAGED_POLICIES), which costs every
    start and snapshot; an ARN AWS does not define stays unknown (NotFound, as on AWS)."""
    from moto.iam.models import AWSManagedPolicy

    name = arn.rsplit("/", 1)[-1]
    if arn in backend.managed_policies or ":iam::aws:policy/" not in arn or name not in _aws_policies():
        return
    policy = AWSManagedPolicy.from_data(name, backend.account_id, backend.region_name, _aws_policies()[name])
    if policy.arn == arn:
        backend.managed_policies[arn] = policy


class RouteTableAssociation:
    """An `AWS::EC2::SubnetRouteTableAssociation` made on the route table itself, under its association id
    (`rtbassoc-...`, the resource's Ref), as AssociateRouteTable makes it."""

    def __init__(self, association_id: str, route_table_id: str, subnet_id: str, logical: str) -> None:
        self.physical_resource_id = self.id = association_id
        self.route_table_id, self.subnet_id = route_table_id, subnet_id
        self.logical_resource_id = logical
        self.cf_resource_type = "AWS::EC2::SubnetRouteTableAssociation"

    def delete(self, account_id: str, region_name: str) -> None:
        """DisassociateRouteTable."""
        ec2_backend(account_id, region_name).disassociate_route_table(self.id)


def associate(logical: str, props: dict[str, Any], account: str, region: str) -> RouteTableAssociation:
    """Create an AWS::EC2::SubnetRouteTableAssociation."""
    backend = ec2_backend(account, region)
    association = backend.associate_route_table(props["RouteTableId"], subnet_id=props["SubnetId"])
    return RouteTableAssociation(association, props["RouteTableId"], props["SubnetId"], logical)


def subnet_created(obj: Any, props: dict[str, Any], account: str, region: str) -> None:
    """A subnet made by a template maps public addresses on launch only when it says so
    (AWS::EC2::Subnet MapPublicIpOnLaunch, "The default value is false"); moto set it on the first subnet
    of each zone, as if it were a default subnet."""
    obj.map_public_ip_on_launch = _flag(props.get("MapPublicIpOnLaunch", False))


def instance_created(obj: Any, props: dict[str, Any], account: str, region: str) -> None:
    """An instance in a subnet whose MapPublicIpOnLaunch is true gets a public IPv4 address unless its
    network interface says otherwise (VPC User Guide, "Modify the public IPv4 addressing attribute for your
    subnet"; the default VPC's subnets have it): moto gave none, so AWS's sample
    EC2InstanceWithSecurityGroupSample failed its Fn::GetAtt PublicDnsName."""
    nics = [n for n in props.get("NetworkInterfaces") or [] if isinstance(n, dict)]
    if any("AssociatePublicIpAddress" in n or "NetworkInterfaceId" in n for n in nics):
        return
    primary = obj.nics.get(0)
    if primary is not None and primary.subnet is not None and not primary.public_ip \
            and str(primary.subnet.map_public_ip_on_launch).lower() == "true":
        primary.public_ip_auto_assign = True
        primary.check_auto_public_ip()


def network_interface(logical: str, props: dict[str, Any], account: str, region: str) -> Any:
    """AWS::EC2::NetworkInterface as CreateNetworkInterface makes it. moto's model takes SubnetId,
    PrivateIpAddress and Description alone: it reads the security groups from `SecurityGroups` (the
    property is GroupSet) and drops PrivateIpAddresses, SecondaryPrivateIpAddressCount and
    SourceDestCheck, so AWS's sample SingleENIwithMultipleEIPs had no secondary address to give
    Fn::GetAtt SecondaryPrivateIpAddresses."""
    backend = ec2_backend(account, region)
    addresses = [{"PrivateIpAddress": a["PrivateIpAddress"], "Primary": _flag(a.get("Primary"))}
                 for a in props.get("PrivateIpAddresses") or []]
    count = props.get("SecondaryPrivateIpAddressCount")
    eni = backend.create_network_interface(
        backend.get_subnet(props["SubnetId"]), props.get("PrivateIpAddress"),
        private_ip_addresses=addresses or None, group_ids=list(props.get("GroupSet") or []),
        description=props.get("Description"), secondary_ips_count=int(count) if count else None)
    if "SourceDestCheck" in props:
        eni.source_dest_check = _flag(props["SourceDestCheck"])
    return eni


LOAD_BALANCER_V2 = "AWS::ElasticLoadBalancingV2::LoadBalancer"


def load_balancer_name(stack: str, logical: str) -> str:
    """The name CloudFormation gives a load balancer without Name: `<stack>-<logical>-<suffix>` within
    ELB's 32 characters (moto's rule for it)."""
    from moto.cloudformation.parsing import generate_resource_name

    return generate_resource_name(LOAD_BALANCER_V2, stack, logical)


def load_balancer_v2(logical: str, props: dict[str, Any], account: str, region: str) -> Any:
    """AWS::ElasticLoadBalancingV2::LoadBalancer as CreateLoadBalancer makes it. moto's model reads
    Subnets, SecurityGroups and Scheme alone: a load balancer given its subnets by SubnetMappings (as a
    Network Load Balancer with Elastic IPs is, AWS's sample NetworkLoadBalancerWithEIPs.yaml) failed "The
    specified subnet does not exist", and Type (network, gateway) and IpAddressType were dropped."""
    from moto.elbv2.models import elbv2_backends

    mappings = [dict(m) for m in props.get("SubnetMappings") or [] if isinstance(m, dict)]
    return elbv2_backends[account][region].create_load_balancer(
        str(props["Name"]), list(props.get("SecurityGroups") or []), list(props.get("Subnets") or []),
        subnet_mappings=mappings or None, scheme=props.get("Scheme") or "internet-facing",
        loadbalancer_type=props.get("Type") or "application",
        ip_address_type=props.get("IpAddressType") or "ipv4",
        tags=[dict(t) for t in props.get("Tags") or []] or None)


# types the local cloud creates itself rather than through moto's model
OWN_CREATE = {"AWS::EC2::SubnetRouteTableAssociation": associate,
              "AWS::EC2::NetworkInterface": network_interface, LOAD_BALANCER_V2: load_balancer_v2,
              **lambda_grants.OWN_CREATE}


def _delete_route(obj: Any, backend: Any) -> None:
    backend.delete_route(obj.route_table.id, obj.destination_cidr_block)


def _detach(obj: Any, backend: Any) -> None:
    if obj.gateway_id.startswith("igw-"):
        backend.detach_internet_gateway(obj.gateway_id, obj.vpc_id)
    else:
        backend.detach_vpn_gateway(obj.gateway_id, obj.vpc_id)


def _release(obj: Any, backend: Any) -> None:
    if obj.allocation_id:
        backend.release_address(allocation_id=obj.allocation_id)
    else:
        backend.release_address(address=obj.public_ip)


# EC2 types whose delete through moto's model does nothing, deleted through the EC2 backend
OWN_DELETE = {
    "AWS::EC2::RouteTable": lambda obj, backend: backend.delete_route_table(obj.id),
    "AWS::EC2::Route": _delete_route,
    "AWS::EC2::InternetGateway": lambda obj, backend: backend.delete_internet_gateway(obj.id),
    "AWS::EC2::VPCGatewayAttachment": _detach,
    "AWS::EC2::EIP": _release,
    "AWS::EC2::NatGateway": lambda obj, backend: backend.delete_nat_gateway(obj.id),
    "AWS::EC2::VPCPeeringConnection": lambda obj, backend: backend.delete_vpc_peering_connection(obj.id),
}


def delete_own(obj: Any, kind: str, account: str, region: str) -> bool:
    """Delete a resource of an OWN_DELETE type; False for other types (a role's managed policies are
    detached first, as CloudFormation's delete of a role does)."""
    if kind == "AWS::IAM::Role":
        role_policies(obj, {}, {"ManagedPolicyArns"}, account, region)
    if kind in services.OWN_DELETE:
        services.OWN_DELETE[kind](obj, account, region)
        return True
    if kind not in OWN_DELETE:
        return False
    OWN_DELETE[kind](obj, ec2_backend(account, region))
    return True


def block_device_iops(props: dict[str, Any]) -> dict[str, Any]:
    """The Iops an AWS::EC2::Instance's BlockDeviceMappings give, by device name."""
    mappings = [m for m in props.get("BlockDeviceMappings") or [] if isinstance(m, dict)]
    return {str(m.get("DeviceName")): (m.get("Ebs") or {}).get("Iops") for m in mappings
            if (m.get("Ebs") or {}).get("Iops") is not None}


def patch_block_device_iops() -> None:
    """moto's instance model makes each BlockDeviceMappings volume without its Iops, so an `io1`/`io2`
    volume is refused for lacking them: they are handed over here (idempotent)."""
    from moto.ec2.models.instances import Instance

    from formwright.cloud.emulator.context import request

    if getattr(Instance, "_formwright_iops", False):
        return
    Instance._formwright_iops = True  # type: ignore[attr-defined]  # our marker on moto's class

    def add_block_device(self: Any, size: int, device_path: str, snapshot_id: str | None, encrypted: bool,
                         delete_on_termination: bool, kms_key_id: str | None,
                         volume_type: str | None) -> None:
        iops = (getattr(request, "block_iops", None) or {}).get(device_path)
        volume = self.ec2_backend.create_volume(
            size=size, zone_name=self._placement.zone, snapshot_id=snapshot_id, encrypted=encrypted,
            kms_key_id=kms_key_id, volume_type=volume_type, iops=iops)
        self.ec2_backend.attach_volume(volume.id, self.id, device_path, delete_on_termination)

    Instance.add_block_device = add_block_device  # type: ignore[method-assign]  # moto has no hook for this

