"""A stack's inputs (parameters, processed template, artifacts, the applied hash) and its change set:
made, described, and deleted again when it changes nothing (a REVIEW_IN_PROGRESS stack takes a CREATE one)."""

from __future__ import annotations

import hashlib
import time
from typing import TYPE_CHECKING, Any

from botocore.exceptions import ClientError

from formwright.cloud import local
from formwright.cloud.regions import object_url
from formwright.cloud.s3 import ensure_bucket, put_if_changed
from formwright.engine.adopt import check_imports, resources_to_import, to_import
from formwright.engine.cfn import NO_CHANGES, is_no_change
from formwright.engine.nested import nested_changes, nested_stacks
from formwright.engine.prepared import Prepared
from formwright.engine.results import ResourceChange, StackPlan
from formwright.engine.settle import SettleSteps, role
from formwright.engine.stack import managed_bucket_name
from formwright.engine.values import value_changes
from formwright.errors import CloudError
from formwright.state.applied import inputs_hash
from formwright.template import check_size, needs_upload

if TYPE_CHECKING:
    from formwright.engine.stack import Stack
    from formwright.engine.stack_info import StackInfo
    from formwright.model.project import Project
    from formwright.state.applied import AppliedCache

ON_FAILURE = {"rollback": "ROLLBACK", "delete": "DELETE", "do_nothing": "DO_NOTHING"}


