"""The packager: local paths in a template (and its nested templates) become content-addressed artifacts.

Paths are relative to the template that names them and must stay inside the project (under `--sandbox`,
inside the repository too); a missing path is an error at its `file:line`. Nothing here calls the cloud:
the packaged template names the objects `upload.upload_artifacts` will put.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from formwright import sandbox
from formwright.cloud.regions import object_url
from formwright.errors import InputError
from formwright.packaging import rain
from formwright.packaging.artifacts import Artifact, NestedTemplate, Packaged, artifact_key
from formwright.packaging.places import BY_TYPE, METADATA_PLACES, Place
from formwright.packaging.zips import is_zip, zip_entries, zip_folder
from formwright.template import dump_json, line_of, load, plain

log = logging.getLogger("formwright")

REMOTE = re.compile(r"^(s3|https?)://", re.IGNORECASE)
FOREACH = "Fn::ForEach::"
# expand(template, file, parameter values) -> the template as CloudFormation would process it
Expander = Callable[[dict[str, Any], Path, dict[str, str]], dict[str, Any]]


class Packager:
    """Packages templates for one bucket; artifacts of every template it packaged are kept once each."""

    def __init__(self, *, root: Path, bucket: str | Callable[[], str], region: str, prefix: str = "",
                 expand: Expander | None = None, include_locations: bool = True) -> None:
        self.root = Path(root).resolve()
        self._bucket = bucket  # a name, or how to learn it (asked only once an artifact needs it)
        self.region = region
        self.prefix = prefix
        self.expand = expand  # nested templates with macros are expanded as their parent is
        self.include_locations = include_locations  # AWS::Include files uploaded (else expanded locally)
        self.artifacts: dict[str, Artifact] = {}
        self.nested: list[NestedTemplate] = []
        self.warnings: list[str] = []
        self._visiting: list[Path] = []

    @property
    def bucket(self) -> str:
        """The artifact bucket's name."""
        if callable(self._bucket):
            self._bucket = self._bucket()
        return self._bucket

    # ---- entry points ---------------------------------------------------------------------------------
    def package(self, template: dict[str, Any], file: Path) -> Packaged:
        """`template` (loaded from `file`) packaged in place, with what it needs uploaded."""
        file = Path(file).resolve()
        self._visiting.append(file)
        try:
            packaged = self._package(template, file)
        finally:
            self._visiting.pop()
        return Packaged(packaged, list(self.artifacts.values()), list(self.nested), list(self.warnings),
                    self.bucket if self.artifacts else None)

    def _package(self, template: dict[str, Any], file: Path) -> dict[str, Any]:
        rain.apply(template, file, self)
        metadata = template.get("Metadata")
        if isinstance(metadata, dict):
            for kind, prop in METADATA_PLACES:
                entry = metadata.get(kind)
                if isinstance(entry, dict):
                    self._place(entry, (prop,), Place(kind, (prop,)), kind, file)
        if self.include_locations:
            self._includes(template, file)
        resources = template.get("Resources")
        if isinstance(resources, dict):
            self._resources(resources, file, template)
        return template

    # ---- resources -------------------------------------------------------------------------------------
    def _resources(self, resources: dict[str, Any], file: Path, template: dict[str, Any]) -> None:
        for logical, body in resources.items():
            if str(logical).startswith(FOREACH):
                # [identifier, collection, {logical template: body}]: its body names paths as any resource
                if isinstance(body, list) and len(body) == 3 and isinstance(body[2], dict):
                    self._resources(body[2], file, template)
                continue
            if not isinstance(body, dict):
                continue
            kind = body.get("Type")
            if not isinstance(kind, str) or not (places := BY_TYPE.get(kind, ())):
                continue
            props = body.get("Properties")
            if props is None:
                props = body["Properties"] = type(body)()
            if not isinstance(props, dict):
                continue
            for place in places:
                if place.package_null and get_path(props, place.path) is None \
                        and not self._null_is_folder(kind, props, template):
                    continue
                self._place(props, place.path, place, logical, file)
        globals_ = template.get("Globals")
        function = globals_.get("Function") if isinstance(globals_, dict) else None
        if isinstance(function, dict) and isinstance(function.get("CodeUri"), str):
            self._place(function, ("CodeUri",), BY_TYPE["AWS::Serverless::Function"][0], "Globals.Function",
                        file)

    @staticmethod
    def _null_is_folder(kind: str, props: dict[str, Any], template: dict[str, Any]) -> bool:
        """The AWS CLI packages the template's folder for a function without CodeUri; not when the code
        is given another way (InlineCode, an image, Globals' CodeUri)."""
        if kind != "AWS::Serverless::Function":
            return kind == "AWS::Serverless::LayerVersion"
        if "InlineCode" in props or "ImageUri" in props or props.get("PackageType") == "Image":
            return False
        globals_ = template.get("Globals")
        function = globals_.get("Function") if isinstance(globals_, dict) else None
        return not (isinstance(function, dict) and ("CodeUri" in function or "InlineCode" in function))

    def _place(self, container: dict[str, Any], path: tuple[str, ...], place: Place, logical: str,
               file: Path) -> None:
        parent: Any = container
        for name in path[:-1]:
            parent = parent.get(name) if isinstance(parent, dict) else None
        if not isinstance(parent, dict):
            return
        key = path[-1]
        if key not in parent and not place.package_null:
            return
        value = parent.get(key, ".")
        if not isinstance(value, str) or REMOTE.match(value):
            return  # an intrinsic function, an S3 object or a URL: nothing to package
        where = f"{logical}.{'.'.join(path)}"
        line = line_of(parent, key) if key in parent else line_of(container)
        local = self.resolve(value, file, line=line, what=where)
        if place.form == "template":
            parent[key] = self.nested_template(local, file, line, container)
            return
        artifact = self.artifact_for(local, zipped=place.force_zip, where=where, file=file, line=line)
        if place.form == "object":
            parent[key] = type(parent)({place.bucket_key: self.bucket, place.key_key: artifact.key})
        else:
            parent[key] = f"s3://{self.bucket}/{artifact.key}"

    def _includes(self, node: Any, file: Path) -> None:
        """`Fn::Transform: {Name: AWS::Include, Parameters: {Location: local}}`: the file uploaded."""
        if isinstance(node, dict):
            transform = node.get("Fn::Transform")
            if isinstance(transform, dict) and transform.get("Name") == "AWS::Include":
                params = transform.get("Parameters")
                location = params.get("Location") if isinstance(params, dict) else None
                if isinstance(params, dict) and isinstance(location, str) and not REMOTE.match(location):
                    line = line_of(params, "Location")
                    local = self.resolve(location, file, line=line, what="AWS::Include Location")
                    artifact = self.artifact_for(local, zipped=False, where="AWS::Include", file=file,
                                                 line=line)
                    params["Location"] = f"s3://{self.bucket}/{artifact.key}"
            for value in node.values():
                self._includes(value, file)
        elif isinstance(node, list):
            for value in node:
                self._includes(value, file)

    # ---- paths and artifacts ---------------------------------------------------------------------------
    def resolve(self, value: str, file: Path, *, line: int | None, what: str) -> Path:
        """`value` relative to the template's folder: it must exist inside the project."""
        if "${" in value:
            raise InputError(f"{what}: the path '{value}' is built from an expression", file=str(file),
                             line=line, hint="name one folder or file; a loop's identifier is not expanded "
                                             "in paths")
        base = file.parent
        candidate = Path(value) if Path(value).is_absolute() else base / value
        candidate = sandbox.confine(candidate, what=what, base=base, file=str(file), line=line)
        try:
            real = candidate.resolve(strict=True)
        except FileNotFoundError:
            raise InputError(f"{what}: '{value}' does not exist (looked for {candidate})", file=str(file),
                             line=line, hint="paths are relative to the template that names them") from None
        except (OSError, RuntimeError) as err:
            raise InputError(f"{what}: '{value}' cannot be read: {err}", file=str(file), line=line) from None
        self.check_inside(real, what=what, value=value, file=file, line=line)
        return real

    def check_inside(self, real: Path, *, what: str, value: str, file: Path, line: int | None) -> None:
        """A path (symlinks resolved) that leaves the project is refused."""
        if real != self.root and not real.is_relative_to(self.root):
            raise InputError(f"{what}: '{value}' is outside the project {self.root}", file=str(file),
                             line=line, hint="move it into the project folder (symlinks out of it are "
                                             "refused too)")

    def artifact_for(self, local: Path, *, zipped: bool, where: str, file: Path,
                     line: int | None) -> Artifact:
        """The artifact for a folder (zipped) or a file (as is, or zipped alone when `zipped`)."""
        def inside(path: Path) -> None:
            self.check_inside(path.resolve(), what=where, value=str(path), file=file, line=line)

        if local.is_dir():
            self._dependency_note(local, where, file, line)
            data = zip_folder(local, check=inside)
            return self.add(local, "zip", data, ".zip")
        if zipped and not is_zip(local):
            return self.add(local, "zip", zip_entries([(local.name, local)]), ".zip")
        return self.add(local, "file", local.read_bytes(), local.suffix)

    def add(self, local: Path, kind: str, data: bytes, suffix: str) -> Artifact:
        """Keep an artifact (once per content)."""
        key = artifact_key(self.prefix, data, suffix)
        if key not in self.artifacts:
            self.artifacts[key] = Artifact(self.display(local), kind, key, data)
        return self.artifacts[key]

    def display(self, path: Path) -> str:
        """The path as the manifest shows it: relative to the project."""
        return path.relative_to(self.root).as_posix() if path.is_relative_to(self.root) else str(path)

    def _dependency_note(self, folder: Path, where: str, file: Path, line: int | None) -> None:
        """Dependencies are not installed (the SAM CLI's `sam build` does that): say so when a function's
        folder lists some but vendors none."""
        missing = []
        requirements = folder / "requirements.txt"
        if requirements.is_file() and _requirement_lines(requirements) \
                and not any(folder.glob("*.dist-info")):
            missing.append(("requirements.txt", f"pip install -r requirements.txt -t {self.display(folder)}"))
        package = folder / "package.json"
        if package.is_file() and _node_dependencies(package) and not (folder / "node_modules").is_dir():
            missing.append(("package.json", f"cd {self.display(folder)} && npm install --omit=dev"))
        for manifest, fix in missing:
            message = (f"{file}:{line or 1}: {where}: {self.display(folder)}/{manifest} lists dependencies "
                       f"but none is vendored in the folder; formwright packages the folder as it is and "
                       f"does not "
                       f"install dependencies (run `{fix}` first)")
            if message not in self.warnings:
                self.warnings.append(message)
                log.warning("warning: %s", message)

    # ---- nested templates ------------------------------------------------------------------------------
    def nested_template(self, local: Path, parent_file: Path, line: int | None,
                        resource_props: dict[str, Any]) -> str:
        """Package the nested template as its parent (recursively), keep it as an artifact, return its URL."""
        if local in self._visiting:
            chain = " -> ".join(self.display(p) for p in [*self._visiting, local])
            raise InputError(f"nested templates form a cycle: {chain}", file=str(parent_file), line=line,
                             hint="a template cannot contain itself")
        if not local.is_file():
            raise InputError(f"'{self.display(local)}' is not a template file", file=str(parent_file),
                             line=line)
        template = load(local)
        self._visiting.append(local)
        try:
            source = self._package(template, local)
            packaged = source
            if self.expand is not None:
                params = resource_props.get("Parameters")
                values = {k: str(v) for k, v in params.items() if isinstance(v, str | int | float)} \
                    if isinstance(params, dict) else {}
                packaged = self.expand(source, local, values)
        finally:
            self._visiting.pop()
        body = dump_json(plain(packaged), indent=None).encode("utf-8")
        artifact = self.add(local, "template", body, ".json")
        self.nested.append(NestedTemplate(local, packaged, artifact.key, source))
        return object_url(self.bucket, artifact.key, self.region)


def get_path(props: dict[str, Any], path: tuple[str, ...]) -> Any:
    """The value at `path` under `props`, else None."""
    value: Any = props
    for name in path:
        if not isinstance(value, dict):
            return None
        value = value.get(name)
    return value


def _requirement_lines(path: Path) -> list[str]:
    lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
    return [line for line in (raw.split("#", 1)[0].strip() for raw in lines) if line]


def _node_dependencies(path: Path) -> bool:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (ValueError, OSError):
        return False
    return isinstance(data, dict) and bool(data.get("dependencies"))


def package_template(template: dict[str, Any], file: Path, *, root: Path, bucket: str | Callable[[], str],
                     region: str,
                     prefix: str = "", expand: Expander | None = None,
                     include_locations: bool = True) -> Packaged:
    """Package one template (see `Packager`)."""
    packager = Packager(root=root, bucket=bucket, region=region, prefix=prefix, expand=expand,
                        include_locations=include_locations)
    return packager.package(template, file)
