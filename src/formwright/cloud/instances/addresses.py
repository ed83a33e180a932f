"""Where the local cloud's instances get their addresses: the default VPC lies on the instance network.

AWS's default VPC is 172.31.0.0/16, with a /20 default subnet per Availability Zone, and an instance launched
without a subnet goes into its zone's default subnet with an address of that subnet ("Default VPCs", Amazon
VPC User Guide). The local cloud's default VPC is `boot.NETWORK` (10.213.0.0/16) instead, its default subnets
the /20s of it, so that such an instance (every instance of the TOSCA transform's artifacts, of most sample
templates) has a PrivateIpAddress its host reaches when it boots: the host routes only the instance network,
never a range a real network may use (172.31.0.0/16 is one of Docker's pools). The local cloud serves stub and
booting stacks alike, so the default VPC cannot depend on the stack: it is the same for both.

moto gives an instance without a subnet a random 10.x.x.x address outside any subnet (its EC2-Classic path);
here it takes its zone's default subnet first, as EC2 does. An address drawn from a subnet on the instance
network is a random free one, skipping the addresses booted instances of any local cloud on this machine
hold (`boot.CLAIMS`): every local cloud of the machine shares the bridge.
"""

from __future__ import annotations

import ipaddress
import random
from typing import Any

from formwright.cloud.instances import boot

DEFAULT_VPC_CIDR = str(boot.NETWORK)
RESERVED_AT_START = 4  # AWS reserves a subnet's first four addresses and its last (Amazon VPC User Guide)
DRAWS = 64


def _claimed() -> set[str]:
    return {p.name for p in boot.CLAIMS.iterdir()} if boot.CLAIMS.is_dir() else set()


def on_instance_network(cidr: Any) -> bool:
    """Whether the subnet `cidr` lies inside the instance network."""
    return ipaddress.ip_network(str(cidr)).subnet_of(boot.NETWORK)  # type: ignore[arg-type]


def free_address(cidr: Any, taken: set[str]) -> str | None:
    """A random address of `cidr` (a subnet inside the instance network) that no instance of this subnet
    holds (`taken`), no booted instance on this machine holds, and AWS does not reserve; None when the draws
    find none (the caller then counts up as moto does)."""
    network = ipaddress.ip_network(str(cidr))
    first = int(network.network_address) + RESERVED_AT_START
    last = int(network.broadcast_address) - 1
    if last < first:
        return None
    claimed = _claimed()
    for _ in range(DRAWS):
        address = str(ipaddress.ip_address(random.randint(first, last)))  # noqa: S311 - not security
        if address not in taken and address not in claimed and address != boot.HOST_ADDRESS:
            return address
    return None


def install() -> None:
    """Patch moto: the default VPC on the instance network; an instance without a subnet in its zone's
    default subnet; addresses of subnets on the instance network drawn free of booted instances' claims."""
    from moto.ec2.models.instances import Instance
    from moto.ec2.models.subnets import Subnet
    from moto.ec2.models.vpcs import VPCBackend

    def create_default_vpc(self: Any) -> Any:
        from moto.ec2.exceptions import DefaultVpcAlreadyExists

        if self.describe_vpcs(filters={"is-default": ["true"]}):
            raise DefaultVpcAlreadyExists
        vpc = self.create_vpc(cidr_block=DEFAULT_VPC_CIDR, is_default=True)
        for zone in self.describe_availability_zones():
            self.create_default_subnet(zone.name)
        return vpc

    VPCBackend.create_default_vpc = create_default_vpc  # type: ignore[method-assign]  # moto has no hook

    allocate = Subnet.get_available_subnet_ip

    def get_available_subnet_ip(self: Any, instance: Any) -> str:
        if on_instance_network(self.cidr):
            address = free_address(self.cidr, set(self._subnet_ips))
            if address is not None:
                self._unused_ips.discard(address)
                self._subnet_ips[address] = instance
                return address
        return str(allocate(self, instance))

    Subnet.get_available_subnet_ip = get_available_subnet_ip  # type: ignore[method-assign]  # moto has no hook

    prep_nics = Instance.prep_nics

    def prep_nics_in_default_subnet(self: Any, nic_spec: list[dict[str, Any]], *args: Any,
                                    **kwargs: Any) -> None:
        placed = self._subnet_id or any("SubnetId" in n or "NetworkInterfaceId" in n for n in nic_spec)
        if not placed:
            subnet = self.ec2_backend.get_default_subnets().get(self._placement.zone)
            if subnet is not None:
                self._subnet_id = subnet.id
        prep_nics(self, nic_spec, *args, **kwargs)

    Instance.prep_nics = prep_nics_in_default_subnet  # type: ignore[method-assign]  # moto has no hook
