"""Prepare: decide what each node becomes on AWS, name the resources, order the software per host.

- A Compute becomes an EC2 instance, unless it hosts only MySQL (→ RDS) or only Java (→ Elastic
  Beanstalk); references to its address then point at the RDS endpoint or the Beanstalk environment.
- A MySQL DBMS (or a MySQL database not hosted on one) becomes an RDS DBInstance.
- A JavaApplication (with its JavaRuntime) becomes a Beanstalk application, version and environment.
- Everything else hosted on an instance is installed there, in HostedOn / DependsOn order.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from formwright.errors import InputError
from formwright.tosca.model import EffectiveModel, Node
from formwright.transform.cloudformation import kinds
from formwright.transform.cloudformation.names import Namer


@dataclass
class Plan:
    """Placement and logical names of every node."""

    namer: Namer = field(default_factory=Namer)
    instances: dict[str, str] = field(default_factory=dict)       # compute -> EC2 logical id
    software: dict[str, list[str]] = field(default_factory=dict)  # compute -> nodes installed, in order
    rds: dict[str, str] = field(default_factory=dict)  # rds owner (DBMS or database) -> DBInstance id
    rds_of: dict[str, str] = field(default_factory=dict)          # MySQL node -> rds owner
    beanstalk: dict[str, str] = field(default_factory=dict)       # java app -> environment id
    beanstalk_of: dict[str, str] = field(default_factory=dict)    # java runtime/app -> java app
    alias: dict[str, tuple[str, str]] = field(default_factory=dict)  # compute without EC2 -> (kind, owner)
    host_of: dict[str, str] = field(default_factory=dict)          # node -> root host (compute) name
    volumes: dict[str, str] = field(default_factory=dict)          # block storage -> EBS volume id


def _order(model: EffectiveModel, names: list[str]) -> list[str]:
    """`names` topologically sorted: hosts, DependsOn and ConnectsTo targets first (stable)."""
    members = set(names)
    done: list[str] = []
    state: dict[str, int] = {}

    def visit(name: str, path: list[str]) -> None:
        if state.get(name) == 2:
            return
        if state.get(name) == 1:
            cycle = " -> ".join([*path[path.index(name):], name])
            node = model.nodes[name]
            raise InputError(
                f"dependency cycle between nodes: {cycle}",
                file=node.location.file if node.location else None,
                line=node.location.line if node.location else None,
            )
        state[name] = 1
        for rel in model.nodes[name].requirements:
            if rel.target in members:
                visit(rel.target, [*path, name])
        state[name] = 2
        done.append(name)

    for name in names:
        visit(name, [])
    return done


def _place_compute(plan: Plan, model: EffectiveModel, compute: Node) -> None:
    hosted = model.hosted(compute)
    for node in hosted:
        plan.host_of[node.name] = compute.name
    on_instance = [n.name for n in hosted if not kinds.is_mysql(n) and not kinds.is_java(n)
                   and not n.is_a(kinds.BLOCK_STORAGE)]
    if hosted and not on_instance:
        mysql = [n for n in hosted if kinds.is_mysql(n)]
        java = [n for n in hosted if n.is_a(kinds.JAVA_APP)]
        if mysql:
            plan.alias[compute.name] = ("rds", mysql[0].name)
        elif java:
            plan.alias[compute.name] = ("beanstalk", java[0].name)
        if compute.name in plan.alias:
            return
    plan.instances[compute.name] = plan.namer.name(compute.name)
    plan.software[compute.name] = _order(model, on_instance)


def prepare_plan(model: EffectiveModel) -> Plan:
    """Decide the placement and names of every node of `model`."""
    plan = Plan()
    nodes = list(model.nodes.values())
    for node in nodes:
        if node.is_a(kinds.MYSQL_DBMS) or (
            node.is_a(kinds.MYSQL_DATABASE)
            and not any(
                model.nodes[r.target].is_a(kinds.MYSQL_DBMS)
                for r in node.requirements
                if r.is_a(kinds.HOSTED_ON)
            )
        ):
            plan.rds[node.name] = plan.namer.name(node.name, "Db")
    for node in nodes:
        if kinds.is_mysql(node):
            owner = node if node.name in plan.rds else model.host_of(node)
            plan.rds_of[node.name] = owner.name if owner is not None else node.name
        if node.is_a(kinds.JAVA_APP):
            plan.beanstalk[node.name] = plan.namer.name(node.name, "Environment")
            plan.beanstalk_of[node.name] = node.name
            runtime = model.host_of(node)
            if runtime is not None:
                plan.beanstalk_of[runtime.name] = node.name
        if node.is_a(kinds.BLOCK_STORAGE):
            plan.volumes[node.name] = plan.namer.name(node.name, "Volume")
    for rds_name in plan.rds:
        plan.rds_of.setdefault(rds_name, rds_name)
    for node in nodes:
        if node.is_a(kinds.COMPUTE):
            _place_compute(plan, model, node)
    return plan


def app_port(node: Node) -> int | None:
    """The port a web application or server listens on (WebApplication: 80 unless set)."""
    for source in (node.properties, node.capabilities.get("app_endpoint", {}),
                   node.capabilities.get("data_endpoint", {})):
        port = source.get("port") if isinstance(source, dict) else None
        if isinstance(port, int):
            return port
    if node.is_a(kinds.WEBAPP) or node.is_a(kinds.APACHE):
        return 80
    return None
