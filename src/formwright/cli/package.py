"""`formwright package`: a project version in one verifiable archive (`package [DIR] -o NAME-VERSION.tar.gz`),
or one template packaged as `aws cloudformation package` does (`package TEMPLATE --bucket B -o OUT`)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import typer

from formwright.cli.common import (
    DirArgument,
    Output,
    OutputOption,
    PlainProfileOption,
    PlainRegionOption,
    TargetOption,
    console,
    emit_json,
    project_dir,
)
from formwright.errors import InputError
from formwright.model.project import PROJECT_FILE


def is_template(path: Path | None) -> bool:
    """True for an argument naming a template file (not a project folder or its formwright.yaml)."""
    return path is not None and path.is_file() and path.name != PROJECT_FILE \
        and path.suffix.lower() in (".yaml", ".yml", ".json", ".template")


def register(app: typer.Typer) -> None:
    """Add `package` to the application."""

    @app.command()
    def package(
        directory: Path | None = DirArgument,
        out: Path | None = typer.Option(None, "-o", "--out", metavar="PATH",
                                        help="The archive to write (default: ./NAME-VERSION.tar.gz); for a "
                                             "TEMPLATE, the packaged template (default: standard output)."),
        bucket: str | None = typer.Option(None, "--bucket", metavar="BUCKET",
                                          help="With a TEMPLATE: the S3 bucket its artifacts go to."),
        prefix: str = typer.Option("", "--prefix", metavar="PREFIX",
                                   help="With a TEMPLATE: a key prefix for its artifacts."),
        target: str | None = TargetOption,
        region: str | None = PlainRegionOption,
        profile: str | None = PlainProfileOption,
        output: Output = OutputOption,
    ) -> None:
        """Pack the manifest, templates, actions and hooks with a checksum manifest; install it with
        `formwright instance create NAME --from ARCHIVE` (or `instance upgrade NAME --from ARCHIVE`).
        Given a TEMPLATE and --bucket, package it as `aws cloudformation package` does instead: upload its
        local artifacts and nested templates (only what the bucket lacks) and write the rewritten template."""
        if bucket is not None or is_template(directory):
            package_template_command(directory, bucket, prefix, out, target, region, profile, output)
            return
        from formwright.lifecycle.package import build_package

        path, info = build_package(project_dir(directory), out)
        if output is Output.json:
            emit_json({"ok": True, "archive": str(path), **info.to_json()})
            return
        console.print(f"packaged {info.name} {info.version}: {path} ({info.files} files, {info.digest})",
                      highlight=False)


def package_template_command(template: Path | None, bucket: str | None, prefix: str, out: Path | None,
                             target: str | None, region: str | None, profile: str | None,
                             output: Output) -> None:
    """`formwright package TEMPLATE --bucket B [-o OUT]`."""
    from formwright import sandbox
    from formwright.cloud.session import resolve_target
    from formwright.packaging import package_template
    from formwright.packaging.upload import upload_artifacts
    from formwright.template import dump, load, plain

    if template is None or not template.is_file():
        raise InputError("package --bucket takes a template file", file=str(template) if template else None,
                         hint="formwright package template.yaml --bucket B -o packaged.yaml")
    if not bucket:
        raise InputError("packaging a template needs --bucket", file=str(template),
                         hint="formwright package template.yaml --bucket B -o packaged.yaml")
    root = _project_root(template.resolve().parent)
    sandbox.anchor(root)
    cloud = resolve_target(target, region, profile=profile)
    packaged = package_template(load(template), template, root=root, bucket=bucket, region=cloud.region,
                                prefix=prefix)
    uploaded = 0
    if packaged.artifacts:
        s3 = cloud.client("s3")
        _check_bucket(s3, bucket)
        uploaded = upload_artifacts(s3, bucket, packaged.artifacts)
    fmt = "json" if out is not None and out.suffix.lower() == ".json" else "yaml"
    text = dump(plain(packaged.template), fmt) + "\n"
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text, encoding="utf-8")
    if output is Output.json:
        emit_json({"ok": True, "template": str(out) if out else None, "bucket": bucket, "uploaded": uploaded,
                   "artifacts": [a.to_json(bucket) for a in packaged.artifacts]})
    elif out is None:
        sys.stdout.write(text)
    else:
        console.print(f"packaged {template} into {out}: {len(packaged.artifacts)} artifact(s) in "
                      f"s3://{bucket}, {uploaded} uploaded", highlight=False)


def _project_root(folder: Path) -> Path:
    """The project a template belongs to (the nearest formwright.yaml upward), else its own folder: paths
    may not leave it."""
    for candidate in (folder, *folder.parents):
        if (candidate / PROJECT_FILE).is_file():
            return candidate
    return folder


def _check_bucket(s3: Any, bucket: str) -> None:
    """The bucket must exist, as for `aws cloudformation package` (formwright does not create it here)."""
    from botocore.exceptions import ClientError

    from formwright.cloud.errors import error_code

    try:
        s3.head_bucket(Bucket=bucket)
    except ClientError as err:
        code = error_code(err)
        if code in ("404", "NoSuchBucket", "NotFound"):
            raise InputError(f"bucket '{bucket}' does not exist", hint="create it first (for example "
                             f"`aws s3 mb s3://{bucket}`), or let `formwright deploy` use its managed "
                             "bucket") from None
        raise
