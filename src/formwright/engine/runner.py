"""Planning and deploying one stack: settle its status, make a change set, execute, wait.

Every real CloudFormation status is handled: *_IN_PROGRESS waits; ROLLBACK_COMPLETE after a failed
create is deleted and re-created; UPDATE_ROLLBACK_FAILED gets continue-update-rollback; CREATE_FAILED
and UPDATE_FAILED (rollback disabled) are rolled back with RollbackStack, or updated again when the
stack keeps failed resources (`on_failure: do_nothing`); IMPORT_ROLLBACK_FAILED is updated again;
REVIEW_IN_PROGRESS takes a CREATE change set; DELETE_FAILED and ROLLBACK_FAILED are errors with a hint.
"""

from __future__ import annotations

import hashlib
import time
import uuid
from collections.abc import Callable
from typing import Any

from botocore.exceptions import ClientError

from formwright.cloud import local
from formwright.cloud.errors import error_code, error_message, translate
from formwright.cloud.regions import object_url
from formwright.cloud.s3 import ensure_bucket, put_if_changed
from formwright.engine.adopt import check_imports, resources_to_import, to_import
from formwright.engine.cfn import (
    NO_CHANGES,
    CloudFormation,
    StackInfo,
    WaitTimeout,
    bounded,
    failure_reasons,
    is_no_change,
)
from formwright.engine.guards import ALLOW_HINT, violations
from formwright.engine.hooks import HookSteps
from formwright.engine.nested import deep_failure_reasons, nested_changes, nested_stacks
from formwright.engine.prepared import Prepared
from formwright.engine.results import (
    ProgressCallback,
    ProgressEvent,
    ResourceChange,
    StackPlan,
    StackResult,
)
from formwright.engine.stack import Stack, managed_bucket_name
from formwright.engine.values import masked_outputs, unconfirmed, value_changes
from formwright.engine.watch import OperationPolls
from formwright.errors import CloudError, FormwrightError, InputError
from formwright.model.project import Project
from formwright.state.applied import AppliedCache, AppliedRecord, inputs_hash
from formwright.template import check_size, needs_upload

DEAD_ENDS = {
    "DELETE_FAILED": "a delete failed; fix the resources that would not delete, "
                     "then `formwright delete` again",
    "ROLLBACK_FAILED": "the rollback failed; delete the stack (retaining stuck resources) and deploy again",
}
# Left by a failed operation with rollback disabled: RollbackStack takes them back to the last stable
# state (deleting a stack that never had one), or an update retries from where they stopped.
FAILED_KEPT = ("CREATE_FAILED", "UPDATE_FAILED")
ON_FAILURE = {"rollback": "ROLLBACK", "delete": "DELETE", "do_nothing": "DO_NOTHING"}
MINUTE = 60.0  # seconds in a minute of `stack_timeout` (tests shorten it)


