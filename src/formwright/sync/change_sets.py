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
from formwright.sync.passes import NORMAL, WARNING, Outcome
from formwright.sync.source import Artifact
from formwright.sync.stack_status import APPLIED, RECOVERABLE, StatusBranches
from formwright.sync.status_store import TRUE, UNKNOWN, Status
from formwright.sync.templates import Desired, TemplateSteps

CAPABILITIES = ["CAPABILITY_IAM", "CAPABILITY_NAMED_IAM", "CAPABILITY_AUTO_EXPAND"]


class ChangeSetSteps(StatusBranches, TemplateSteps):
    """Moves an object's change set from created to executed and judged."""

    def _create(self, obj: StackObject, generation: int, st: Status, artifact: Artifact, desired: Desired,
                info: StackInfo | None, name: str) -> Outcome:
        spec = obj.spec
        stack_name = str(spec.stack_name)
        create = info is None or info.status == "REVIEW_IN_PROGRESS"
        if st.change_set_name == name and info is not None:
            self._delete_change_set(stack_name, self._ref(st, name))  # a failed attempt of the same name
        try:
            argument = self._template_argument(obj, desired.body)
        except (ClientError, BotoCoreError, ResponseParserError, FormwrightError) as err:
            st.last_attempted_revision = artifact.revision
            return self._not_ready(st, obj, "TemplateUploadFailed", f"Failed to upload template to S3 for "
                                   f"stack '{stack_name}': {translate(err, where=stack_name)}")
        st.phase, st.change_set_name, st.last_attempted_revision = "created", name, artifact.revision
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
        except ClientError as err:
            if error_code(err) != "AlreadyExistsException":
                st.phase = ""
                return self._api_failed(st, obj, f"Failed to create a change set for stack '{stack_name}': "
                                        f"{error_message(err)}")
        if st.change_set_id:
            st.last_attempted_change_set = st.change_set_id
            msg = say.change_set_created(stack_name, st.change_set_id, create)
            self._event(NORMAL, msg, artifact.revision)
            st.set_ready(UNKNOWN, "Progressing", msg)
        self.save_status(obj.key, st)  # its ARN: change set names are per stack, ARNs are global
        return self._advance(obj, generation, st, artifact, desired, info, name)

    def _advance(self, obj: StackObject, generation: int, st: Status, artifact: Artifact, desired: Desired,
                 info: StackInfo | None, name: str) -> Outcome:
        """Move an existing change set on: wait, drop when empty or failed, execute when ready."""
        spec = obj.spec
        stack_name = str(spec.stack_name)
        ref = self._ref(st, name)
        desc = self._describe_change_set(stack_name, ref, name)
        if desc is None:
            st.phase = ""
            st.change_set_name = ""  # not there: nothing to delete before creating it
            return self._create(obj, generation, st, artifact, desired, info, name)
        arn = desc.get("ChangeSetId") or st.change_set_id
        st.last_attempted_change_set = st.change_set_id = arn
        status, execution = desc.get("Status", ""), desc.get("ExecutionStatus", "")
        if status in ("CREATE_PENDING", "CREATE_IN_PROGRESS"):
            st.set_ready(UNKNOWN, "Progressing", say.change_set_in_progress(stack_name, desc))
            return Outcome(st, spec.poll_interval)
        if is_no_change(desc):
            self._delete_change_set(stack_name, ref)
            current = info or self.cfn.describe(stack_name)
            st.applied_digest, st.stack_id = desired.digest, current.stack_id if current else ""
            st.phase = ""
            return self._up_to_date(obj, generation, st, artifact.revision, current) if current else \
                Outcome(st, spec.poll_interval)
        if status != "CREATE_COMPLETE" or execution in ("EXECUTE_FAILED", "OBSOLETE"):
            self._delete_change_set(stack_name, ref)
            self._drop_review_stack(stack_name)
            st.phase = ""
            return self._change_set_failed(st, obj, say.change_set_failed(stack_name, desc))
        if execution == "AVAILABLE":
            st.phase = "executing"
            self.save_status(obj.key, st)  # write-ahead: judged by the stack's status after a restart
            try:
                self.cfn.call("execute_change_set", ChangeSetName=ref, StackName=stack_name)
            except ClientError as err:
                if error_code(err) != "ValidationError":
                    raise
                self._delete_change_set(stack_name, ref)  # refused at execution (the local cloud does this)
                self._drop_review_stack(stack_name)
                st.phase = ""
                refused = {**desc, "ExecutionStatus": "EXECUTE_FAILED", "StatusReason": error_message(err)}
                return self._change_set_failed(st, obj, say.change_set_failed(stack_name, refused))
            msg = say.execution_started(stack_name, arn)
            self._event(NORMAL, msg, artifact.revision)
            after = self.cfn.describe(stack_name)
            if after is not None and not after.in_progress:
                return self._after_execute(obj, generation, st, artifact, desired, after)
            st.set_ready(UNKNOWN, "Progressing", msg)
            return Outcome(st, spec.poll_interval)
        if execution in ("EXECUTE_IN_PROGRESS", "EXECUTE_COMPLETE"):
            st.phase = "executing"
            return self._after_execute(obj, generation, st, artifact, desired, info)
        self._delete_change_set(stack_name, ref)  # UNAVAILABLE: make it again
        st.phase = ""
        st.set_ready(UNKNOWN, "Progressing", say.change_set_in_progress(stack_name, desc))
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
        desc = self._describe_change_set(stack_name, self._ref(st, name), name) if info is not None else None
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
        reasons = failure_reasons(self.cfn.events_since(stack_name, None, limit_pages=1))
        if info.status in RECOVERABLE:
            self._event(WARNING, say.recoverable(stack_name, info.status, info.reason), artifact.revision)
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
        self, stack_name: str, ref: str, name: str | None = None
    ) -> dict[str, Any] | None:
        """The change set by ARN or by name on this stack; None when there is none (or, looked up by an ARN,
        it is another change set than `name`)."""
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
