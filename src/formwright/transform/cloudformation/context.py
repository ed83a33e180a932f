"""The state of one CloudFormation transformation, shared by the visitors.

It holds the troposphere template being built, the placement plan, the resolver for TOSCA
functions, the files to upload, and per-instance pieces (init configs, ingress rules, dependencies)
that are assembled once every visitor ran.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from troposphere import Parameter, Template

from formwright.transform.cloudformation.prepare import Plan
from formwright.tosca.functions import Resolver
from formwright.tosca.model import EffectiveModel

BUCKET_PARAMETER = "ArtifactBucket"


@dataclass
class Ingress:
    """An ingress rule to add to a security group: from the world (`cidr`) or from another group."""

    group: str
    port: int
    cidr: str | None = None
    source_group: str | None = None
    description: str = ""


@dataclass
class Build:
    """Everything the transform phase accumulates."""

    model: EffectiveModel
    plan: Plan
    region: str
    resolver: Resolver
    template: Template = field(default_factory=Template)
    input_parameters: dict[str, str] = field(default_factory=dict)  # TOSCA input -> parameter id
    secret_parameters: set[str] = field(default_factory=set)        # parameters that are NoEcho
    generated_secrets: set[str] = field(default_factory=set)        # NoEcho parameters to generate at deploy
    parameter_values: dict[str, str] = field(default_factory=dict)  # values to pass at deploy (not defaults)
    uploads: dict[str, Path] = field(default_factory=dict)           # S3 key -> local file
    generated: dict[str, str] = field(default_factory=dict)         # S3 key -> generated file text
    operation_hosts: set[str] = field(default_factory=set)          # computes that run operations
    init_configs: dict[str, list[tuple[str, dict]]] = field(default_factory=dict)  # compute -> configs
    security_groups: dict[str, str] = field(default_factory=dict)   # node (compute/rds/app) -> group id
    ingress: list[Ingress] = field(default_factory=list)
    ingress_keys: set[tuple] = field(default_factory=set)             # what `add_ingress` already added
    depends_on: dict[str, set[str]] = field(default_factory=dict)   # resource id -> resource ids
    instance_roles: set[str] = field(default_factory=set)           # computes needing the S3 read role
    capabilities: set[str] = field(default_factory=set)
    db_passwords: dict[str, Any] = field(default_factory=dict)        # rds owner -> password expression
    source_files: dict[str, bool] = field(default_factory=dict)       # relative path -> is a file (asked once)

    def is_source_file(self, relative: str) -> bool:
        """True when `relative` names a file of the source; each path is looked up on disk only once."""
        if relative not in self.source_files:
            self.source_files[relative] = (self.model.root / relative).is_file()
        return self.source_files[relative]

    def parameter(self, name: str, **kwargs: Any) -> str:
        """Add (once) a template parameter and return its logical id."""
        if name not in self.template.parameters:
            self.template.add_parameter(Parameter(name, **kwargs))
            if kwargs.get("NoEcho"):
                self.secret_parameters.add(name)
        return name

    def bucket(self) -> str:
        """The artifact bucket parameter (added on first use)."""
        return self.parameter(BUCKET_PARAMETER, Type="String",
                              Description="S3 bucket holding the deployment artifacts (scripts and files).")

    def upload(self, node: str, relative: str) -> str:
        """Register a file of the source (relative to its root) for upload; return its S3 key."""
        key = f"{node}/{relative}".replace("\\", "/")
        self.uploads[key] = self.model.root / relative
        self.bucket()
        return key

    def generate(self, key: str, text: str) -> str:
        """Register a generated file for upload; return its S3 key."""
        self.generated[key] = text
        self.bucket()
        return key

    def add_config(self, compute: str, name: str, config: dict) -> None:
        """Append an init config (run in this order) to the instance of `compute`."""
        self.init_configs.setdefault(compute, []).append((name, config))

    def add_ingress(self, rule: Ingress) -> None:
        """Collect `rule` unless one opening the same port of the same group to the same peer is there."""
        key = (rule.group, rule.port, rule.source_group if rule.cidr is None else None)
        if key not in self.ingress_keys:
            self.ingress_keys.add(key)
            self.ingress.append(rule)

    def depend(self, resource: str, on: str) -> None:
        """Make `resource` wait for `on` (ignored when they are the same)."""
        if resource != on:
            self.depends_on.setdefault(resource, set()).add(on)
