"""The change-set steps: create `flux-<generation>-<revision>`, wait, execute, judge, clean up.

The phase is saved before each write call, so a restart resumes without applying anything twice.
"""

from __future__ import annotations

from typing import Any

from botocore.exceptions import BotoCoreError, ClientError
from botocore.parsers import ResponseParserError

from formwright.cloud.errors import error_code, error_message, translate
from formwright.engine.cfn import StackInfo, failure_reasons, is_no_change
from formwright.errors import FormwrightError
from formwright.sync import messages as say
from formwright.sync.messages import SUCCEEDED
from formwright.sync.objects import StackObject
from formwright.sync.passes import NORMAL, WARNING, CallFailed, Outcome, calling
from formwright.sync.source import Artifact
from formwright.sync.stack_status import APPLIED, RECOVERABLE, StatusBranches
from formwright.sync.status_store import TRUE, UNKNOWN, Status
from formwright.sync.templates import Desired, TemplateSteps

CAPABILITIES = ["CAPABILITY_IAM", "CAPABILITY_NAMED_IAM", "CAPABILITY_AUTO_EXPAND"]
# internal/clients/types/changeset.go: the controller's change set status classes
CS_FAILED = {"FAILED", "DELETE_FAILED"}
EXECUTION_FAILED = {"EXECUTE_FAILED", "OBSOLETE"}
CS_IN_PROGRESS = {"CREATE_PENDING", "CREATE_IN_PROGRESS", "DELETE_PENDING", "DELETE_IN_PROGRESS"}


