"""A Stack: one project stack made ready for the cloud (template loaded and processed).

The original template is loaded once; the processed template depends on parameter values when the
template uses macros (CloudFormation hands macros the parameter values), so it is produced per set
of resolved parameters and written to `.formwright/build/<stack>/`.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import shutil
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from formwright import sandbox
from formwright.errors import ProjectError
from formwright.model.project import OutputRef, Project, StackConfig
from formwright.model.resolvers import ValueSource
from formwright.state.applied import write_atomic
from formwright.state.secrets import GeneratedSecrets
from formwright.template import dump_json, load, plain
from formwright.template.values import copied

log = logging.getLogger("formwright")

UNKNOWN = "(known after apply)"
LOCAL_ACCOUNT = "123456789012"  # the local cloud's (moto's) one account


@dataclass
class Stack:
    """A stack the engine can plan, deploy and delete."""

    config: StackConfig
    original: dict[str, Any]
    source: str
    build_dir: Path
    macros: Any = None  # a formwright.macros.MacroRegistry when the template uses macros
    remote_macros: bool = False  # leave expansion to CloudFormation (--macros remote)
    s3_client: Any = None  # S3 for AWS::Include from s3:// (None: the target's, made when needed)
    account_id: str = "123456789012"
    fixed_parameters: dict[str, str] = field(default_factory=dict)  # e.g. from a TOSCA transform
    extra_capabilities: list[str] = field(default_factory=list)
    target: Any = None  # the stack's own Target (region, account, credentials); None: the group's
    artifacts: list[Any] = field(default_factory=list)  # formwright.packaging.Artifact: uploaded before use
    nested: list[Any] = field(default_factory=list)  # formwright.packaging NestedTemplate: linted, built
    packaged_bucket: str | None = None  # the bucket the packaged template names (None: no artifacts)
    # the JSON body of the template file its `original` copies, made once for every stack sharing the file
    # (SharedTemplates.body): its processed body when it has no macros to expand
    shared_body: Callable[[], str] | None = field(default=None, repr=False)
    # what its resolvers gave (engine/resolve.py): value per source, secret parameters, secret values
    resolved: dict[ValueSource, str] = field(default_factory=dict)
    secret_keys: set[str] = field(default_factory=set)
    secret_values: set[str] = field(default_factory=set)
    _processed: dict[str, tuple[dict[str, Any], str]] = field(default_factory=dict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def name(self) -> str:
        """The stack's name in the project."""
        return self.config.name

    @property
    def stack_name(self) -> str:
        """The CloudFormation stack name."""
        return self.config.stack_name

    @property
    def dependencies(self) -> set[str]:
        """Project stacks this one waits for."""
        return self.config.dependencies()

    @property
    def capabilities(self) -> list[str]:
        """Capabilities to acknowledge."""
        extra = {"CAPABILITY_AUTO_EXPAND"} if self.remote_macros else set()
        return sorted(set(self.config.capabilities) | set(self.extra_capabilities) | extra)

    def uses_macros(self) -> bool:
        """True when formwright expands this stack's macros locally."""
        return self.macros is not None and not self.remote_macros

    def resolve_parameters(
        self, outputs: dict[str, dict[str, str]], *, partial: bool = False
    ) -> dict[str, str]:
        """Parameter values with every !ref replaced by the output it names.

        With `partial`, a reference to an output not yet known becomes UNKNOWN instead of an error.
        """
        values = dict(self.fixed_parameters)
        for key, value in self.config.parameters.items():
            items = value if isinstance(value, list) else [value]
            resolved = [self._resolve_one(v, outputs, partial) for v in items]
            values[key] = ",".join(resolved)
        return values

    def _resolve_one(self, value: Any, outputs: dict[str, dict[str, str]], partial: bool) -> str:
        if isinstance(value, ValueSource):
            if value in self.resolved:
                return self.resolved[value]
            if partial:
                return UNKNOWN
            raise ProjectError(f"{value}: not resolved (only plan and deploy fetch resolvers)",
                               file=value.file, line=value.line)
        if not isinstance(value, OutputRef):
            return str(value)
        stack_outputs = outputs.get(value.stack)
        if stack_outputs is not None and value.output in stack_outputs:
            return stack_outputs[value.output]
        if partial:
            return UNKNOWN
        if stack_outputs is None:
            raise ProjectError(f"{value}: stack '{value.stack}' has not been deployed", file=value.file,
                               line=value.line, hint="deploy it first")
        known = ", ".join(sorted(stack_outputs)) or "none"
        raise ProjectError(f"{value}: stack '{value.stack}' has no output '{value.output}'", file=value.file,
                           line=value.line, hint=f"its outputs: {known}")

    def processed(
        self, parameters: dict[str, str], *, region: str = "us-east-1"
    ) -> tuple[dict[str, Any], str]:
        """The processed template and its JSON body for these parameter values (cached)."""
        if not self.uses_macros():
            key = ""
        else:
            key = hashlib.sha256(dump_json(sorted(parameters.items()), indent=None).encode()).hexdigest()
        with self._lock:
            hit = self._processed.get(key)
        if hit is not None:
            return hit
        if self.uses_macros():
            from formwright.macros import expand

            template = expand(self.original, registry=self.macros, parameter_values=parameters, region=region,
                              account_id=self.account(), s3_client=self._s3(), file=self.source,
                              base_dir=Path(self.source).parent)
            body = dump_json(plain(template), indent=None)
        else:
            template = self.original
            body = self.shared_body() if self.shared_body is not None \
                else dump_json(plain(template), indent=None)
        with self._lock:
            self._processed[key] = (template, body)
        return template, body

    def account(self) -> str:
        """The account the stack deploys to: its target's (asked of STS when first needed, which only
        macros do before a change set: the account id is kept off the way to the first one), else
        `account_id`."""
        return str(self.target.account_id()) if self.target is not None else self.account_id

    def _s3(self) -> Any:
        """S3 for the macros: the one given, else the target's (an S3 client costs ~0.1 s to make, so
        only a stack whose macros run makes it)."""
        if self.s3_client is None and self.target is not None:
            self.s3_client = self.target.client("s3")
        return self.s3_client

    def write_build(self, template: dict[str, Any]) -> Path:
        """Keep both stages in .formwright/build/<stack>/: original.<ext> and processed.json."""
        self.build_dir.mkdir(parents=True, exist_ok=True)
        source = Path(self.source)
        original = self.build_dir / f"original{source.suffix or '.yaml'}"
        if source.is_file():
            shutil.copyfile(source, original)
        processed = self.build_dir / "processed.json"
        write_atomic(processed, dump_json(plain(template)), durable=False)  # rebuilt by every deploy
        return processed

    def declared_parameters(self, template: dict[str, Any]) -> dict[str, Any]:
        """The template's Parameters section."""
        params = template.get("Parameters") or {}
        return params if isinstance(params, dict) else {}

    def secret_parameters(self, template: dict[str, Any]) -> set[str]:
        """Names of NoEcho parameters and of those a secret resolver gives (never shown in clear)."""
        declared = self.declared_parameters(template).items()
        hidden = {name for name, decl in declared
                  if isinstance(decl, dict) and str(decl.get("NoEcho", "")).lower() == "true"}
        return hidden | self.secret_keys


