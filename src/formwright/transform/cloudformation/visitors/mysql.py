"""Visitor for MySQL: a DBMS (with its databases) becomes one Amazon RDS DBInstance.

User `root` and port 3306 by default. The master password is a NoEcho parameter: a TOSCA input's
parameter, a literal of at least 8 characters passed at deploy time, or one generated at deploy time.
"""

from __future__ import annotations

from typing import cast

from troposphere import GetAtt, Ref, rds

from formwright.tosca.functions import Context, InputRef
from formwright.tosca.model import Node
from formwright.transform.cloudformation import kinds, network
from formwright.transform.cloudformation.context import Build
from formwright.transform.cloudformation.values import Renderer, expression
from formwright.transform.cloudformation.visitors.software import literal

MIN_PASSWORD = 8
DEFAULT_USER = "root"
DEFAULT_PORT = 3306


def databases(build: Build, owner: Node) -> list[Node]:
    """The MySQL databases the RDS instance of `owner` serves (the owner itself if it is a database)."""
    if owner.is_a(kinds.MYSQL_DATABASE):
        return [owner]
    return [build.model.nodes[r.source] for r in build.model.sources_of(owner, kinds.HOSTED_ON)
            if build.model.nodes[r.source].is_a(kinds.DATABASE)]


def _password(build: Build, owner: Node, node: Node, raw: object, db_id: str) -> object:
    where = node.location
    value = build.resolver.resolve(raw, Context(node, location=where)) if raw is not None else None
    if isinstance(value, InputRef):
        parameter = build.input_parameters[value.name]
        props = build.template.parameters[parameter].properties
        props["NoEcho"] = True
        props.pop("Default", None)
        props["MinLength"] = max(int(props.get("MinLength", 0)), MIN_PASSWORD)
        build.secret_parameters.add(parameter)
        if value.value is not None and len(str(value.value)) < MIN_PASSWORD:
            # RDS refuses it; a generated password replaces it for RDS and for every reference to the
            # input (scripts, outputs), so all of them see the one RDS got.
            build.warn(f"input '{value.name}' is the password of MySQL '{owner.name}' and has fewer than "
                       f"{MIN_PASSWORD} characters, which RDS refuses: a generated password replaces it "
                       "everywhere the input is used", where)
            replacement = build.parameter(f"{db_id}Password", Type="String", NoEcho=True,
                                          MinLength=MIN_PASSWORD,
                                          Description=f"Master password of the MySQL database '{owner.name}' "
                                          f"(generated: input '{value.name}' is too short).")
            build.generated_secrets.add(replacement)
            build.secret_parameters.add(replacement)
            build.replaced_inputs[value.name] = replacement
            props.pop("MinLength", None)  # the given value still goes to the input's own parameter
            build.parameter_values[parameter] = str(value.value)
            return Ref(replacement)
        if value.value is not None:
            build.parameter_values[parameter] = str(value.value)
        return Ref(parameter)
    parameter = build.parameter(f"{db_id}Password", Type="String", NoEcho=True, MinLength=MIN_PASSWORD,
                                Description=f"Master password of the MySQL database '{owner.name}'.")
    if isinstance(value, str) and len(value) >= MIN_PASSWORD:
        build.parameter_values[parameter] = value
    else:
        build.generated_secrets.add(parameter)
    return Ref(parameter)


def visit(build: Build, node: Node) -> None:
    """Emit the RDS instance, its security group and ingress for a MySQL node that owns one."""
    db_id = build.plan.rds.get(node.name)
    if db_id is None:
        return  # a database hosted on a MySQL DBMS: served by the DBMS's instance
    served = databases(build, node)
    primary = served[0] if served else node
    renderer = Renderer(build)
    ctx = Context(primary, location=primary.location)
    user = primary.properties.get("user") or DEFAULT_USER
    raw_password = primary.properties.get("password") or node.properties.get("root_password")
    port = literal(build, primary, primary.properties.get("port")) or DEFAULT_PORT
    group = network.group_for(build, node.name, f"{node.name}: MySQL")
    properties: dict = {
        "Engine": "mysql", "DBInstanceClass": "db.t3.micro", "AllocatedStorage": "20",
        "MasterUsername": expression(renderer.value(user, ctx)),
        "MasterUserPassword": build.db_passwords.setdefault(
            node.name, _password(build, node, primary, raw_password, db_id)),
        "Port": str(port), "PubliclyAccessible": False, "VPCSecurityGroups": [GetAtt(group, "GroupId")],
    }
    if primary.is_a(kinds.DATABASE) and primary.properties.get("name"):
        properties["DBName"] = expression(renderer.value(primary.properties["name"], ctx))
    build.template.add_resource(
        rds.DBInstance(db_id, DeletionPolicy="Snapshot", UpdateReplacePolicy="Snapshot", **properties)
    )
    members = {node.name, *(d.name for d in served)}
    for member in members:
        for rel in build.model.sources_of(build.model.nodes[member], kinds.CONNECTS_TO):
            peer = peer_group(build, rel.source)
            if peer is not None:
                # port is a PortDef property (an integer tosca-parser checks) or DEFAULT_PORT
                network.open_to_group(build, group, int(cast("int | str", port)), peer,
                                      f"{rel.source} connects to {member}")


def peer_group(build: Build, source: str) -> str | None:
    """The security group of the instance or environment that runs node `source`, if any."""
    plan = build.plan
    if source in plan.beanstalk_of:
        app = plan.beanstalk_of[source]
        return network.group_for(build, app, f"{app}: Beanstalk instances")
    compute = plan.host_of.get(source, source)
    if compute in plan.instances:
        return network.group_for(build, compute, f"{compute}: instance")
    return None
