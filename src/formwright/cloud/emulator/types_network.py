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


@register
class NetworkAcl(Model):
    """AWS::EC2::NetworkAcl: a VPC's network ACL (CreateNetworkAcl; Ref its id), made with no entries."""

    kind = "AWS::EC2::NetworkAcl"
    taggable = True
    ref_attributes = frozenset({"Id"})

    def _ec2(self) -> Any:
        return backend("ec2", self.account_id, self.region_name)

    def create(self, props: dict[str, Any], stack_name: str) -> None:
        tags = props.get("Tags") or []
        acl = self._ec2().create_network_acl(props["VpcId"], tags=[
            {"Key": t["Key"], "Value": t["Value"]} for t in tags])
        self.physical_resource_id = acl.id

    def update(self, props: dict[str, Any], names: set[str]) -> None:
        """VpcId is create-only; tags are written apart."""

    def remove(self) -> None:
        if self.physical_resource_id in self._ec2().network_acls:
            self._ec2().delete_network_acl(self.physical_resource_id)

    def read(self) -> dict[str, Any] | None:
        acl = self._ec2().network_acls.get(self.physical_resource_id)
        return None if acl is None else {"VpcId": acl.vpc_id}

    def live_tags(self) -> dict[str, str]:
        return {t["key"]: t["value"] for t in self._ec2().describe_tags(
            filters={"resource-id": [self.physical_resource_id]})}

    def write_tags(self, tags: dict[str, str]) -> None:
        ec2 = self._ec2()
        ec2.delete_tags([self.physical_resource_id], self.live_tags())
        ec2.create_tags([self.physical_resource_id], tags)


def _flag(value: Any) -> bool:
    return str(value).lower() == "true"


@register
class NetworkAclEntry(Model):
    """AWS::EC2::NetworkAclEntry: one numbered rule of a network ACL (CreateNetworkAclEntry); a change
    other than the ACL, the number or the direction replaces the rule in place (ReplaceNetworkAclEntry)."""

    kind = "AWS::EC2::NetworkAclEntry"
    ref_attributes = frozenset({"Id"})
    in_place = frozenset({"Protocol", "RuleAction", "CidrBlock", "Ipv6CidrBlock", "Icmp", "PortRange"})

    def _ec2(self) -> Any:
        return backend("ec2", self.account_id, self.region_name)

    def _write(self, props: dict[str, Any]) -> None:
        icmp, ports = props.get("Icmp") or {}, props.get("PortRange") or {}
        self._ec2().create_network_acl_entry(
            self.acl_id, self.number, str(props["Protocol"]), props["RuleAction"], self.egress,
            props.get("CidrBlock"), icmp.get("Code"), icmp.get("Type"), ports.get("From"), ports.get("To"),
            props.get("Ipv6CidrBlock"))

    def create(self, props: dict[str, Any], stack_name: str) -> None:
        if not props.get("CidrBlock") and not props.get("Ipv6CidrBlock"):
            raise Invalid("Either CidrBlock or Ipv6CidrBlock must be specified")
        self.acl_id, self.number = props["NetworkAclId"], int(props["RuleNumber"])
        self.egress = _flag(props.get("Egress", False))
        self._write(props)
        self.physical_resource_id = f"{self.acl_id}|{str(self.egress).lower()}|{self.number}"

    def update(self, props: dict[str, Any], names: set[str]) -> None:
        self.remove()
        self._write(props)

    def _entry(self) -> Any:
        acl = self._ec2().network_acls.get(self.acl_id)
        return next((e for e in acl.network_acl_entries if int(e.rule_number) == self.number
                     and e.egress == self.egress), None) if acl is not None else None

    def remove(self) -> None:
        if self._entry() is not None:
            self._ec2().delete_network_acl_entry(self.acl_id, self.number, self.egress)

    def read(self) -> dict[str, Any] | None:
        entry = self._entry()
        if entry is None:
            return None
        found: dict[str, Any] = {
            "NetworkAclId": self.acl_id, "RuleNumber": self.number, "Protocol": entry.protocol,
            "RuleAction": entry.rule_action, "Egress": entry.egress, "CidrBlock": entry.cidr_block,
            "Ipv6CidrBlock": entry.ipv6_cidr_block,
            "PortRange": {"From": entry.port_range_from, "To": entry.port_range_to},
            "Icmp": {"Code": entry.icmp_code, "Type": entry.icmp_type}}
        return found


@register
class SubnetNetworkAclAssociation(Model):
    """AWS::EC2::SubnetNetworkAclAssociation: the subnet moved to the ACL (ReplaceNetworkAclAssociation);
    deleted, it goes back to its VPC's default ACL, as EC2 keeps every subnet in one ACL."""

    kind = "AWS::EC2::SubnetNetworkAclAssociation"
    ref_attributes = frozenset({"AssociationId"})

    def _ec2(self) -> Any:
        return backend("ec2", self.account_id, self.region_name)

    def _current(self, subnet_id: str) -> tuple[Any, str] | None:
        """(ACL, association id) of the subnet now."""
        for acl in self._ec2().network_acls.values():
            for association_id, association in acl._associations.items():
                if association.subnet_id == subnet_id:
                    return acl, association_id
        return None

    def create(self, props: dict[str, Any], stack_name: str) -> None:
        ec2 = self._ec2()
        subnet = ec2.get_subnet(props["SubnetId"])
        current = self._current(subnet.id)
        if current is None:
            ec2.associate_default_network_acl_with_subnet(subnet.id, subnet.vpc_id)
            current = self._current(subnet.id)
        assert current is not None  # just associated with the default ACL
        made = ec2.replace_network_acl_association(current[1], props["NetworkAclId"])
        self.subnet_id, self.vpc_id = subnet.id, subnet.vpc_id
        self.physical_resource_id = made.id

    def update(self, props: dict[str, Any], names: set[str]) -> None:
        """Both properties are create-only."""

    def remove(self) -> None:
        current = self._current(self.subnet_id)
        if current is None or current[1] != self.physical_resource_id:
            return
        default = next(a for a in self._ec2().network_acls.values() if a.default and a.vpc_id == self.vpc_id)
        self._ec2().replace_network_acl_association(current[1], default.id)

    def read(self) -> dict[str, Any] | None:
        current = self._current(self.subnet_id)
        if current is None or current[1] != self.physical_resource_id:
            return None
        return {"SubnetId": self.subnet_id, "NetworkAclId": current[0].id}
