"""Security groups: one per instance, RDS instance and Beanstalk environment.

Applications' own ports are open to the world; database ports only to the groups of the nodes
that connect to the database.
"""

from __future__ import annotations

from troposphere import GetAtt, ec2

from formwright.transform.cloudformation.context import Build, Ingress

WORLD = "0.0.0.0/0"


def group_for(build: Build, owner: str, description: str) -> str:
    """The security group of `owner` (a compute, RDS owner or Java app), created on first use."""
    if owner not in build.security_groups:
        build.security_groups[owner] = build.plan.namer.name(owner, "SecurityGroup")
        build.template.add_resource(
            ec2.SecurityGroup(build.security_groups[owner], GroupDescription=description)
        )
    return build.security_groups[owner]


def open_to_world(build: Build, group: str, port: int, description: str) -> None:
    """Allow TCP `port` into `group` from anywhere (once)."""
    build.add_ingress(Ingress(group, port, cidr=WORLD, description=description))


def open_to_group(build: Build, group: str, port: int, source: str, description: str) -> None:
    """Allow TCP `port` into `group` from members of group `source` (once)."""
    build.add_ingress(Ingress(group, port, source_group=source, description=description))


def add_ingress_rules(build: Build) -> None:
    """Write the collected rules: world rules inline, group-to-group rules as separate resources."""
    groups = {
        res.title: res for res in build.template.resources.values() if isinstance(res, ec2.SecurityGroup)
    }
    for rule in build.ingress:
        if rule.cidr:
            group = groups[rule.group]
            current = group.properties.get("SecurityGroupIngress", [])
            current.append(ec2.SecurityGroupRule(IpProtocol="tcp", FromPort=rule.port, ToPort=rule.port,
                                                 CidrIp=rule.cidr, Description=rule.description))
            group.SecurityGroupIngress = current
        else:
            build.template.add_resource(ec2.SecurityGroupIngress(
                build.plan.namer.name(rule.group, "From", rule.source_group or "", f"Port{rule.port}"),
                GroupId=GetAtt(rule.group, "GroupId"), IpProtocol="tcp", FromPort=rule.port, ToPort=rule.port,
                SourceSecurityGroupId=GetAtt(rule.source_group, "GroupId"), Description=rule.description))
