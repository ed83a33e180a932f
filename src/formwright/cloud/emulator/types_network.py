"""Network attachments as CloudFormation makes them: EC2 EIPAssociation, through moto's EC2 backend
(DescribeAddresses answers what the stack made).

AWS::EC2::EIPAssociation (AWS CloudFormation Template Reference): every property is create-only; `Ref` and
`Id` are the association's id (`eipassoc-...`). An address already associated elsewhere moves, as
AssociateAddress with AllowReassociation does.
"""

from __future__ import annotations

from typing import Any

from formwright.cloud.emulator.own import Invalid, Model, backend, register


@register
class EIPAssociation(Model):
    """AWS::EC2::EIPAssociation: an Elastic IP address on an instance or a network interface."""

    kind = "AWS::EC2::EIPAssociation"

    def _ec2(self) -> Any:
        return backend("ec2", self.account_id, self.region_name)

    def create(self, props: dict[str, Any], stack_name: str) -> None:
        ec2 = self._ec2()
        if not props.get("AllocationId") and not props.get("EIP"):
            raise Invalid("Either AllocationId or EIP must be specified")
        if not props.get("InstanceId") and not props.get("NetworkInterfaceId"):
            raise Invalid("Either InstanceId or NetworkInterfaceId must be specified")
        instance = ec2.get_instance(props["InstanceId"]) if props.get("InstanceId") else None
        eni = (
            ec2.get_network_interface(props["NetworkInterfaceId"])
            if props.get("NetworkInterfaceId")
            else None
        )
        eip = ec2.associate_address(
            instance=instance,
            eni=eni,
            address=props.get("EIP"),
            allocation_id=props.get("AllocationId"),
            reassociate=True,
        )
        self.public_ip = eip.public_ip
        self.physical_resource_id = eip.association_id or eip.public_ip  # EC2-Classic: the address itself

    def _address(self) -> Any:
        """The address while it still carries this association, else None."""
        return next(
            (
                a
                for a in self._ec2().addresses
                if a.public_ip == self.public_ip
                and (a.association_id or a.public_ip) == self.physical_resource_id
                and (a.instance is not None or a.eni is not None)
            ),
            None,
        )

    def update(self, props: dict[str, Any], names: set[str]) -> None:
        """Every property is create-only: nothing changes in place."""

    def remove(self) -> None:
        if self._address() is not None:
            self._ec2().disassociate_address(address=self.public_ip)

    def read(self) -> dict[str, Any] | None:
        address = self._address()
        if address is None:
            return None
        return {
            "AllocationId": address.allocation_id,
            "EIP": address.public_ip,
            "InstanceId": address.instance.id if address.instance is not None else None,
            "NetworkInterfaceId": address.eni.id if address.eni is not None else None,
        }

    def attribute(self, name: str) -> Any:
        if name == "Id":
            return self.physical_resource_id
        raise KeyError(name)
