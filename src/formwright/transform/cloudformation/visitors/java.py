"""Visitor for Java: a JavaApplication on a JavaRuntime becomes an Elastic Beanstalk application,
application version (the jar from the artifact bucket) and environment (Corretto of the runtime's
version). Start-operation inputs and the database of a ConnectsTo become environment properties.
"""

from __future__ import annotations

from troposphere import GetAtt, Ref, Sub
from troposphere import elasticbeanstalk as eb

from formwright.errors import InputError
from formwright.tosca.functions import Context
from formwright.tosca.model import Node
from formwright.transform.cloudformation import iam, kinds, network
from formwright.transform.cloudformation.context import Build
from formwright.transform.cloudformation.lifecycle import source_file
from formwright.transform.cloudformation.values import Renderer, cname_prefix, expression
from formwright.transform.cloudformation.visitors.mysql import databases
from formwright.transform.cloudformation.visitors.software import literal, port_of

SOLUTION_STACKS = {
    "11": "64bit Amazon Linux 2023 v4.5.0 running Corretto 11",
    "17": "64bit Amazon Linux 2023 v4.5.0 running Corretto 17",
    "21": "64bit Amazon Linux 2023 v4.5.0 running Corretto 21",
}
ENVIRONMENT = "aws:elasticbeanstalk:application:environment"


def visit_runtime(build: Build, node: Node) -> None:
    """A Java runtime is part of its application's environment; it emits nothing by itself."""


def _jar(build: Build, node: Node) -> str:
    for artifact in node.artifacts.values():
        if artifact.file.lower().endswith((".jar", ".war", ".zip")):
            relative = source_file(build, artifact.file, node.location, f"artifact '{artifact.name}'")
            return build.upload(relative)
    loc = node.location
    raise InputError(f"Java application '{node.name}' has no jar artifact", file=loc.file if loc else None,
                     line=loc.line if loc else None, hint="add an artifact whose file ends in .jar")


def _stack_parameter(build: Build, runtime: Node | None) -> str:
    version = str(literal(build, runtime, runtime.properties.get("component_version")) if runtime else "17")
    major = version.split(".")[0]
    if major not in SOLUTION_STACKS:
        build.warn(f"Java {version} has no Elastic Beanstalk Corretto platform here: Corretto 17 is used",
                   runtime.location if runtime else None, hint=f"supported: {', '.join(SOLUTION_STACKS)}")
        major = "17"
    name = f"JavaSolutionStack{major}"
    return build.parameter(name, Type="String", Default=SOLUTION_STACKS.get(major, SOLUTION_STACKS["17"]),
                           Description=f"Elastic Beanstalk solution stack for Java {major}.")


def _database_settings(build: Build, node: Node) -> dict[str, object]:
    renderer = Renderer(build)
    settings: dict[str, object] = {}
    for rel in node.requirements:
        target = build.model.nodes[rel.target]
        if not (rel.is_a(kinds.CONNECTS_TO) and kinds.is_mysql(target)):
            continue
        owner = build.plan.rds_of[target.name]
        database = (databases(build, build.model.nodes[owner]) or [target])[0]
        ctx = Context(database, location=database.location)
        settings["DB_HOST"] = renderer.rds_address(owner, "address")
        settings["DB_PORT"] = renderer.rds_address(owner, "port")
        if database.properties.get("name"):
            settings["DB_NAME"] = renderer.text(renderer.value(database.properties["name"], ctx))
        settings["DB_USER"] = renderer.text(renderer.value(database.properties.get("user") or "root", ctx))
        settings["DB_PASSWORD"] = build.db_passwords[owner]
        build.depend(build.plan.beanstalk[node.name], build.plan.rds[owner])
    return settings


def visit(build: Build, node: Node) -> None:
    """Emit the Beanstalk application, version and environment of a Java application."""
    runtime = build.model.host_of(node)
    renderer = Renderer(build)
    env_id = build.plan.beanstalk[node.name]
    app_id = build.plan.namer.name(node.name, "Application")
    version_id = build.plan.namer.name(node.name, "Version")
    build.template.add_resource(eb.Application(app_id, Description=f"TOSCA node {node.name}"))
    build.template.add_resource(
        eb.ApplicationVersion(
            version_id,
            ApplicationName=Ref(app_id),
            SourceBundle=eb.SourceBundle(S3Bucket=Ref(build.bucket()), S3Key=_jar(build, node)),
        )
    )
    variables: dict[str, object] = {"PORT": str(port_of(build, node, 5000))}
    if node.properties.get("vm_options"):
        variables["JAVA_TOOL_OPTIONS"] = renderer.text(
            renderer.value(node.properties["vm_options"], Context(node))
        )
    variables.update(_database_settings(build, node))
    start = node.operations.get("start")
    if start is not None:
        for key, raw in start.inputs.items():
            variables[key] = renderer.text(renderer.value(raw, Context(node, location=start.location)))
    group = network.group_for(build, node.name, f"{node.name}: Beanstalk instances")
    options = [
        eb.OptionSetting(Namespace="aws:autoscaling:launchconfiguration", OptionName="IamInstanceProfile",
                         Value=Ref(iam.beanstalk_instance(build))),
        eb.OptionSetting(Namespace="aws:autoscaling:launchconfiguration", OptionName="SecurityGroups",
                         Value=GetAtt(group, "GroupId")),
    ]
    options += [
        eb.OptionSetting(Namespace=ENVIRONMENT, OptionName=k, Value=expression(v))
        for k, v in variables.items()
    ]
    build.template.add_resource(eb.Environment(
        env_id, ApplicationName=Ref(app_id), VersionLabel=Ref(version_id),
        SolutionStackName=Ref(_stack_parameter(build, runtime)), CNAMEPrefix=Sub(cname_prefix(node.name)),
        OptionSettings=options))
