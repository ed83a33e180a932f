"""`CloudFormationStack` and `GitRepository` documents, with the Flux CloudFormation controller's schema
(schema.py; the stack resource's names, `STACK_API_GROUP` and the like, are read from here too).

Objects are read from YAML files (many documents per file, other kinds ignored) or handed over by
the Kubernetes operator as dicts. Parsing goes through pydantic; every error names `file:line` and
the field (`spec.stackParameters[0].key`), never a traceback.
"""

from __future__ import annotations

import base64
import hashlib
import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

from formwright.errors import InputError
from formwright.sync.schema import (
    DEFAULT_NAMESPACE,
    SOURCE_API_GROUP,
    SOURCE_KIND,
    STACK_API_VERSION,
    STACK_KIND,
    GitRef,
    GitRepositoryDoc,
    StackDoc,
    StackSpec,
)
from formwright.sync.schema import STACK_API_GROUP as STACK_API_GROUP
from formwright.sync.schema import STACK_PLURAL as STACK_PLURAL
from formwright.sync.schema import STACK_VERSION as STACK_VERSION
from formwright.template.document import Mapping, Sequence, TemplateLoader


@dataclass(frozen=True)
class GitRepository:
    """A git source: where to clone from and which ref to follow."""

    namespace: str
    name: str
    url: str
    ref: GitRef
    interval: float
    file: str | None = None
    line: int | None = None
    #: spec.secretRef.name, and the Secret's keys (Flux's: username/password, identity/known_hosts)
    secret_name: str = ""
    credentials: tuple[tuple[str, str], ...] = field(default=(), repr=False)

    @property
    def key(self) -> str:
        """`namespace/name`."""
        return f"{self.namespace}/{self.name}"

    @property
    def auth(self) -> dict[str, str]:
        """The Secret's keys for git (empty without secretRef)."""
        return dict(self.credentials)


@dataclass(frozen=True)
class StackObject:
    """A CloudFormationStack, resolved: its identity, spec, a hash of the spec, where it was written."""

    namespace: str
    name: str
    spec: StackSpec
    generation: int | None = None
    file: str | None = None
    line: int | None = None
    raw_spec: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    @property
    def key(self) -> str:
        """`namespace/name`."""
        return f"{self.namespace}/{self.name}"

    @property
    def source_key(self) -> str:
        """`namespace/name` of its GitRepository (the object's namespace when not given)."""
        ref = self.spec.source_ref
        return f"{ref.namespace or self.namespace}/{ref.name}"

    @property
    def template_path(self) -> str:
        """The template inside the source (Flux's default `template.yaml`)."""
        return self.spec.template_path or "template.yaml"

    @property
    def retry_interval(self) -> float:
        """retryInterval, defaulting to interval as Flux does."""
        return self.spec.retry_interval or self.spec.interval

    @property
    def dependencies(self) -> list[str]:
        """`namespace/name` of every object in dependsOn."""
        return [f"{d.namespace or self.namespace}/{d.name}" for d in self.spec.depends_on]

    @property
    def spec_hash(self) -> str:
        """A hash of the spec as written; a new one means a new generation."""
        text = json.dumps(
            self.spec.model_dump(mode="json", by_alias=True, exclude={"suspend"}), sort_keys=True
        )
        return hashlib.sha256(text.encode()).hexdigest()

    @property
    def where(self) -> str:
        """`file:line` or the object's key, for messages."""
        if self.file and self.line:
            return f"{self.file}:{self.line}"
        return self.key


@dataclass
class ObjectSet:
    """Every object found: stacks and sources by `namespace/name`."""

    stacks: dict[str, StackObject] = field(default_factory=dict)
    sources: dict[str, GitRepository] = field(default_factory=dict)
    #: v1 Secrets by `namespace/name`: their data (base64-decoded) and stringData
    secrets: dict[str, dict[str, str]] = field(default_factory=dict)

    def find(self, name: str) -> StackObject:
        """The stack object called `name` or `namespace/name`; a clear error otherwise."""
        if name in self.stacks:
            return self.stacks[name]
        matches = [o for o in self.stacks.values() if o.name == name]
        if len(matches) == 1:
            return matches[0]
        if len(matches) > 1:
            raise InputError(f"'{name}' is ambiguous", hint="use namespace/name: " +
                             ", ".join(sorted(o.key for o in matches)))
        raise InputError(f"no CloudFormationStack '{name}'",
                         hint=f"known: {', '.join(sorted(self.stacks)) or 'none'}")