def prepare_stacks(project: Project, *, target: Any = None, macros_dir: Path | None = None,
                   remote_macros: bool = False, only: list[str] | None = None,
                   targets: Any = None, package: bool = True, resolve: bool = True) -> dict[str, Stack]:
    """Load every stack's template (transforming TOSCA ones) into Stacks, checking parameters.

    Templates with macros get the project's macro registry (local expansion), or with
    `remote_macros` are sent as written with CAPABILITY_AUTO_EXPAND for CloudFormation to expand.
    With `targets` (a cloud.session.Targets) each stack gets the Target of its own region and account.
    Local artifacts and nested templates are packaged (`package_stack`) unless `package` is false.
    With a target (and `resolve`: a delete needs no parameter values) the resolvers are fetched.
    """
    from formwright.macros import MacroRegistry, needs_auto_expand

    stacks: dict[str, Stack] = {}
    built: list[Any] = []

    def registry() -> Any:  # the project's macro registry, built on first need
        if not built:
            built.append(MacroRegistry.build(project_macros=project.macros, base_dir=project.directory,
                                             macros_dir=macros_dir))
        return built[0]

    secrets = GeneratedSecrets(project.state_dir)
    templates = SharedTemplates()
    hand_over = None
    if resolve and (target is not None or targets is not None):  # plan, deploy, sync: not validate, build
        from formwright.engine.resolve import fetch_values

        given = target
        hand_over = fetch_values(  # first: a missing value stops before any upload of the preparation
            project, [c for n, c in project.stacks.items() if not only or n in only],
            lambda config: targets.get(config.target) if targets is not None else given,
            targets.get if targets is not None else _one_target(given))
    for name, config in project.stacks.items():
        if only and name not in only:
            continue
        confinement = sandbox.active()
        if config.hooks and confinement is not None:  # hooks are the project's own code
            raise confinement.refuse_code(f"the hooks of stack '{name}'", file=project.file, line=config.line)
        if config.hooks:
            from formwright.engine.hooks import check_plugins

            check_plugins(config)
        if targets is not None:
            target = targets.get(config.target)
        build_dir = project.build_dir / name
        fixed: dict[str, str] = {}
        extra_caps: list[str] = []
        artifacts: list[Any] = []
        nested: list[Any] = []
        packaged_bucket = None
        shared: dict[str, Any] | None = None  # the template file's parse (or packaging) several stacks share
        if config.tosca is not None:
            from formwright.transform.cloudformation import prepare_stack

            s3 = target.client("s3") if target is not None else None
            # without a target (validate) the bucket is still named, so the stack resolves as in deploy
            bucket = config.artifact_bucket or managed_bucket_name(target, project)
            region = target.region if target is not None else config.target.region or "us-east-1"
            prepared = prepare_stack(config.tosca, inputs=config.inputs, region=region,
                                     out_dir=build_dir / "tosca", s3_client=s3, bucket=bucket,
                                     bucket_owner=target.account_id() if target is not None else None)
            original, source = prepared.template, str(config.tosca)
            for problem in prepared.warnings:  # as `transform tosca` prints them: never a silent success
                log.warning("warning: %s", problem)
            fixed, extra_caps = dict(prepared.parameters), list(prepared.capabilities)
            fixed.update(secrets.stable(name, {k: fixed[k] for k in prepared.generated}))
        else:
            if config.template_source is not None:  # produced by a template handler, into the build folder
                from formwright.engine.template_handlers import fetch

                config.template = fetch(config, target, build_dir)
            assert config.template is not None
            source = str(config.template)
            if package:
                packaged = templates.packaged(project, config, target=target, remote_macros=remote_macros,
                                              registry=registry)
                shared, artifacts, nested = packaged.template, packaged.artifacts, packaged.nested
                packaged_bucket = packaged.bucket
            else:
                shared = templates.load(config.template)
            original = copied(shared)
        stack = Stack(
            config,
            original,
            source,
            build_dir,
            fixed_parameters=fixed,
            extra_capabilities=extra_caps,
            remote_macros=remote_macros,
            target=target,  # its account (for macros) asked of the target when needed: `Stack.account`
            artifacts=artifacts,
            nested=nested,
            packaged_bucket=packaged_bucket,
            shared_body=functools.partial(templates.body, shared) if shared is not None else None,
        )
        if templates.expands(shared) if shared is not None else needs_auto_expand(original):
            if not remote_macros:
                registry().register_template_macros(original, Path(source).parent)
            stack.macros = registry()
        check_parameters(stack, project)
        if hand_over is not None:
            hand_over(stack)
        stacks[name] = stack
    return stacks


