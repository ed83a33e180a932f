"""An object's desired template at a revision (macros expanded, cached) and how it reaches CloudFormation."""

from __future__ import annotations

import hashlib
import json
import threading
import uuid
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path

from formwright.cloud.s3 import object_url
from formwright.engine.runner import StackRunner
from formwright.errors import InputError
from formwright.model.targets import TargetSpec
from formwright.sync.naming import CORRECTION_TAG, stack_tags
from formwright.sync.objects import StackObject
from formwright.sync.passes import PassSteps
from formwright.sync.source import Artifact, SourceError, resolve_inside
from formwright.template import dump_json, loads, plain


@dataclass
class Desired:
    """What the stack should be: the template body, parameters, tags and their digest."""

    body: str
    parameters: dict[str, str]
    tags: dict[str, str]
    digest: str



@dataclass
class Named:
    """What the runner's upload helper reads of a project: its `name`, `region` and target keys (the
    sync pins no account: the managed bucket is named for the account its credentials reach)."""

    name: str
    region: str | None = None
    target: TargetSpec = field(default_factory=TargetSpec)


class TemplateSteps(PassSteps):
    """The desired state of an object: template body, parameters, tags; inline or through S3."""

    macros_dir: Path | None
    stack_tags: dict[str, str]
    template_bucket: str | None
    _runner: StackRunner
    _desired: OrderedDict[tuple, Desired]
    _desired_lock: threading.Lock

    def desired(self, obj: StackObject, artifact: Artifact, correction: str = "") -> Desired:
        """The template body (macros expanded), parameters and tags for this revision (cached)."""
        parameters = {p.key: p.value for p in obj.spec.stack_parameters}
        tags = stack_tags(obj, self.stack_tags)
        if correction:
            tags[CORRECTION_TAG] = correction
        cache_key = (str(artifact.path), obj.template_path, tuple(sorted(parameters.items())),
                     tuple(sorted(tags.items())), obj.spec.stack_name)
        with self._desired_lock:
            hit = self._desired.get(cache_key)
            if hit is not None:
                self._desired.move_to_end(cache_key)
                return hit
        path = resolve_inside(
            artifact.path, obj.template_path, what="templatePath", revision=artifact.revision
        )
        if not path.is_file():
            raise SourceError(f"templatePath '{obj.template_path}' is not a file")
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as err:
            raise SourceError(f"cannot read templatePath '{obj.template_path}': {err}") from None
        where = f"{obj.template_path}@{artifact.revision.rsplit(':', 1)[-1][:12]}"
        template = loads(text, file=where)
        if not isinstance(template, dict):
            raise InputError("a template must be a mapping with Resources", file=where, line=1)
        body = self._expand(template, parameters, path.parent, where) or text
        digest = hashlib.sha256(json.dumps([body, sorted(parameters.items()), sorted(tags.items()),
                                            obj.spec.stack_name]).encode()).hexdigest()
        desired = Desired(body, parameters, tags, digest)
        with self._desired_lock:
            self._desired[cache_key] = desired
            while len(self._desired) > 4096:
                self._desired.popitem(last=False)
        return desired

    def _expand(self, template: dict, parameters: dict[str, str], base_dir: Path, where: str) -> str | None:
        """The body with macros run locally (formwright.macros); None when there are none or no engine."""
        try:
            from formwright.macros import MacroRegistry, expand, needs_auto_expand
        except ImportError:
            return None  # passed through as written; CloudFormation expands it (CAPABILITY_AUTO_EXPAND)
        if not needs_auto_expand(template):
            return None
        registry = MacroRegistry.build(base_dir=base_dir, macros_dir=self.macros_dir)
        registry.register_template_macros(template, base_dir)
        expanded = expand(template, registry=registry, parameter_values=parameters, region=self.target.region,
                          file=where, base_dir=base_dir)
        return dump_json(plain(expanded), indent=None)

    def _template_argument(self, obj: StackObject, body: str) -> dict[str, str]:
        """TemplateURL of a copy in --template-bucket (every template, as the controller), else TemplateBody
        or, over 51,200 bytes, TemplateURL in the managed bucket."""
        if self.template_bucket is None:
            return self._runner.template_argument(Named(obj.key.replace("/", "-")), body)  # type: ignore[arg-type]
        key = f"flux-{obj.spec.stack_name}-{uuid.uuid4()}.template"  # the controller's object key
        # as the controller's upload (internal/clients/s3): the caller's account must own the bucket, and
        # the bucket owner gets full control of the object
        self.target.client("s3").put_object(Bucket=self.template_bucket, Key=key, Body=body.encode("utf-8"),
                                            ACL="bucket-owner-full-control",
                                            ExpectedBucketOwner=self.target.account_id())
        self.counter.add("put_object")
        return {"TemplateURL": object_url(self.template_bucket, key, self.target.region)}