class StackRunner(HookSteps):
    """Plans, deploys and deletes single stacks against one target."""

    def __init__(self, project: Project, target: Any, cfn: CloudFormation, cache: AppliedCache,
                 progress: ProgressCallback) -> None:
        self.project = project
        self.target = target
        self.cfn = cfn
        self.cache = cache
        self.progress = progress
        self._bucket: str | None = None
        self._ensured: set[str] = set()
        # deploy --revert-drift: change sets of existing stacks are drift-aware (DeploymentMode REVERT_DRIFT),
        # so the drifted properties are set back; the applied cache cannot tell drift: every stack is planned
        self.revert_drift = False
        self.allowed: set[str] = set()  # --allow-replacement: logical ids (or stack/logical) a guard lets by

    # ---- inputs -------------------------------------------------------------------------------
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

    # ---- status -------------------------------------------------------------------------------
    def settle(self, stack: Stack, info: StackInfo | None) -> tuple[StackInfo | None, str]:
        """Bring the stack (as last described) to a state a change set can start from;
        return it and a note."""
        note = ""
        if info is not None and info.in_progress:
            self._say(stack, "waiting", info.status, "waiting for an operation already in progress")
            info = self.cfn.wait_stack(stack.stack_name, on_poll=lambda i: self._poll(stack, "waiting", i))
        if info is None:
            return None, note
        if info.status in FAILED_KEPT and stack.config.on_failure != "do_nothing":
            note = f"stack was {info.status} with rollback disabled: rolled back first"
            self._say(stack, "updating", info.status, note)
            self.cfn.call("rollback_stack", StackName=info.stack_id, **role(stack))
            rolled = self.cfn.wait_operation(info.stack_id, info,
                                             on_poll=lambda i: self._poll(stack, "updating", i))
            if rolled is not None and rolled.status not in ("ROLLBACK_COMPLETE", "UPDATE_ROLLBACK_COMPLETE"):
                raise CloudError(f"the rollback ended in {rolled.status}: {rolled.reason}".rstrip(": "),
                                 where=stack.name, hint="fix it in the console, then deploy again")
            info = rolled
            if info is None:
                return None, note
        elif info.status in FAILED_KEPT or info.status == "IMPORT_ROLLBACK_FAILED":
            note = f"stack was {info.status}: updated again from where it stopped"
        if info.status == "ROLLBACK_COMPLETE":
            note = "stack was ROLLBACK_COMPLETE after a failed create: deleted and re-created"
            self._say(stack, "deleting", info.status, note)
            self.cfn.call("delete_stack", StackName=info.stack_id, **role(stack))
            after = self.cfn.wait_operation(info.stack_id, info,
                                            on_poll=lambda i: self._poll(stack, "deleting", i))
            if after is not None and after.status != "DELETE_COMPLETE":
                raise CloudError(f"could not delete the rolled-back stack: {after.status} {after.reason}",
                                 where=stack.name)
            return None, note
        if info.status == "UPDATE_ROLLBACK_FAILED":
            note = "stack was UPDATE_ROLLBACK_FAILED: continued the rollback first"
            self._say(stack, "updating", info.status, note)
            self.cfn.call("continue_update_rollback", StackName=info.stack_id, **role(stack))
            info = self.cfn.wait_operation(info.stack_id, info,
                                           on_poll=lambda i: self._poll(stack, "updating", i))
            if info is None or info.status != "UPDATE_ROLLBACK_COMPLETE":
                status = info.status if info else "gone"
                raise CloudError(
                    f"continue-update-rollback ended in {status}",
                    where=stack.name,
                    hint="skip the stuck resources with the console's ResourcesToSkip, then deploy",
                )
        if info.status in DEAD_ENDS:
            raise CloudError(f"stack is {info.status}: {info.reason}".rstrip(": "), where=stack.name,
                             hint=DEAD_ENDS[info.status])
        return info, note

    # ---- change sets --------------------------------------------------------------------------
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

    # ---- deploy -------------------------------------------------------------------------------
    def deploy(self, stack: Stack, outputs: dict[str, dict[str, str]], *, force: bool = False,
               request_token: str | None = None) -> StackResult:
        """Deploy one stack whose dependencies are done; never raises for cloud failures.

        `request_token` (optional) is passed as ClientRequestToken so a retried execution is recognised.
        """
        return self.guarded(stack, lambda: self._deploy(stack, outputs, force, request_token))

    def guarded(self, stack: Stack, work: Callable[[], StackResult]) -> StackResult:
        """Run one stack's work, its waits bounded by its `stack_timeout`, turning every error into a
        failed result (one line, never a traceback)."""
        started = time.monotonic()
        minutes = getattr(getattr(stack, "config", None), "stack_timeout", None)
        try:
            with bounded(minutes * MINUTE if minutes else None, f"{minutes} min (stack_timeout)"):
                result = work()
        except WaitTimeout as err:  # never a success: CloudFormation is still at it
            err.where = err.where or stack.name
            result = StackResult(stack.name, stack.stack_name, "failed", err.status, error=str(err),
                                 exit_code=err.exit_code, timed_out=True)
        except FormwrightError as err:
            result = self._failed(stack, None, None, StackResult(
                stack.name, stack.stack_name, "failed", error=str(err), exit_code=err.exit_code))
        except Exception as err:  # noqa: BLE001 - botocore and friends: one line, never a traceback
            error = translate(err, where=stack.name, target=getattr(self.target, "kind", None))
            result = self._failed(stack, None, None, StackResult(
                stack.name, stack.stack_name, "failed", error=str(error), exit_code=error.exit_code))
        result.elapsed = time.monotonic() - started
        secrets = getattr(stack, "secret_values", None)
        if secrets and result.error:  # a cloud message may quote a parameter's value
            from formwright.lifecycle.actions import Redactor

            result.error = Redactor(secrets).text(result.error)
        self._say(stack, "done" if result.ok else "failed", result.status, result.error or result.outcome)
        return result

    def _deploy(self, stack: Stack, outputs: dict[str, dict[str, str]], force: bool,
                request_token: str | None = None) -> StackResult:
        prep = self.prepare(stack, outputs)
        info, listed = self.cfn.describe_known(stack.stack_name)
        if not force and not self.revert_drift and info is not None and info.settled_ok \
                and self.unchanged(stack, info, prep):
            result = StackResult(stack.name, stack.stack_name, "unchanged", info.status, outputs=info.outputs)
            return self._around(stack, prep, None, result)  # only hooks marked `always`
        info, note = self.settle(stack, info)
        try:
            plan, change_set_id, stack_id = self.change_set(stack, info, prep)
        except ClientError as err:
            if not listed or not outdated_by(err):
                raise
            # made, deleted or busy out of band since the listing: as its own DescribeStacks says now
            info, note = self.settle(stack, self.cfn.describe(stack.stack_name))
            plan, change_set_id, stack_id = self.change_set(stack, info, prep)
        plan.note = note
        if change_set_id is None:
            assert info is not None
            self._protect(stack, info)
            self.remember(stack, info, prep)
            return self._around(stack, prep, plan, StackResult(stack.name, stack.stack_name, "no changes",
                                                               info.status, outputs=info.outputs, plan=plan))
        self.refuse_denied(stack, plan, change_set_id)
        failed = self._hook(stack, "before_deploy", prep, plan)
        if failed is not None:  # nothing executed: the change set (and a new stack's review) goes
            self.cfn.delete_change_set(change_set_id)
            if plan.kind == "create":
                self.drop_review_stack(stack)
            return self._failed(stack, prep, plan, StackResult(stack.name, stack.stack_name, "failed",
                                                               info.status if info else "", error=failed,
                                                               plan=plan, exit_code=1))
        return self.execute(stack, info, prep, plan, change_set_id, stack_id, request_token)

    def refuse_denied(self, stack: Stack, plan: StackPlan, change_set_id: str) -> None:
        """Stop before executing a change set that replaces or removes what a `deny:` guard protects
        (its change set deleted, exit 2), unless --allow-replacement names the resource."""
        denied = violations({stack.name: plan}, {stack.name: stack.config}, self.allowed)
        if denied:
            self.cfn.delete_change_set(change_set_id)
            raise InputError("; ".join(denied), where=stack.name, hint=ALLOW_HINT)

    def execute(self, stack: Stack, info: StackInfo | None, prep: Prepared, plan: StackPlan,
                change_set_id: str, stack_id: str, request_token: str | None = None) -> StackResult:
        """Execute the change set `change_set_id` made from `prep` (shown as `plan`), wait for its end and
        record the inputs as applied."""
        phase = "creating" if plan.kind == "create" else "updating"
        self._say(stack, phase, "", f"executing {len(plan.resources)} change(s)")
        # every execution carries a token: its events are told from any other operation's by it
        token = request_token or f"formwright-{uuid.uuid4().hex}"
        extra: dict[str, Any] = {}
        if plan.kind == "update" and stack.config.on_failure == "do_nothing":
            extra["DisableRollback"] = True  # a CREATE change set carries OnStackFailure instead
        self.cache.forget(stack.name)  # a crash from here on must not leave the old hash looking applied
        self.cfn.call("execute_change_set", ChangeSetName=change_set_id, ClientRequestToken=token, **extra)
        polls = OperationPolls(self.cfn, stack.name, phase, token, self.progress)
        final = self.cfn.wait_operation(stack_id, info, change_set_id=change_set_id, on_poll=polls)
        if final is None or final.status not in ("CREATE_COMPLETE", "UPDATE_COMPLETE", "IMPORT_COMPLETE"):
            status = final.status if final else "DELETE_COMPLETE"
            reasons = deep_failure_reasons(self.cfn, self.cfn.operation_events(stack_id, token))
            detail = "; ".join(reasons[:3]) or (final.reason if final else "the stack was deleted")
            return self._failed(stack, prep, plan, StackResult(
                stack.name, stack.stack_name, "failed", status, error=f"{stack.name}: {status}: {detail}",
                plan=plan, exit_code=1))
        self._protect(stack, final)
        self.remember(stack, final, prep)
        outcome = {"create": "created", "import": "imported"}.get(plan.kind, "updated")
        result = StackResult(stack.name, stack.stack_name, outcome, final.status, outputs=final.outputs,
                             plan=plan)
        return self._after(stack, prep, plan, result, "after_deploy")

    def _protect(self, stack: Stack, info: StackInfo) -> None:
        if self.protection_pending(stack, info):
            self.cfn.call("update_termination_protection", StackName=stack.stack_name,
                          EnableTerminationProtection=bool(stack.config.termination_protection))

    def remember(self, stack: Stack, info: StackInfo, prep: Prepared) -> None:
        """Record the inputs as applied, once the target's own description confirms them."""
        contradiction = unconfirmed(stack.config.tags, info, prep)
        if contradiction:
            raise CloudError(f"the target reported {info.status} but did not apply the change: "
                             f"{contradiction}",
                             where=stack.name, hint="not recorded as applied; the next deploy tries again")
        stack.write_build(prep.template)
        secrets = [str(prep.parameters[k]) for k in prep.secrets if prep.parameters.get(k)]
        self.cache.put(
            stack.name,
            AppliedRecord(
                stack.stack_name, prep.hash, info.stack_id, masked_outputs(info.outputs, secrets),
                updated=info.stamp,
            ),
        )

    # ---- delete -------------------------------------------------------------------------------
    def delete(self, stack: Stack, importers: dict[str, list[str]], *,
               request_token: str | None = None) -> StackResult:
        """Delete one stack, refusing while another stack imports its exports
        (optional ClientRequestToken)."""
        return self.guarded(stack, lambda: self._delete(stack, importers, request_token))

    def _delete(self, stack: Stack, importers: dict[str, list[str]],
                request_token: str | None = None) -> StackResult:
        info = self.cfn.describe(stack.stack_name)
        if info is None:
            self.cache.forget(stack.name)
            return StackResult(stack.name, stack.stack_name, "absent")
        for export in info.exports:
            users = importers.get(export, [])
            if users:
                raise CloudError(f"export '{export}' is still imported by {', '.join(sorted(users))}",
                                 where=stack.name, hint="delete or change the importing stacks first")
        if info.termination_protection:
            raise CloudError("termination protection is on", where=stack.name,
                             hint="set termination_protection: false and deploy, then delete")
        if info.in_progress:
            info = self.cfn.wait_stack(info.stack_id, on_poll=lambda i: self._poll(stack, "waiting", i))
        if info is None:
            self.cache.forget(stack.name)
            return StackResult(stack.name, stack.stack_name, "absent")
        failed = self._hook(stack, "before_delete", None)
        if failed is not None:
            return self._failed(stack, None, None, StackResult(stack.name, stack.stack_name, "failed",
                                                               info.status, error=failed, exit_code=1))
        self._say(stack, "deleting", info.status, "")
        base = request_token or f"formwright-{uuid.uuid4().hex}"
        for attempt in range(2):  # DELETE_FAILED: one retry, as sceptre and rain do
            # the retry needs its own token, or CloudFormation takes it for the first request again
            token = f"{base[:120]}-{attempt}"
            self.cfn.call("delete_stack", StackName=info.stack_id, ClientRequestToken=token, **role(stack))
            final = self.cfn.wait_operation(info.stack_id, info,
                                            on_poll=OperationPolls(self.cfn, stack.name, "deleting", token,
                                                                   self.progress))
            if final is None or final.status == "DELETE_COMPLETE":
                self.cache.forget(stack.name)
                return self._after(stack, None, None, StackResult(stack.name, stack.stack_name, "deleted",
                                                                  "DELETE_COMPLETE"), "after_delete")
            info = final
            if final.status != "DELETE_FAILED" or attempt == 1:
                reasons = failure_reasons(self.cfn.operation_events(final.stack_id, token))
                return self._failed(stack, None, None, StackResult(
                    stack.name, stack.stack_name, "failed", final.status, exit_code=1,
                    error=f"{stack.name}: {final.status}: {'; '.join(reasons[:3]) or final.reason}"))
        raise AssertionError("unreachable")

    # ---- progress -----------------------------------------------------------------------------
    def _say(self, stack: Stack, phase: str, status: str, message: str) -> None:
        self.progress(ProgressEvent(stack.name, phase, status, message))

    def _poll(self, stack: Stack, phase: str, info: StackInfo | None) -> None:
        self._say(stack, phase, info.status if info else "DELETE_COMPLETE", "")


def outdated_by(err: ClientError) -> bool:
    """True when CreateChangeSet refused because the stack is not as a listing showed it: created
    since ("already exists and cannot be created again"), gone ("does not exist"), or in an operation
    ("… state and can not be updated")."""
    message = error_message(err)
    return error_code(err) in ("ValidationError", "AlreadyExistsException") and any(
        text in message for text in ("already exists", "does not exist", "can not be updated"))


def role(stack: Stack) -> dict[str, str]:
    """RoleARN for the stack's `service_role`, when it has one."""
    return {"RoleARN": stack.config.service_role} if stack.config.service_role else {}


def deploy_options(stack: Stack) -> dict[str, Any]:
    """The stack options that shape its deploy (part of the applied hash)."""
    config = stack.config
    return {"on_failure": config.on_failure, "service_role": config.service_role,
            "notification_arns": sorted(config.notification_arns), "artifact_bucket": config.artifact_bucket}


def resource_change(change: dict[str, Any]) -> ResourceChange:
    """A ResourceChange from one element of describe_change_set's Changes."""
    return ResourceChange.from_change_set(change)