class ChangeSetSteps(StatusBranches, TemplateSteps):
    """Moves an object's change set from created to executed and judged."""

    def _create(self, obj: StackObject, generation: int, st: Status, artifact: Artifact, desired: Desired,
                info: StackInfo | None, name: str) -> Outcome:
        spec = obj.spec
        stack_name = str(spec.stack_name)
        create = info is None or info.status == "REVIEW_IN_PROGRESS"
        try:
            argument = self._template_argument(obj, desired.body)
        except (ClientError, BotoCoreError, ResponseParserError, FormwrightError) as err:
            raise CallFailed(say.upload_failed(stack_name), str(translate(err, where=stack_name)),
                             "TemplateUploadFailed") from None
        st.phase, st.change_set_name = "created", name
        # the previous change set's ARN goes with the write-ahead: kept, a restart would take that (executed)
        # change set for this one and report this revision applied without applying it
        st.change_set_id = ""
        self.save_status(obj.key, st)  # write-ahead: a restart finds this change set by name
        try:
            st.change_set_id = self.cfn.create_change_set(
                StackName=stack_name,
                ChangeSetName=name,
                ChangeSetType="CREATE" if create else "UPDATE",
                Parameters=[
                    {"ParameterKey": k, "ParameterValue": v} for k, v in sorted(desired.parameters.items())
                ],
                Tags=[{"Key": k, "Value": v} for k, v in desired.tags.items()],
                Capabilities=CAPABILITIES,
                IncludeNestedStacks=True,
                **argument,
            )
        except (ClientError, BotoCoreError, ResponseParserError) as err:
            if not isinstance(err, ClientError) or error_code(err) != "AlreadyExistsException":
                st.phase = ""
                raise CallFailed(say.create_change_set_failed(stack_name),
                                 str(translate(err, where=stack_name))) from None
        if st.change_set_id:
            st.last_attempted_change_set = st.change_set_id
            msg = say.change_set_created(stack_name, st.change_set_id, create)
            self._event(NORMAL, msg, artifact.revision)
            st.set_ready(UNKNOWN, "Progressing", msg)
        self.save_status(obj.key, st)  # its ARN: change set names are per stack, ARNs are global
        # formwright reads the change set in the same pass (the controller at its next poll): the local cloud
        # has it ready at once; the events and end states are the controller's
        return self._advance(obj, generation, st, artifact, desired, info, name)

    def _advance(self, obj: StackObject, generation: int, st: Status, artifact: Artifact, desired: Desired,
                 info: StackInfo | None, name: str) -> Outcome:
        """Move an existing change set on, in the controller's order (reconcileChangeset): empty → Ready,
        failed → deleted (ChangeSetFailed), in progress → wait, ready → executed, else UnexpectedStatus."""
        spec = obj.spec
        stack_name = str(spec.stack_name)
        ref = self._ref(st, name)
        with calling(say.describe_change_set_failed(stack_name), stack_name):
            desc = self._describe_change_set(stack_name, ref, name, info.stack_id if info else "")
        if desc is None or desc.get("Status") == "DELETE_COMPLETE":
            st.phase = ""
            st.change_set_name = ""  # not there: nothing to delete before creating it
            return self._create(obj, generation, st, artifact, desired, info, name)
        arn = desc.get("ChangeSetId") or st.change_set_id
        st.last_attempted_change_set = st.change_set_id = arn
        status, execution = desc.get("Status", ""), desc.get("ExecutionStatus", "")
        if is_no_change(desc):
            with calling(say.delete_empty_change_set_failed(stack_name), stack_name):
                self._delete_change_set(stack_name, ref)
            with calling(say.describe_stack_failed(stack_name), stack_name):
                current = info or self.cfn.describe(stack_name)
            st.applied_digest, st.stack_id = desired.digest, current.stack_id if current else ""
            st.phase = ""
            return self._up_to_date(obj, generation, st, artifact.revision, current, change_set=arn) \
                if current else Outcome(st, spec.poll_interval)
        if status in CS_FAILED or execution in EXECUTION_FAILED:
            with calling(say.delete_failed_change_set_failed(stack_name), stack_name):
                self._delete_change_set(stack_name, ref)
                self._drop_review_stack(stack_name)
            st.phase = ""
            return self._change_set_failed(st, obj, say.change_set_failed(stack_name, desc))
        if status == "CREATE_COMPLETE" and execution in ("EXECUTE_IN_PROGRESS", "EXECUTE_COMPLETE"):
            st.phase = "executing"  # judged by where the stack is (the controller: wait, then Ready)
            return self._after_execute(obj, generation, st, artifact, desired, info)
        if status in CS_IN_PROGRESS or execution == "UNAVAILABLE":
            st.set_ready(UNKNOWN, "Progressing", say.change_set_in_progress(stack_name, desc))
            return Outcome(st, spec.poll_interval)
        if status == "CREATE_COMPLETE" and execution == "AVAILABLE":
            return self._execute(obj, generation, st, artifact, desired, ref, desc)
        msg = say.change_set_unexpected(stack_name, desc)
        self._event(WARNING, msg, artifact.revision)
        return self._not_ready(st, obj, "UnexpectedStatus", msg)

    def _execute(self, obj: StackObject, generation: int, st: Status, artifact: Artifact, desired: Desired,
                 ref: str, desc: dict[str, Any]) -> Outcome:
        """ExecuteChangeSet, the phase written ahead; judged at once when the stack has already settled."""
        spec = obj.spec
        stack_name = str(spec.stack_name)
        st.phase = "executing"
        self.save_status(obj.key, st)  # write-ahead: judged by the stack's status after a restart
        try:
            self.cfn.call("execute_change_set", ChangeSetName=ref, StackName=stack_name)
        except (ClientError, BotoCoreError, ResponseParserError) as err:
            if not isinstance(err, ClientError) or error_code(err) != "ValidationError":
                st.phase = ""
                detail = str(translate(err, where=stack_name))
                raise CallFailed(say.execute_failed(stack_name), detail) from None
            with calling(say.delete_failed_change_set_failed(stack_name), stack_name):
                self._delete_change_set(stack_name, ref)  # refused at execution (the local cloud does this)
                self._drop_review_stack(stack_name)
            st.phase = ""
            refused = {**desc, "ExecutionStatus": "EXECUTE_FAILED", "StatusReason": error_message(err)}
            return self._change_set_failed(st, obj, say.change_set_failed(stack_name, refused))
        msg = say.execution_started(stack_name, st.change_set_id)
        self._event(NORMAL, msg, artifact.revision)
        with calling(say.describe_stack_failed(stack_name), stack_name):
            after = self.cfn.describe(stack_name)
        if after is not None and not after.in_progress:
            return self._after_execute(obj, generation, st, artifact, desired, after)
        st.set_ready(UNKNOWN, "Progressing", msg)
        return Outcome(st, spec.poll_interval)

    def _after_execute(
        self,
        obj: StackObject,
        generation: int,
        st: Status,
        artifact: Artifact,
        desired: Desired,
        info: StackInfo | None,
    ) -> Outcome:
        """Judge an executed change set by where the stack ended."""
        spec = obj.spec
        stack_name = str(spec.stack_name)
        name = st.change_set_name
        if info is not None and info.in_progress:
            st.set_ready(UNKNOWN, "Progressing", say.stack_in_progress(stack_name, info.status))
            return Outcome(st, spec.poll_interval)
        with calling(say.describe_change_set_failed(stack_name), stack_name):
            desc = self._describe_change_set(stack_name, self._ref(st, name), name, info.stack_id) \
                if info is not None else None
        if (
            desc is not None
            and desc.get("Status") == "CREATE_COMPLETE"
            and desc.get("ExecutionStatus") == "AVAILABLE"
        ):
            st.phase = "created"  # stopped between the write-ahead and the call: execute it now
            return self._advance(obj, generation, st, artifact, desired, info, name)
        if info is not None and info.status in APPLIED:
            st.phase, st.failures = "", 0
            st.applied_digest, st.stack_id = desired.digest, info.stack_id
            st.observed_generation = generation
            st.last_attempted_revision = st.last_applied_revision = artifact.revision
            st.last_applied_change_set = st.last_attempted_change_set = st.change_set_id or name
            st.set_ready(TRUE, "Succeeded", SUCCEEDED)
            return Outcome(st, spec.interval, applied=True)
        st.phase = ""
        if info is None:
            return self._change_set_failed(st, obj,
                                           f"Change set failed for stack '{stack_name}': the stack is gone")
        # the controller judges the stack first: an unrecoverable one is deleted, a recoverable one
        # reported with its change set
        with calling(say.describe_stack_failed(stack_name), stack_name):
            reasons = failure_reasons(self.cfn.events_since(stack_name, None, limit_pages=1))
        if info.status in RECOVERABLE:
            self._event(WARNING, say.recoverable(stack_name, info.status, info.reason), artifact.revision)
            if desc is not None:  # its execution failed: deleted as the controller deletes a failed one
                with calling(say.delete_failed_change_set_failed(stack_name), stack_name):
                    self._delete_change_set(stack_name, self._ref(st, name))
            detail = "; ".join(reasons[:3])
            return self._change_set_failed(st, obj, say.change_set_failed(stack_name, desc or {})
                                           + (f" ({detail})" if detail else ""))
        failed = self._failed_stack(obj, st, info, artifact.revision)
        if failed is not None and reasons:
            failed.status.message += f" ({'; '.join(reasons[:3])})"
        return failed or Outcome(st, spec.poll_interval)

    @staticmethod
    def _ref(st: Status, name: str) -> str:
        """The change set's ARN when we created it (names are only unique per stack), else its name."""
        return st.change_set_id if st.change_set_id and st.change_set_name == name else name

    def _describe_change_set(
        self, stack_name: str, ref: str, name: str | None = None, stack_id: str = ""
    ) -> dict[str, Any] | None:
        """The change set by ARN or by name on this stack (`stack_id` when known); None when there is none
        (or, looked up by an ARN, it is another change set than `name`, or another stack's)."""
        try:
            desc: dict[str, Any] = self.cfn.call(
                "describe_change_set", ChangeSetName=ref, StackName=stack_name
            )
        except ClientError as err:
            if error_code(err) in ("ChangeSetNotFound", "ChangeSetNotFoundException") or \
                    "does not exist" in error_message(err):
                return None
            raise
        if desc.get("StackName") not in (None, stack_name):
            return None  # the local cloud looks names up across stacks
        if stack_id and desc.get("StackId") not in (None, stack_id):
            return None  # a change set of an earlier stack of this name (the local cloud keeps them)
        if name is not None and desc.get("ChangeSetName") not in (None, name):
            return None
        return desc

    def _drop_review_stack(self, stack_name: str) -> None:
        """Delete the empty REVIEW_IN_PROGRESS stack a failed CREATE change set leaves behind."""
        info = self.cfn.describe(stack_name)
        if info is not None and info.status == "REVIEW_IN_PROGRESS":
            self.cfn.call("delete_stack", StackName=info.stack_id)

    def _delete_change_set(self, stack_name: str, name: str) -> None:
        try:
            self.cfn.call("delete_change_set", ChangeSetName=name, StackName=stack_name)
        except ClientError as err:
            if error_code(err) not in ("ChangeSetNotFound", "ChangeSetNotFoundException", "ValidationError"):
                raise
