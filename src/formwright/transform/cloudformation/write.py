"""Write artifact: template.yaml, files/, scripts/ (deploy, upload, create, cleanup, util/) and README.md."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import re
import shlex
import shutil
from pathlib import Path
from typing import Any

import jinja2
import jinja2.bccache

from formwright.transform.cloudformation.context import BUCKET_PARAMETER, Build
from formwright.transform.cloudformation.yaml_out import template_yaml

SCRIPTS = {
    "deploy.sh": "deploy.sh.j2",
    "file-upload.sh": "file-upload.sh.j2",
    "create-stack.sh": "create-stack.sh.j2",
    "cleanup.sh": "cleanup.sh.j2",
    "util/common.sh": "common.sh.j2",
}


class _BestEffortCache(jinja2.FileSystemBytecodeCache):
    """A cache that never fails a transform: compiled code that cannot be saved is compiled next time."""

    def dump_bytecode(self, bucket: jinja2.bccache.Bucket) -> None:
        with contextlib.suppress(OSError):
            super().dump_bytecode(bucket)


def _bytecode_cache(env: jinja2.Environment) -> jinja2.BytecodeCache | None:
    """Jinja's per-user cache folder (in the temp directory, owner-only), so the scripts' templates are
    compiled once rather than on every run (the file names carry the syntax options, which the compiled
    code depends on); none when that folder cannot be made safe."""
    options = (env.trim_blocks, env.lstrip_blocks, env.keep_trailing_newline, env.comment_start_string,
               env.comment_end_string, jinja2.__version__)
    tag = hashlib.sha256(repr(options).encode()).hexdigest()[:12]
    try:
        return _BestEffortCache(pattern=f"__formwright_{tag}_%s.cache")
    except (RuntimeError, OSError):
        return None


@functools.cache
def _environment() -> jinja2.Environment:
    loader = jinja2.PackageLoader("formwright.transform.cloudformation", "scripts")
    # auto_reload off: the templates are package data, so no stat of each file on every get_template
    env = jinja2.Environment(loader=loader, trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True,
                             auto_reload=False,
                             autoescape=False, undefined=jinja2.StrictUndefined,  # noqa: S701 - shell, not HTML
                             comment_start_string="{##", comment_end_string="##}")  # bash uses ${#array}
    env.bytecode_cache = _bytecode_cache(env)
    env.filters["q"] = lambda value: shlex.quote(str(value))
    return env


def stack_name(entry: str) -> str:
    """A CloudFormation stack name from the service template's file name."""
    stem = Path(entry.split("!")[-1]).stem
    name = re.sub(r"[^A-Za-z0-9-]+", "-", stem).strip("-") or "tosca"
    return name if name[0].isalpha() else f"tosca-{name}"


def script_context(template: dict[str, Any], build: Build) -> dict[str, Any]:
    """What the script and README templates are rendered with."""
    parameters = template.get("Parameters", {})
    secrets = sorted(build.secret_parameters)
    return {
        "stack_name": stack_name(build.model.entry),
        "entry": build.model.entry,
        "source": build.model.source or build.model.entry,
        "region": build.region,
        "uses_bucket": BUCKET_PARAMETER in parameters,
        "bucket_parameter": BUCKET_PARAMETER,
        "secrets": [(name, "yes" if name in build.generated_secrets else "no") for name in secrets],
        "generated": sorted(build.generated_secrets),
        "capabilities": sorted(build.capabilities),
        "inputs": list(build.model.inputs),
        "resources": len(template.get("Resources", {})),
        "parameters": [(name, str(p.get("Description", "")).replace("|", "/").replace("\n", " "))
                       for name, p in parameters.items()],
        "outputs": list(template.get("Outputs", {})),
    }


def _write_files(files: Path, build: Build) -> None:
    """files/: each distinct content once, as `<sha256 prefix>/<name>` (its key in the bucket)."""
    made: set[str] = set()

    def target(key: str) -> Path:
        folder = key.partition("/")[0]
        if folder not in made:
            (files / folder).mkdir(exist_ok=True)
            made.add(folder)
        return files / key

    for key, text in sorted(build.generated.items()):
        target(key).write_text(text, encoding="utf-8")
    for key, source in sorted(build.uploads.items()):
        data = build.upload_data.get(key)
        if data is None:  # big: streamed from the source
            shutil.copyfile(source, target(key))
        else:
            target(key).write_bytes(data)


def write_artifact(folder: Path, template: dict[str, Any], build: Build) -> None:
    """Write the whole artifact into `folder` (an empty staging folder)."""
    (folder / "template.yaml").write_text(template_yaml(template), encoding="utf-8")
    files = folder / "files"
    files.mkdir()
    _write_files(files, build)
    env = _environment()
    context = script_context(template, build)
    context["secrets_only"] = [name for name, _ in context["secrets"]]
    (folder / "scripts" / "util").mkdir(parents=True, exist_ok=True)
    for name, source in SCRIPTS.items():
        target = folder / "scripts" / name
        target.write_text(env.get_template(source).render(context), encoding="utf-8")
        target.chmod(0o755 if not name.startswith("util/") else 0o644)
    readme = env.get_template("README.md.j2").render({**context, "secrets": context["secrets_only"]})
    (folder / "README.md").write_text(readme, encoding="utf-8")

