"""Deploying and deleting one stack: settle its status (engine/settle.py), make its change set
(engine/change_sets.py), execute it, wait, and record what was applied; its hooks around (engine/hooks.py).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable
from typing import Any

from botocore.exceptions import ClientError

from formwright.cloud.errors import error_code, error_message, translate
from formwright.engine.cfn import CloudFormation, StackInfo, WaitTimeout, bounded, failure_reasons
from formwright.engine.change_sets import ChangeSetSteps
from formwright.engine.guards import ALLOW_HINT, violations
from formwright.engine.hooks import HookSteps
from formwright.engine.nested import deep_failure_reasons
from formwright.engine.prepared import Prepared
from formwright.engine.results import ProgressCallback, StackPlan, StackResult
from formwright.engine.settle import role
from formwright.engine.stack import Stack
from formwright.engine.values import masked_outputs, unconfirmed
from formwright.engine.watch import OperationPolls
from formwright.errors import CloudError, FormwrightError, InputError
from formwright.model.project import Project
from formwright.state.applied import AppliedCache, AppliedRecord

MINUTE = 60.0  # seconds in a minute of `stack_timeout` (tests shorten it)


class StackRunner(ChangeSetSteps, HookSteps):
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

    # ---- deploy -------------------------------------------------------------------------------
    def deploy(self, stack: Stack, outputs: dict[str, dict[str, str]], *, force: bool = False,
               request_token: str | None = None,
               listed: tuple[StackInfo | None, bool] | None = None) -> StackResult:
        """Deploy one stack whose dependencies are done; never raises for cloud failures.

        `request_token` (optional) is passed as ClientRequestToken so a retried execution is recognised.
        `listed`: (the stack as a listing read when the deploy began showed it or None when not there, True),
        read instead of the stack's own DescribeStacks.
        """
        return self.guarded(stack, lambda: self._deploy(stack, outputs, force, request_token, listed))

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
                request_token: str | None = None,
                known: tuple[StackInfo | None, bool] | None = None) -> StackResult:
        prep = self.prepare(stack, outputs)
        info, listed = known if known is not None else self.cfn.describe_known(stack.stack_name)
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


def outdated_by(err: ClientError) -> bool:
    """True when CreateChangeSet refused because the stack is not as a listing showed it: created
    since ("already exists and cannot be created again"), gone ("does not exist"), or in an operation
    ("… state and can not be updated")."""
    message = error_message(err)
    return error_code(err) in ("ValidationError", "AlreadyExistsException") and any(
        text in message for text in ("already exists", "does not exist", "can not be updated"))