class ChangeSetSteps(SettleSteps):
    """The inputs and change-set steps of engine.runner.StackRunner (which has these attributes)."""

    project: Project
    target: Any
    cache: AppliedCache
    revert_drift: bool
    _bucket: str | None
    _ensured: set[str]

    def prepare(self, stack: Stack, outputs: dict[str, dict[str, str]], *, partial: bool = False) -> Prepared:
        """Resolve parameters, process the template, check its size and hash everything."""
        parameters = stack.resolve_parameters(outputs, partial=partial)
        template, body = stack.processed(parameters, region=self.target.region)
        check_size(body, where=stack.name)
        if getattr(stack.config, "imports", None):
            check_imports(stack, template)  # CloudFormation's rules a template breaks alone: before any call
        digest = inputs_hash(body, parameters, stack.config.tags, stack.capabilities,
                             stack.config.termination_protection, options=deploy_options(stack))
        return Prepared(parameters, template, body, digest, stack.secret_parameters(template))

    def template_argument(self, stack: Stack, body: str) -> dict[str, str]:
        """TemplateBody, or TemplateURL of a copy in the managed bucket when over 51,200 bytes."""
        if not needs_upload(body):
            return {"TemplateBody": body}
        s3 = self.target.client("s3")
        bucket = self.artifact_bucket(stack)
        key = f"{self.project.name}/{stack.name}/{hashlib.sha256(body.encode()).hexdigest()}.json"
        if put_if_changed(s3, bucket, key, body.encode("utf-8"), owner=self.target.account_id()):
            self.cfn.counter.add("put_object")
        return {"TemplateURL": object_url(bucket, key, self.target.region)}

    def upload_artifacts(self, stack: Stack) -> None:
        """Put the stack's packaged artifacts (code, files, nested templates) in its artifact bucket, each
        only when the bucket does not hold it yet (content-addressed keys: an unchanged one is never sent
        again)."""
        from formwright.packaging.upload import upload_artifacts

        artifacts = getattr(stack, "artifacts", None)  # the sync reconciler's bare stacks have none
        if not artifacts:
            return
        bucket = self.artifact_bucket(stack)
        s3, owner = self.target.client("s3"), self.target.account_id()
        uploaded = upload_artifacts(s3, bucket, artifacts, owner=owner)
        for _ in range(uploaded):
            self.cfn.counter.add("put_object")

    def artifact_bucket(self, stack: Stack) -> str:
        """The stack's `artifact_bucket` (created if missing), or the managed bucket."""
        # the sync reconciler hands a bare name in place of a project Stack: no options there
        bucket = getattr(getattr(stack, "config", None), "artifact_bucket", None)
        if bucket is None:
            return self.managed_bucket()
        if bucket not in self._ensured:
            s3, owner = self.target.client("s3"), self.target.account_id()
            if ensure_bucket(s3, bucket, self.target.region, owner=owner):
                self.cfn.counter.add("create_bucket")
            self._ensured.add(bucket)
        return bucket

    def managed_bucket(self) -> str:
        """The managed bucket, created on first use."""
        if self._bucket is None:
            bucket = managed_bucket_name(self.target, self.project)
            if ensure_bucket(
                self.target.client("s3"), bucket, self.target.region, owner=self.target.account_id()
            ):
                self.cfn.counter.add("create_bucket")
            self._bucket = bucket
        return self._bucket

    def change_set(
        self, stack: Stack, info: StackInfo | None, prep: Prepared
    ) -> tuple[StackPlan, str | None, str]:
        """Create and describe a change set; an empty one is deleted and reported as no changes.

        Returns the plan, the change set id (None: no changes) and the id of the stack it is for."""
        create = info is None or info.status == "REVIEW_IN_PROGRESS"
        kind = "create" if create else "update"
        wanted = to_import(self.cfn, stack, None if create else info, prep.template)
        name = f"formwright-{prep.hash[:12]}-{int(time.time() * 1000)}"
        kwargs: dict[str, Any] = {
            "StackName": stack.stack_name,
            "ChangeSetName": name,
            "ChangeSetType": "CREATE" if create else "UPDATE",
            "Parameters": [
                {"ParameterKey": k, "ParameterValue": v} for k, v in sorted(prep.parameters.items())
            ],
            "Tags": [{"Key": k, "Value": v} for k, v in sorted(stack.config.tags.items())]
            + local.stub_tags(self.target, getattr(self.project, "local_cloud_stub", []))
            + local.instances_tags(self.target, getattr(self.project, "local_cloud_instances", "stub")),
            "Capabilities": stack.capabilities,
            "ClientToken": name,
            **self.template_argument(stack, prep.body),
            **role(stack),
        }
        if stack.config.notification_arns:
            kwargs["NotificationARNs"] = list(stack.config.notification_arns)
        if create and stack.config.on_failure:
            kwargs["OnStackFailure"] = ON_FAILURE[stack.config.on_failure]
        if wanted:  # an IMPORT change set does nothing else
            kind, kwargs["ChangeSetType"] = "import", "IMPORT"
            kwargs["ResourcesToImport"] = resources_to_import(prep.template, wanted)
            kwargs.pop("OnStackFailure", None)
        elif self.revert_drift and not create:
            kwargs["DeploymentMode"] = "REVERT_DRIFT"
        if getattr(stack.config, "import_existing", False) and not wanted:
            kwargs["ImportExistingResources"] = True
        if nested_stacks(prep.template):
            kwargs["IncludeNestedStacks"] = True  # their resource changes are shown under the parent
        self.upload_artifacts(stack)
        self._say(stack, "planning", info.status if info else "", f"creating change set {name}")
        plan = StackPlan(stack.name, stack.stack_name, kind)
        plan.parameters = value_changes(
            info.parameters if info else {}, prep.effective_parameters(), prep.secrets
        )
        plan.tags = value_changes(info.tags if info else {}, stack.config.tags, set())
        try:
            change_set_id = self.cfn.create_change_set(**kwargs)
        except ClientError as err:
            if any(text in str(err) for text in NO_CHANGES):  # some endpoints refuse instead of FAILED
                plan.kind = "no changes"
                return plan, None, info.stack_id if info else ""
            raise
        plan.change_set_id = change_set_id
        desc = self.cfn.wait_change_set(change_set_id)
        stack_id = str(desc.get("StackId") or (info.stack_id if info else stack.stack_name))
        if is_no_change(desc):
            self.cfn.delete_change_set(change_set_id)
            plan.kind, plan.change_set_id = "no changes", None
            return plan, None, stack_id
        if desc["Status"] == "FAILED":
            self.cfn.delete_change_set(change_set_id)
            if create:
                self.drop_review_stack(stack)
            raise CloudError(
                f"change set failed: {desc.get('StatusReason', 'no reason given')}", where=stack.name
            )
        plan.resources = [resource_change(c) for c in desc.get("Changes", []) if c.get("Type") == "Resource"]
        if kwargs.get("IncludeNestedStacks"):
            plan.resources = nested_changes(self.cfn, desc, prep.template, getattr(stack, "nested", []))
        return plan, change_set_id, stack_id

    def drop_review_stack(self, stack: Stack) -> None:
        """Delete the empty REVIEW_IN_PROGRESS stack a CREATE change set leaves behind."""
        info = self.cfn.describe(stack.stack_name)
        if info is not None and info.status == "REVIEW_IN_PROGRESS":
            self.cfn.call("delete_stack", StackName=info.stack_id)

    def deployed_template(self, stack: Stack) -> dict[str, Any] | None:
        """The stack's deployed processed template, or None when it cannot be read."""
        from formwright.template import loads

        try:
            body = self.cfn.call("get_template", StackName=stack.stack_name,
                                 TemplateStage="Processed")["TemplateBody"]
        except ClientError:
            return None
        return loads(body) if isinstance(body, str) else body

    def unchanged(self, stack: Stack, info: StackInfo, prep: Prepared) -> bool:
        """Same inputs as last applied, to this very stack, not updated since by anyone else."""
        record = self.cache.get(stack.name)
        return (record is not None and record.hash == prep.hash and record.stack_id == info.stack_id
                and record.updated == info.stamp and not self.protection_pending(stack, info))

    @staticmethod
    def protection_pending(stack: Stack, info: StackInfo) -> bool:
        """Termination protection is not part of a change set: a difference is a change of its own.
        Unset in the project, the stack's own setting is kept (never switched off by default)."""
        wanted = stack.config.termination_protection
        return wanted is not None and info.termination_protection != wanted


def deploy_options(stack: Stack) -> dict[str, Any]:
    """The stack options that shape its deploy (part of the applied hash)."""
    config = stack.config
    return {"on_failure": config.on_failure, "service_role": config.service_role,
            "notification_arns": sorted(config.notification_arns), "artifact_bucket": config.artifact_bucket}


def resource_change(change: dict[str, Any]) -> ResourceChange:
    """A ResourceChange from one element of describe_change_set's Changes."""
    return ResourceChange.from_change_set(change)
