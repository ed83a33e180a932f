"""Visitor for MySQL: a DBMS (with its databases) becomes one Amazon RDS DBInstance.

User `root` and port 3306 by default. The master password is a NoEcho parameter: a TOSCA input's
parameter, a literal of at least 8 characters passed at deploy time, or one generated at deploy time.
A database's SQL artifacts are applied once the instance is available, from the instance of a node
that connects to it.
"""

from __future__ import annotations

import shlex
from typing import cast

from troposphere import GetAtt, Ref, rds

from formwright.tosca.functions import Context, InputRef
from formwright.tosca.model import Node
from formwright.transform.cloudformation import kinds, network
from formwright.transform.cloudformation.context import Build
from formwright.transform.cloudformation.names import camel
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
    if primary.is_a(kinds.DATABASE):
        apply_sql(build, node, db_id, primary, ctx)
    members = {node.name, *(d.name for d in served)}
    for member in members:
        for rel in build.model.sources_of(build.model.nodes[member], kinds.CONNECTS_TO):
            peer = peer_group(build, rel.source)
            if peer is not None:
                # port is a PortDef property (an integer tosca-parser checks) or DEFAULT_PORT
                network.open_to_group(build, group, int(cast("int | str", port)), peer,
                                      f"{rel.source} connects to {member}")


SQL_CLIENT = {"yum": ["mariadb105"], "apt": ["default-mysql-client"]}


def _sql_artifacts(node: Node) -> list[str]:
    return [a.file for a in node.artifacts.values()
            if a.file.lower().endswith(".sql") or str(a.type or "").split(".")[-1].upper() == "SQL"]


def apply_sql(build: Build, node: Node, db_id: str, database: Node, ctx: Context) -> None:
    """Apply the SQL artifacts of `database` to RDS instance `db_id`, from the instance of the first node
    that connects to it (which waits for the database), with the MySQL client of its distribution."""
    from formwright.transform.cloudformation.images import image_of
    from formwright.transform.cloudformation.lifecycle import BASE, file_entry, source_file

    scripts = _sql_artifacts(database)
    if not scripts:
        return
    runners = [build.plan.host_of.get(r.source) for r in build.model.sources_of(database, kinds.CONNECTS_TO)]
    compute = next((c for c in runners if c in build.plan.instances), None)
    if compute is None:
        build.warn(f"the SQL artifacts of '{database.name}' are not applied: no node on an instance connects "
                   "to it", database.location, hint="add a ConnectsTo requirement from the application")
        return
    build.depend(build.plan.instances[compute], db_id)
    renderer = Renderer(build)
    files, commands = {}, {}
    for index, relative in enumerate(scripts):
        relative = source_file(build, relative, database.location, f"SQL artifact of '{database.name}'")
        path, entry = file_entry(build, database, relative, "000600")
        files[path] = entry
        commands[f"{index:02d}-{relative.rsplit('/', 1)[-1]}"] = {
            "command": f'mysql -h "$DB_HOST" -P "$DB_PORT" -u "$DB_USER" "$DB_NAME" < {shlex.quote(path)}',
            "cwd": BASE,
            "env": {
                "DB_HOST": {"Fn::GetAtt": [db_id, "Endpoint.Address"]},
                "DB_PORT": {"Fn::GetAtt": [db_id, "Endpoint.Port"]},
                "DB_USER": renderer.text(renderer.value(database.properties.get("user") or DEFAULT_USER,
                                                        ctx)),
                "DB_NAME": renderer.text(renderer.value(database.properties.get("name") or "", ctx)),
                "MYSQL_PWD": build.db_passwords[node.name].to_dict(),
            },
        }
    build.instance_roles.add(compute)
    family = image_of(build.model.nodes[compute]).family
    config: dict = {"files": files, "commands": commands}
    if family in SQL_CLIENT:
        config = {"packages": {family: {p: [] for p in SQL_CLIENT[family]}}, **config}
    build.add_config(compute, f"{camel(database.name)}Sql", config)


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
