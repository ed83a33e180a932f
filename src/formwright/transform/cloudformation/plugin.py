"""The CloudFormation plugin: the lifecycle phases over one EffectiveModel."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from formwright.errors import InputError
from formwright.tosca.diagnostics import Diagnostics
from formwright.tosca.functions import Resolver
from formwright.tosca.model import EffectiveModel, Node
from formwright.transform.cloudformation import kinds, network
from formwright.transform.cloudformation.check import check_directives, check_supported
from formwright.transform.cloudformation.context import LIMITS, Build
from formwright.transform.cloudformation.lifecycle import add_publications
from formwright.transform.cloudformation.outputs import check_order
from formwright.transform.cloudformation.parameters import add_input_parameters, add_outputs
from formwright.transform.cloudformation.prepare import Plan, prepare_plan
from formwright.transform.cloudformation.visitors import compute, visitor_for
from formwright.transform.cloudformation.visitors.software import open_connections
from formwright.transform.cloudformation.write import write_artifact
from formwright.transform.plugin import Plugin

DESCRIPTION_LIMIT = 1024


SECTION_ORDER = (
    "AWSTemplateFormatVersion",
    "Description",
    "Parameters",
    "Mappings",
    "Conditions",
    "Resources",
    "Outputs",
)
RESOURCE_ORDER = ("Type", "DependsOn", "Condition", "CreationPolicy", "DeletionPolicy", "UpdateReplacePolicy",
                  "Metadata", "Properties")


def ordered(template: dict[str, Any]) -> dict[str, Any]:
    """The template with sections, and the keys of each resource, in the conventional reading order."""
    out = {k: template[k] for k in SECTION_ORDER if k in template}
    out.update({k: v for k, v in template.items() if k not in out})
    resources = out.get("Resources", {})
    for name, resource in resources.items():
        keys = [k for k in RESOURCE_ORDER if k in resource] + [k for k in resource if k not in RESOURCE_ORDER]
        resources[name] = {k: resource[k] for k in keys}
    return out


def check_limits(build: Build) -> None:
    """Fail with one line when the template has more resources, parameters or outputs
        than CloudFormation takes."""
    template = build.template
    for section, limit in LIMITS.items():
        count = len(getattr(template, section))
        if count <= limit:
            continue
        crossed = template.crossed.get(section)
        what, where = crossed if crossed else ("", None)
        if where is None:  # no element to blame: the topology's first node, else its file
            first = next((n.location for n in build.model.nodes.values() if n.location), None)
            where = first
        source = f"; the {limit + 1}st comes from {what}" if what else ""
        raise InputError(
            f"the topology needs {count} CloudFormation {section}, over the limit of {limit} per "
            f"template{source}",
            file=where.file if where else build.model.entry,
            line=where.line if where else None,
            hint="split the topology into several service templates, each deployed as its own stack; "
            "stacks of formwright.yaml pass values to each other with !ref",
        )


class CloudFormationPlugin(Plugin):
    """TOSCA → one CloudFormation template (troposphere) with its artifact files and deploy scripts."""

    name = "cloudformation"

    def __init__(self, model: EffectiveModel, *, region: str = "us-east-1") -> None:
        super().__init__(model)
        self.region = region
        self.plan: Plan | None = None
        self.build: Build | None = None
        self.template: dict[str, Any] = {}

    def check_model(self) -> None:
        """Every node and relationship type is supported; what it does not apply is said."""
        check_supported(self.model)
        check_directives(self.model)

    def prepare(self) -> None:
        """Placement, names and software order."""
        self.plan = prepare_plan(self.model)

    def _cross_host_dependencies(self, build: Build) -> None:
        plan = build.plan
        for rel in self.model.relationships():
            if rel.is_a(kinds.HOSTED_ON) or rel.is_a(kinds.ATTACHES_TO):
                continue
            source_host, target_host = plan.host_of.get(rel.source), plan.host_of.get(rel.target)
            if source_host in plan.instances and target_host in plan.instances:
                build.depend(plan.instances[source_host], plan.instances[target_host])
            elif source_host in plan.instances and rel.target in plan.rds_of:
                build.depend(plan.instances[source_host], plan.rds[plan.rds_of[rel.target]])
            elif source_host in plan.instances and rel.target in plan.beanstalk_of:
                build.depend(plan.instances[source_host], plan.beanstalk[plan.beanstalk_of[rel.target]])

    def transform(self) -> None:
        """Build the template: parameters, databases, software per instance, instances, rules, outputs."""
        assert self.plan is not None
        # Tolerated references were warned about at load; a fresh Diagnostics keeps them quiet here.
        build = Build(self.model, self.plan, self.region, Resolver(self.model, Diagnostics()))
        self.build = build
        template = build.template
        template.set_version("2010-09-09")
        template.set_description(
            (self.model.description or f"TOSCA topology {self.model.entry}")[:DESCRIPTION_LIMIT]
        )
        add_input_parameters(build)
        nodes = list(self.model.nodes.values())
        mysql_first = [n for n in nodes if kinds.is_mysql(n)] + [n for n in nodes if not kinds.is_mysql(n)]
        on_instances = {name for names in self.plan.software.values() for name in names}
        for node in mysql_first:
            if node.name not in on_instances and not node.is_a(kinds.COMPUTE):
                visit = visitor_for(node)
                if visit is not None:
                    visit(build, self._at(node))
        self._cross_host_dependencies(build)
        for software in self.plan.software.values():
            for name in software:
                visit = visitor_for(self.model.nodes[name])
                if visit is not None:
                    visit(build, self._at(self.model.nodes[name]))
        template.where = None
        add_publications(build)
        for compute_name in self.plan.instances:
            compute.assemble(build, self._at(self.model.nodes[compute_name]))
        template.where = None
        open_connections(build)
        network.add_ingress_rules(build)
        add_outputs(build)
        check_limits(build)
        self.template = ordered(template.to_dict())
        check_order(build, self.template)

    def _at(self, node: Node) -> Node:
        """`node`, noted as the element being transformed (named if the template goes over a limit)."""
        assert self.build is not None
        self.build.template.where = (f"node '{node.name}'", node.location)
        return node

    def write_artifact(self, folder: Path) -> None:
        """template.yaml, files/, scripts/ and README.md."""
        assert self.build is not None
        write_artifact(folder, self.template, self.build)