# ---- parsing ------------------------------------------------------------------------------------
def _loc_text(loc: tuple[Any, ...]) -> str:
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def _line_for(document: Any, loc: tuple[Any, ...]) -> int | None:
    """The deepest line known along `loc` inside the loaded document."""
    node, line = document, getattr(document, "line", None)
    for part in loc:
        if isinstance(node, Mapping) and isinstance(part, str):
            spelled = part if part in node else next((k for k in node if k == part), None)
            if spelled is None:
                return line
            line = node.line_of(spelled) or line
            node = node[spelled]
        elif isinstance(node, Sequence) and isinstance(part, int) and part < len(node):
            node = node[part]
            line = getattr(node, "line", None) or line
        else:
            return line
    return line


def _validation_error(err: ValidationError, document: Any, file: str | None, what: str,
                      model: type[BaseModel]) -> InputError:
    first = err.errors()[0]
    loc = tuple(p for p in first["loc"] if p not in ("function-after[_one_source(), StackSpec]",))
    message = first["msg"].removeprefix("Value error, ")
    hint = None
    if first["type"] == "extra_forbidden" and loc:  # a misspelt field: kubectl's "unknown field", and ours
        from formwright.model.keys import did_you_mean

        message = f"unknown field '{loc[-1]}'"
        known = _fields_at(model, loc[:-1])
        hint = did_you_mean(str(loc[-1]), known) if known else None
    field_name = _loc_text(loc)
    text = f"{what}: {field_name}: {message}" if field_name else f"{what}: {message}"
    return InputError(text, file=file, line=_line_for(document, loc) or getattr(document, "line", None),
                      hint=hint)


def _fields_at(model: type[BaseModel], path: tuple[Any, ...]) -> list[str]:
    """The field names (as written: aliases) of the object at `path` inside `model`, [] when unknown."""
    import typing

    current: Any = model
    for part in path:
        if isinstance(part, int):
            continue
        fields = {(f.alias or name): f for name, f in current.model_fields.items()}
        field = fields.get(part)
        if field is None:
            return []
        candidates = [field.annotation, *typing.get_args(field.annotation)]
        candidates += [inner for c in list(candidates) for inner in typing.get_args(c)]
        current = next((c for c in candidates if isinstance(c, type) and issubclass(c, BaseModel)), None)
        if current is None:
            return []
    return [(f.alias or name) for name, f in current.model_fields.items()]


def parse_document(document: Any, *, file: str | None = None) -> StackObject | GitRepository | None:
    """One loaded document as a StackObject or GitRepository; None for other kinds."""
    line = getattr(document, "line", None)
    if not isinstance(document, dict):
        raise InputError("a document must be a mapping with apiVersion and kind", file=file, line=line)
    kind = document.get("kind")
    api_version = str(document.get("apiVersion", ""))
    if kind == STACK_KIND:
        if api_version != STACK_API_VERSION:
            raise InputError(f"apiVersion '{api_version}' is not {STACK_API_VERSION}", file=file,
                             line=_line_for(document, ("apiVersion",)))
        try:
            doc = StackDoc.model_validate(document)
        except ValidationError as err:
            raise _validation_error(
                err, document, file, f"CloudFormationStack {_name_of(document)}", StackDoc
            ) from None
        spec = document.get("spec") or {}
        return StackObject(doc.metadata.namespace, doc.metadata.name, doc.spec, doc.metadata.generation,
                           file, line, raw_spec=dict(spec) if isinstance(spec, dict) else {})
    if kind == SOURCE_KIND and api_version.startswith(SOURCE_API_GROUP + "/"):
        try:
            src = GitRepositoryDoc.model_validate(document)
        except ValidationError as err:
            raise _validation_error(err, document, file, f"GitRepository {_name_of(document)}",
                                    GitRepositoryDoc) from None
        return GitRepository(src.metadata.namespace, src.metadata.name, src.spec.url, src.spec.ref,
                             src.spec.interval, file, line,
                             secret_name=src.spec.secret_ref.name if src.spec.secret_ref else "")
    if not kind:
        raise InputError("a document needs a kind", file=file, line=line)
    return None


