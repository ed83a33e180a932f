"""Visitors for software installed on an EC2 instance: web servers, applications, other components."""

from __future__ import annotations

from formwright.errors import InputError
from formwright.tosca.functions import Context, InputRef
from formwright.tosca.model import Node
from formwright.transform.cloudformation import kinds, network
from formwright.transform.cloudformation.context import Build
from formwright.transform.cloudformation.images import image_of
from formwright.transform.cloudformation.lifecycle import add_operations
from formwright.transform.cloudformation.names import camel


def compute_of(build: Build, node: Node) -> str:
    """The compute whose instance runs `node`; an error when `node` is not hosted on an instance."""
    compute = build.plan.host_of.get(node.name)
    if compute is None or compute not in build.plan.instances:
        loc = node.location
        raise InputError(f"node '{node.name}' is not hosted on a Compute", file=loc.file if loc else None,
                         line=loc.line if loc else None, hint="add a 'host' requirement")
    return compute


def literal(build: Build, node: Node, raw: object) -> object:
    """The transform-time value of `raw` for `node` (an input's chosen value for get_input)."""
    value = build.resolver.resolve(raw, Context(node, location=node.location))
    return value.value if isinstance(value, InputRef) else value


def port_of(build: Build, node: Node, default: int | None) -> int | None:
    """The listening port of `node`: its `port` property or endpoint capability's port, else `default`."""
    sources = [node.properties, *(node.capabilities.get(c, {}) for c in ("app_endpoint", "data_endpoint",
                                                                            "database_endpoint"))]
    for source in sources:
        if isinstance(source, dict) and source.get("port") is not None:
            value = literal(build, node, source["port"])
            if isinstance(value, int):
                return value
            if isinstance(value, str) and value.isdigit():
                return int(value)
    return default


def _install(build: Build, node: Node, compute: str, packages: dict[str, list[str]],
             services: dict[str, str]) -> None:
    """Install `packages[family]` with the instance's package manager and run `services[family]`."""
    family = image_of(build.model.nodes[compute]).family
    if family not in packages:
        return  # Windows: the node's own operations install what it needs
    config: dict = {"packages": {family: {p: [] for p in packages[family]}}}
    service = services.get(family)
    if service:
        config["services"] = {"sysvinit": {service: {"enabled": "true", "ensureRunning": "true"}}}
    build.add_config(compute, f"{camel(node.name)}Install", config)


def visit_software(build: Build, node: Node) -> None:
    """A software component: its lifecycle operations on its host's instance."""
    add_operations(build, node, compute_of(build, node))


def _serve(build: Build, node: Node, default_port: int | None) -> None:
    compute = compute_of(build, node)
    port = port_of(build, node, default_port)
    if port is not None:
        group = network.group_for(build, compute, f"{compute}: instance")
        network.open_to_world(build, group, port, f"{node.name} listens here")
    add_operations(build, node, compute)


def visit_apache(build: Build, node: Node) -> None:
    """Apache with PHP from the distribution's packages, running as a service; then its operations."""
    _install(build, node, compute_of(build, node),
             {"yum": ["httpd", "php", "php-mysqlnd"],
              "apt": ["apache2", "php", "libapache2-mod-php", "php-mysql"]},
             {"yum": "httpd", "apt": "apache2"})
    _serve(build, node, 80)


def visit_nodejs(build: Build, node: Node) -> None:
    """Node.js from the distribution's packages; then its operations."""
    _install(build, node, compute_of(build, node), {"yum": ["nodejs", "npm"], "apt": ["nodejs", "npm"]}, {})
    _serve(build, node, None)


def visit_web_application(build: Build, node: Node) -> None:
    """A web application: its port (80 unless set) open to the world; its operations."""
    _serve(build, node, 80)


def open_connections(build: Build) -> None:
    """Open the port of every node on an instance to the instances (and Beanstalk environments) of the
    nodes that ConnectsTo it: Redis's 6379, a DBMS's, an application's own endpoint."""
    from formwright.transform.cloudformation.visitors.mysql import peer_group

    for rel in build.model.relationships():
        target = build.model.nodes[rel.target]
        compute = build.plan.host_of.get(target.name)
        if not rel.is_a(kinds.CONNECTS_TO) or compute not in build.plan.instances:
            continue
        port = port_of(build, target, None)
        peer = peer_group(build, rel.source)
        if port is None or peer is None or build.plan.host_of.get(rel.source) == compute:
            continue
        group = network.group_for(build, compute, f"{compute}: instance")
        network.open_to_group(build, group, port, peer, f"{rel.source} connects to {target.name}")


def visit_database(build: Build, node: Node) -> None:
    """A DBMS or database on an instance: its port open only to the nodes that connect to it."""
    compute = compute_of(build, node)
    port = port_of(build, node, None)
    if port is not None:
        group = network.group_for(build, compute, f"{compute}: instance")
        for rel in build.model.sources_of(node, kinds.CONNECTS_TO):
            source = build.plan.host_of.get(rel.source)
            if source is not None and source != compute and source in build.plan.instances:
                peer = network.group_for(build, source, f"{source}: instance")
                network.open_to_group(build, group, port, peer, f"{rel.source} connects to {node.name}")
    add_operations(build, node, compute)