class SharedTemplates:
    """Each template file of one preparation parsed once, and packaged once per place it goes to
    (bucket, region, target): a thousand stacks of one template cost one parse and one packaging, each
    stack then holding its own copy (`copied`, far cheaper than either)."""

    def __init__(self) -> None:
        self._loaded: dict[Path, Any] = {}
        self._packaged: dict[tuple[Any, ...], Any] = {}
        self._expands: dict[int, bool] = {}  # by id: the templates are held in the two above
        self._bodies: dict[int, str] = {}  # by id, as _expands

    def load(self, path: Path) -> dict[str, Any]:
        """The template at `path` as parsed once (not to be changed: copy it)."""
        if path not in self._loaded:
            self._loaded[path] = load(path)
        return self._loaded[path]

    def packaged(self, project: Project, config: StackConfig, *, target: Any, remote_macros: bool,
                 registry: Callable[[], Any]) -> Any:
        """`package_stack`'s result for the stack's template, made once for every stack of that template
        going to the same bucket, region and target (not to be changed: copy its template)."""
        assert config.template is not None
        key = (config.template, config.artifact_bucket, config.target.region, id(target), remote_macros)
        if key not in self._packaged:
            self._packaged[key] = package_stack(project, config, copied(self.load(config.template)),
                                                target=target, remote_macros=remote_macros, registry=registry)
        return self._packaged[key]

    def body(self, template: dict[str, Any]) -> str:
        """The compact JSON of a template `load` or `packaged` gave, made once."""
        if id(template) not in self._bodies:
            self._bodies[id(template)] = dump_json(plain(template), indent=None)
        return self._bodies[id(template)]

    def expands(self, template: dict[str, Any]) -> bool:
        """`needs_auto_expand` of a template `load` or `packaged` gave, asked once."""
        from formwright.macros import needs_auto_expand

        if id(template) not in self._expands:
            self._expands[id(template)] = needs_auto_expand(template)
        return self._expands[id(template)]


