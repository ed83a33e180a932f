"""The schema of `CloudFormationStack` and `GitRepository` documents: the Flux CloudFormation
controller's CRD (its fields, defaults and limits; `projectPath`, `driftCorrection` and `allowCommands`
are ours), as pydantic models. objects.py parses documents with them.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from formwright.sync.durations import parse_interval

STACK_API_GROUP = "cloudformation.contrib.fluxcd.io"
STACK_VERSION = "v1alpha1"
STACK_API_VERSION = f"{STACK_API_GROUP}/{STACK_VERSION}"
STACK_KIND = "CloudFormationStack"
STACK_PLURAL = "cloudformationstacks"
SOURCE_API_GROUP = "source.toolkit.fluxcd.io"
SOURCE_KIND = "GitRepository"
DEFAULT_NAMESPACE = "default"

class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True, frozen=True)


class Metadata(BaseModel):
    """`metadata`: name, namespace, generation (labels and the rest are kept but not used)."""

    model_config = ConfigDict(extra="allow", frozen=True)
    name: str = Field(min_length=1, max_length=253, pattern=r"^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$")
    namespace: str = DEFAULT_NAMESPACE
    generation: int | None = None


class KeyValue(_Model):
    """One `{key, value}` pair of stackParameters or stackTags."""

    key: str = Field(min_length=1)
    value: str

    @field_validator("value", mode="before")
    @classmethod
    def _stringify(cls, value: Any) -> Any:
        if isinstance(value, bool):
            return "true" if value else "false"
        return str(value) if isinstance(value, (int, float)) else value


SOURCE_KINDS = ("GitRepository", "Bucket", "OCIRepository")


class SourceRef(_Model):
    """`spec.sourceRef`: the Flux source the template comes from (the controller's CRD: kind enum,
    name 1..253, namespace 1..63 characters)."""

    kind: Literal["GitRepository", "Bucket", "OCIRepository"]
    name: str = Field(min_length=1, max_length=253)
    namespace: str | None = Field(default=None, min_length=1, max_length=63)
    api_version: str | None = Field(default=None, alias="apiVersion")


class DependencyRef(_Model):
    """One entry of `spec.dependsOn`: another CloudFormationStack."""

    name: str = Field(min_length=1)
    namespace: str | None = None


def _key_values(value: Any) -> Any:
    """Accept `{k: v}` as well as Flux's `[{key, value}]`."""
    if isinstance(value, dict):
        return [{"key": k, "value": v} for k, v in value.items()]
    return value


class StackSpec(_Model):
    """`spec` of a CloudFormationStack (Flux's fields plus `projectPath` and `driftCorrection`)."""

    stack_name: str | None = Field(default=None, alias="stackName", pattern=r"^[A-Za-z][-A-Za-z0-9]{0,127}$")
    template_path: str | None = Field(default=None, alias="templatePath")
    project_path: str | None = Field(default=None, alias="projectPath")
    source_ref: SourceRef = Field(alias="sourceRef")
    interval: float
    poll_interval: float = Field(default=5.0, alias="pollInterval")
    retry_interval: float | None = Field(default=None, alias="retryInterval")
    stack_parameters: list[KeyValue] = Field(default_factory=list, alias="stackParameters")
    stack_tags: list[KeyValue] = Field(default_factory=list, alias="stackTags")
    suspend: bool = False
    destroy_stack_on_deletion: bool = Field(default=False, alias="destroyStackOnDeletion")
    depends_on: list[DependencyRef] = Field(default_factory=list, alias="dependsOn")
    drift_correction: bool = Field(default=False, alias="driftCorrection")
    # `!cmd` resolvers of a projectPath project run on the reconciler host only when the operator says so
    allow_commands: bool = Field(default=False, alias="allowCommands")

    @field_validator("interval", "poll_interval", "retry_interval", mode="before")
    @classmethod
    def _duration(cls, value: Any) -> Any:
        return value if value is None else parse_interval(value)

    @field_validator("template_path", "project_path")
    @classmethod
    def _relative(cls, value: str | None) -> str | None:
        if value is None:
            return value
        check_relative_path(value)
        return value

    @field_validator("stack_parameters", "stack_tags", mode="before")
    @classmethod
    def _pairs(cls, value: Any) -> Any:
        return _key_values(value)

    @field_validator("depends_on", mode="before")
    @classmethod
    def _deps(cls, value: Any) -> Any:
        if isinstance(value, list):
            return [{"name": v} if isinstance(v, str) else v for v in value]
        return value

    @model_validator(mode="after")
    def _one_source(self) -> StackSpec:
        if self.project_path is not None and self.template_path is not None:
            raise ValueError("give templatePath or projectPath, not both")
        if self.project_path is None and not self.stack_name:
            raise ValueError("stackName is required (unless projectPath deploys a whole project)")
        return self


class GitRef(_Model):
    """`spec.ref` of a GitRepository: a branch, a tag or a commit."""

    branch: str | None = None
    tag: str | None = None
    semver: str | None = None
    name: str | None = None
    commit: str | None = Field(default=None, pattern=r"^[0-9a-fA-F]{7,40}$")

    @model_validator(mode="after")
    def _supported(self) -> GitRef:
        if self.semver or self.name:
            raise ValueError("ref.semver and ref.name are not supported; use branch, tag or commit")
        return self


class LocalRef(_Model):
    """A reference to another object of the same namespace (`secretRef`)."""

    name: str = Field(min_length=1)


class GitSpec(BaseModel):
    """`spec` of a GitRepository: url, ref, interval, secretRef (other Flux fields are accepted, ignored)."""

    model_config = ConfigDict(extra="allow", populate_by_name=True, frozen=True)
    url: str = Field(min_length=1)
    ref: GitRef = Field(default_factory=lambda: GitRef(branch="master"))
    interval: float = 60.0
    suspend: bool = False
    secret_ref: LocalRef | None = Field(default=None, alias="secretRef")

    @field_validator("interval", mode="before")
    @classmethod
    def _duration(cls, value: Any) -> Any:
        return parse_interval(value)

    @field_validator("url")
    @classmethod
    def _scheme(cls, value: str) -> str:
        if not re.match(r"^(https?|ssh|file|git)://", value) and not re.match(r"^[\w.-]+@[\w.-]+:", value) \
                and not value.startswith("/"):
            raise ValueError(
                f"'{value}' is not a git URL (https://, ssh://, git@host:path, file:// or /path)"
            )
        return value


def check_relative_path(value: str) -> None:
    """Refuse absolute paths and `..` so a path cannot leave its checkout."""
    path = PurePosixPath(value)
    if path.is_absolute() or ".." in path.parts or "\\" in value:
        raise ValueError(f"'{value}' must be a relative path inside the repository (no '..', no leading '/')")


class GitRepositoryDoc(BaseModel):
    """A GitRepository document."""

    model_config = ConfigDict(extra="allow", populate_by_name=True, frozen=True)
    api_version: str = Field(alias="apiVersion")
    kind: Literal["GitRepository"]
    metadata: Metadata
    spec: GitSpec


class StackDoc(BaseModel):
    """A CloudFormationStack document."""

    model_config = ConfigDict(extra="allow", populate_by_name=True, frozen=True)
    api_version: Literal["cloudformation.contrib.fluxcd.io/v1alpha1"] = Field(alias="apiVersion")
    kind: Literal["CloudFormationStack"]
    metadata: Metadata
    spec: StackSpec
