"""The state of one CloudFormation transformation, shared by the visitors.

It holds the troposphere template being built, the placement plan, the resolver for TOSCA
functions, the files to upload, and per-instance pieces (init configs, ingress rules, dependencies)
that are assembled once every visitor ran.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

import troposphere
from troposphere import Parameter, Template

from formwright import sandbox
from formwright.sandbox import Sandbox
from formwright.tosca.diagnostics import Problem, ToscaErrors
from formwright.tosca.functions import Resolver
from formwright.tosca.model import EffectiveModel, Location
from formwright.transform.cloudformation.prepare import Plan

if TYPE_CHECKING:
    from formwright.transform.cloudformation.outputs import Published

BUCKET_PARAMETER = "ArtifactBucket"
DIGEST_CHARS = 16      # hex digits of the SHA-256 naming a file's folder under files/ (and in the bucket)
SMALL_FILE = 1 << 20   # a source up to this size is kept in memory after hashing, for writing files/
# CloudFormation's quotas per template (troposphere's constants): section -> most entries
LIMITS = {"resources": troposphere.MAX_RESOURCES, "parameters": troposphere.MAX_PARAMETERS,
          "outputs": troposphere.MAX_OUTPUTS}


def content_key(digest: str, name: str) -> str:
    """The key (under files/ and in the bucket) of a file with SHA-256 `digest` named `name`."""
    return f"{digest[:DIGEST_CHARS]}/{name}"


class CountingTemplate(Template):
    """A troposphere Template that counts past CloudFormation's quotas instead of raising ValueError.

    `where` is the TOSCA element being transformed (set by the plugin); `crossed` records, per section
    (resources, parameters, outputs), where the first entry over the limit came from.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.where: tuple[str, Location | None] | None = None  # (what, location) being transformed
        self.crossed: dict[str, tuple[str, Location | None] | None] = {}

    def _count(self, section: str, entries: dict) -> None:
        if len(entries) == LIMITS[section] and section not in self.crossed:
            self.crossed[section] = self.where

    def add_resource(self, resource: Any) -> Any:
        self._count("resources", self.resources)
        return self._update(self.resources, resource)

    def add_parameter(self, parameter: Any) -> Any:
        self._count("parameters", self.parameters)
        return self._update(self.parameters, parameter)

    def add_output(self, output: Any) -> Any:
        self._count("outputs", self.outputs)
        return self._update(self.outputs, output)


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
    template: CountingTemplate = field(default_factory=CountingTemplate)
    input_parameters: dict[str, str] = field(default_factory=dict)  # TOSCA input -> parameter id
    secret_parameters: set[str] = field(default_factory=set)        # parameters that are NoEcho
    generated_secrets: set[str] = field(default_factory=set)        # NoEcho parameters to generate at deploy
    parameter_values: dict[str, str] = field(default_factory=dict)  # values to pass at deploy (not defaults)
    uploads: dict[str, Path] = field(default_factory=dict)           # S3 key -> local file (one per content)
    upload_data: dict[str, bytes] = field(default_factory=dict)     # S3 key -> content of a small upload
    upload_keys: dict[str, str] = field(default_factory=dict)       # source-relative path -> S3 key
    content_keys: dict[str, str] = field(default_factory=dict)      # SHA-256 -> S3 key
    generated: dict[str, str] = field(default_factory=dict)         # S3 key -> generated file text
    operation_hosts: set[str] = field(default_factory=set)          # computes that run operations
    init_configs: dict[str, list[tuple[str, dict]]] = field(default_factory=dict)  # compute -> configs
    security_groups: dict[str, str] = field(default_factory=dict)   # node (compute/rds/app) -> group id
    ingress: list[Ingress] = field(default_factory=list)
    ingress_keys: set[tuple] = field(default_factory=set)             # what `add_ingress` already added
    depends_on: dict[str, set[str]] = field(default_factory=dict)   # resource id -> resource ids
    instance_roles: set[str] = field(default_factory=set)           # computes needing the S3 read role
    capabilities: set[str] = field(default_factory=set)
    db_passwords: dict[str, Any] = field(default_factory=dict)  # rds owner -> password expression
    source_files: dict[str, bool] = field(default_factory=dict)  # relative path -> is a file (asked once)

    replaced_inputs: dict[str, str] = field(default_factory=dict)  # input -> parameter every reference uses
    published: dict[tuple[str, str], Published] = field(default_factory=dict)  # (node, operation) -> outputs
    devices: dict[str, set[str]] = field(default_factory=dict)  # instance id -> device letters attached
    zones: dict[str, Any] = field(default_factory=dict)  # instance id -> the zone it must be in (a volume's)
    own_parameters: dict[str, str] = field(default_factory=dict)  # formwright's parameter name -> logical id

    def warn(self, message: str, where: Location | None, hint: str | None = None) -> None:
        """A tolerated problem of the topology: a warning of the transform, an error with --strict."""
        problem = Problem(message, where.file if where else self.model.entry,
                          where.line if where else None, hint)
        if self.model.strict:
            raise ToscaErrors([problem])
        self.model.warnings.append(problem)

    def is_source_file(self, relative: str) -> bool:
        """True when `relative` names a file of the source; each path is looked up on disk only once."""
        if relative not in self.source_files:
            self.source_files[relative] = (self.model.root / relative).is_file()
        return self.source_files[relative]

    def __post_init__(self) -> None:
        # the scripts and `formwright deploy` pass the bucket by this name: no input or resource may take it
        self.plan.namer.reserve(BUCKET_PARAMETER)

    def add_parameter(self, logical: str, **kwargs: Any) -> str:
        """Add template parameter `logical` (a name the namer gave) and return it."""
        self.template.add_parameter(Parameter(logical, **kwargs))
        if kwargs.get("NoEcho"):
            self.secret_parameters.add(logical)
        return logical

    def parameter(self, name: str, **kwargs: Any) -> str:
        """Add (once) formwright's own parameter `name` and return its logical id: `name`, or `name` with a
        number when an input's parameter or a resource already has it (a TOSCA input `key_name` is
        parameter KeyName, formwright's key pair parameter is then KeyName2)."""
        logical = self.own_parameters.get(name)
        if logical is None:
            fixed = name if name == BUCKET_PARAMETER else self.plan.namer.name(name)
            logical = self.own_parameters[name] = self.add_parameter(fixed, **kwargs)
        return logical

    def bucket(self) -> str:
        """The artifact bucket parameter (added on first use)."""
        return self.parameter(BUCKET_PARAMETER, Type="String",
                              Description="S3 bucket holding the deployment artifacts (scripts and files).")

    def _key_for(self, digest: str, name: str) -> tuple[str, bool]:
        """The key of content `digest` (the first name it came with), and whether it is new."""
        key = self.content_keys.get(digest)
        if key is not None:
            return key, False
        key = self.content_keys[digest] = content_key(digest, name)
        return key, True

    def upload(self, relative: str) -> str:
        """Register a file of the source (relative to its root) for upload; return its S3 key.

        Content-addressed: `<sha256 prefix>/<name>`, so every node shipping the same content shares one
        key (one file under files/, one object in the bucket). Each source path is hashed only once.
        """
        key = self.upload_keys.get(relative)
        if key is None:
            path = self.model.root / relative
            if sandbox.active() is not None:  # a symlink out of the source would upload a host file
                path = Sandbox(self.model.root).confine(relative, what="artifact file")
            with path.open("rb") as stream:
                data = stream.read(SMALL_FILE + 1)
                if len(data) > SMALL_FILE:
                    digest = hashlib.sha256(data)
                    while chunk := stream.read(1 << 20):
                        digest.update(chunk)
                    small = None
                else:
                    digest, small = hashlib.sha256(data), data
            key, new = self._key_for(digest.hexdigest(), PurePosixPath(relative).name)
            if new:
                self.uploads[key] = path
                if small is not None:
                    self.upload_data[key] = small
            self.upload_keys[relative] = key
        self.bucket()
        return key

    def generate(self, name: str, text: str) -> str:
        """Register a generated file (content-addressed like `upload`) for upload; return its S3 key."""
        key, new = self._key_for(hashlib.sha256(text.encode("utf-8")).hexdigest(), name)
        if new:
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