def _name_of(document: dict) -> str:
    meta = document.get("metadata")
    return f"'{meta.get('name')}'" if isinstance(meta, dict) and meta.get("name") else "(no name)"


def load_documents(path: Path) -> list[Any]:
    """Every YAML document in a file, with line numbers; errors carry `file:line`."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise InputError(f"cannot read: {err}", file=str(path)) from None
    try:
        return [d for d in yaml.load_all(text, Loader=TemplateLoader) if d is not None]  # noqa: S506
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        raise InputError(f"not valid YAML: {err.problem or err}", file=str(path),
                         line=mark.line + 1 if mark else None) from None
    except yaml.YAMLError as err:
        raise InputError(f"not valid YAML: {err}", file=str(path)) from None
    except InputError as err:
        err.file = err.file or str(path)
        raise


def object_files(directory: Path) -> list[Path]:
    """The YAML files in `directory` and below (hidden folders skipped), sorted."""
    if directory.is_file():
        return [directory]
    if not directory.is_dir():
        raise InputError("no such folder", file=str(directory), hint="pass the folder with your objects")
    files = []
    for path in sorted(directory.rglob("*")):
        rel = path.relative_to(directory)
        if any(part.startswith(".") for part in rel.parts):
            continue
        if path.is_file() and path.suffix in (".yaml", ".yml"):
            files.append(path)
    return files


def parse_secret(document: Any, file: str | None) -> tuple[str, dict[str, str]] | None:
    """A v1 Secret as (`namespace/name`, its keys): `data` base64-decoded, then `stringData`."""
    if not isinstance(document, dict) or document.get("kind") != "Secret" \
            or document.get("apiVersion") != "v1":
        return None
    meta = document.get("metadata")
    meta = meta if isinstance(meta, dict) else {}
    name = meta.get("name")
    if not isinstance(name, str) or not name:
        raise InputError("a Secret needs metadata.name", file=file, line=getattr(document, "line", None))
    values: dict[str, str] = {}
    for key, value in (document.get("data") or {}).items():
        try:
            values[str(key)] = base64.b64decode(str(value), validate=True).decode("utf-8")
        except (ValueError, UnicodeDecodeError):
            raise InputError(f"Secret '{name}': data.{key} is not base64 of UTF-8 text", file=file,
                             line=_line_for(document, ("data", key))) from None
    values.update({str(k): str(v) for k, v in (document.get("stringData") or {}).items()})
    return f"{meta.get('namespace') or DEFAULT_NAMESPACE}/{name}", values


def load_objects(directory: Path) -> ObjectSet:
    """Every CloudFormationStack, GitRepository and Secret in the folder, checked against each other."""
    found = ObjectSet()
    for path in object_files(directory):
        for document in load_documents(path):
            secret = parse_secret(document, str(path))
            if secret is not None:
                found.secrets[secret[0]] = secret[1]
                continue
            obj = parse_document(document, file=str(path))
            if obj is None:
                continue
            table: dict[str, Any] = found.stacks if isinstance(obj, StackObject) else found.sources
            if obj.key in table:
                first = table[obj.key]
                raise InputError(f"{type(obj).__name__} '{obj.key}' is defined twice (first at "
                                 f"{first.file}:{first.line})", file=obj.file, line=obj.line)
            table[obj.key] = obj
    for key, repo in found.sources.items():
        if repo.secret_name:  # a missing Secret is the source's error (its objects go ArtifactFailed)
            values = found.secrets.get(f"{repo.namespace}/{repo.secret_name}", {})
            found.sources[key] = replace(repo, credentials=tuple(sorted(values.items())))
    check_references(found)
    return found


def check_references(found: ObjectSet) -> None:
    """dependsOn has no cycle. A sourceRef or dependsOn naming nothing is not an error of the folder: as
    with the Flux controller, only that object stays not Ready (ArtifactFailed, DependencyNotReady)."""
    import graphlib

    try:
        graphlib.TopologicalSorter({k: o.dependencies for k, o in found.stacks.items()}).prepare()
    except graphlib.CycleError as err:
        raise InputError("dependsOn has a cycle: " + " -> ".join(err.args[1])) from None