def package_stack(project: Project, config: StackConfig, original: dict[str, Any], *, target: Any,
                  remote_macros: bool, registry: Callable[[], Any]) -> Any:
    """The stack's template with its local artifacts and nested templates packaged (formwright.packaging):
    in the stack's `artifact_bucket`, else the managed bucket. Nested templates with macros are expanded
    as their parent is (locally, unless `remote_macros`)."""
    from formwright.macros import expand, needs_auto_expand
    from formwright.packaging import package_template

    region = target.region if target is not None else config.target.region or project.region or "us-east-1"

    def expand_nested(template: dict[str, Any], file: Path, values: dict[str, str]) -> dict[str, Any]:
        if remote_macros or not needs_auto_expand(template):
            return template
        account_id = target.account_id() if target is not None else LOCAL_ACCOUNT
        macros = registry()
        macros.register_template_macros(template, file.parent)
        s3 = target.client("s3") if target is not None else None
        return expand(template, registry=macros, parameter_values=values, region=region,
                      account_id=account_id,
                      s3_client=s3, file=str(file), base_dir=file.parent)

    assert config.template is not None
    return package_template(original, Path(config.template), root=project.directory,
                            bucket=config.artifact_bucket or (lambda: managed_bucket_name(target, project)),
                            region=region,
                            prefix=project.name, expand=expand_nested, include_locations=remote_macros)


def _one_target(target: Any) -> Any:
    """Targets for one given target: its own, and others (a `!stack_output` elsewhere) of its kind."""
    made: dict[Any, Any] = {}

    def target_of(spec: Any) -> Any:
        from formwright.cloud.session import Targets

        if spec == target_spec_of(target):
            return target
        if "targets" not in made:
            made["targets"] = Targets(target.kind)
        return made["targets"].get(spec)

    return target_of


def target_spec_of(target: Any) -> Any:
    """The TargetSpec a bare Target stands for (its region only)."""
    from formwright.model.targets import TargetSpec

    return TargetSpec(region=getattr(target, "region", None))


def check_parameters(stack: Stack, project: Project) -> None:
    """Given parameters exist in the template; required ones are given; refs name real outputs."""
    declared = stack.declared_parameters(stack.original)
    config = stack.config
    for key in config.parameters:
        if key not in declared and stack.macros is None:
            raise ProjectError(f"stack '{stack.name}': parameter '{key}' is not declared by its template",
                               file=project.file, line=config.parameter_lines.get(key),
                               hint=f"declared: {', '.join(sorted(declared)) or 'none'}")
    for key, decl in declared.items():
        if isinstance(decl, dict) and "Default" not in decl and key not in config.parameters \
                and key not in stack.fixed_parameters:
            raise ProjectError(f"stack '{stack.name}': parameter '{key}' has no default and no value",
                               file=project.file, line=config.line,
                               hint=f"add parameters: {{{key}: …}} to stack '{stack.name}'")


def check_output_references(stacks: dict[str, Stack], project: Project) -> None:
    """Every `!ref stack.outputs.Key` names an output the referenced template declares."""
    for stack in stacks.values():
        for ref in stack.config.references():
            target = stacks.get(ref.stack)
            if target is None or target.macros is not None:
                continue  # outputs of a macro template are only known after expansion
            outputs = target.original.get("Outputs") or {}
            if ref.output not in outputs:
                raise ProjectError(f"{ref}: the template of '{ref.stack}' has no output '{ref.output}'",
                                   file=ref.file, line=ref.line,
                                   hint=f"its outputs: {', '.join(sorted(outputs)) or 'none'}")


def managed_bucket_name(target: Any, project: Project) -> str:
    """The S3 bucket formwright manages on the target for large templates and artifacts. Offline (no
    target: validate, build) the account is the project's pinned `account:`, else the local cloud's."""
    region = (target.region if target is not None else None) or project.region or "us-east-1"
    account = target.account_id() if target is not None else project.target.account or LOCAL_ACCOUNT
    return f"formwright-{account}-{region}"
