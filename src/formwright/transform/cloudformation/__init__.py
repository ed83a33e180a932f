"""The CloudFormation plugin: TOSCA → CloudFormation template, files and deploy scripts.

`transform_tosca` runs the whole lifecycle and writes the artifact; `prepare_stack` is what the
engine calls for a `tosca:` stack of `formwright.yaml`: transform, upload the files, and hand back
the template with the parameter values to pass (secrets included, never printed).
"""

from __future__ import annotations

import pathlib
import secrets
import string
from dataclasses import dataclass, field
from typing import Any

from formwright.tosca import load_model, open_source
from formwright.transform.cloudformation.context import BUCKET_PARAMETER
from formwright.transform.cloudformation.plugin import CloudFormationPlugin
from formwright.transform.collector import collector_paused
from formwright.transform.plugin import run_plugin

__all__ = ["CloudFormationPlugin", "PreparedStack", "TransformResult", "prepare_stack", "transform_tosca"]

_ALPHABET = string.ascii_letters + string.digits


@dataclass
class TransformResult:
    """What a transform produced: the template, where it was written, and what deploying needs."""

    template: dict[str, Any]
    out: pathlib.Path | None
    parameter_values: dict[str, str] = field(default_factory=dict, repr=False)
    generated_secrets: list[str] = field(default_factory=list)
    secret_parameters: list[str] = field(default_factory=list)
    capabilities: list[str] = field(default_factory=list)
    warnings: list[Any] = field(default_factory=list)  # formwright.tosca.diagnostics.Problem

    @property
    def template_path(self) -> pathlib.Path | None:
        """OUT/template.yaml, when written."""
        return None if self.out is None else self.out / "template.yaml"


@dataclass
class PreparedStack:
    """A transformed TOSCA stack ready to deploy: template, parameter values to pass, capabilities."""

    template: dict
    parameters: dict[str, str] = field(repr=False)
    capabilities: list[str]
    generated: list[str] = field(default_factory=list)  # parameters holding passwords made just now
    warnings: list[Any] = field(default_factory=list)  # what TOSCAna tolerated, the plugin did not apply


def transform_tosca(src: pathlib.Path, out: pathlib.Path | None, *, inputs: dict[str, Any] | None = None,
                    region: str = "us-east-1", strict: bool = False, force: bool = False) -> TransformResult:
    """Parse SRC, run the CloudFormation plugin's lifecycle, and write the artifact to OUT (if given).

    `strict` makes what TOSCAna tolerated an error; `force` lets OUT replace a previous artifact."""
    with collector_paused(), open_source(pathlib.Path(src)) as source:
        model = load_model(source, inputs or {}, strict=strict)
        plugin = CloudFormationPlugin(model, region=region)
        run_plugin(plugin, out, force)
    build = plugin.build
    assert build is not None
    return TransformResult(
        template=plugin.template, out=None if out is None else out.resolve(),
        parameter_values=dict(build.parameter_values), generated_secrets=sorted(build.generated_secrets),
        secret_parameters=sorted(build.secret_parameters), capabilities=sorted(build.capabilities),
        warnings=list(model.warnings),
    )


def generate_password(length: int = 24) -> str:
    """A random alphanumeric password (valid for RDS MySQL)."""
    return "".join(secrets.choice(_ALPHABET) for _ in range(length))


def prepare_stack(
    src: pathlib.Path,
    *,
    inputs: dict[str, str],
    region: str,
    out_dir: pathlib.Path,
    s3_client=None,
    bucket: str | None = None,
    bucket_owner: str | None = None,
) -> PreparedStack:
    """Transform SRC into OUT_DIR, upload OUT_DIR/files/ to `bucket` (when given; checked to be
    `bucket_owner`'s) and return the stack."""
    result = transform_tosca(src, out_dir, inputs=inputs, region=region, force=True)
    parameters = dict(result.parameter_values)
    for name in result.generated_secrets:
        parameters[name] = generate_password()
    if BUCKET_PARAMETER in result.template.get("Parameters", {}):
        if bucket:
            parameters[BUCKET_PARAMETER] = bucket
        if s3_client is not None and bucket:
            from formwright.transform.cloudformation.upload import upload_files  # botocore: deploys only

            upload_files(s3_client, bucket, out_dir / "files", region, bucket_owner)
    return PreparedStack(template=result.template, parameters=parameters, capabilities=result.capabilities,
                         generated=list(result.generated_secrets), warnings=list(result.warnings))
