"""The controller's branches per stack status (internal/clients/types/stack.go and the reconcile loop)."""

from __future__ import annotations

from formwright.engine.cfn import StackInfo
from formwright.sync import messages as say
from formwright.sync.drift import DriftSteps
from formwright.sync.messages import SUCCEEDED
from formwright.sync.objects import StackObject
from formwright.sync.passes import WARNING, Outcome, calling
from formwright.sync.status_store import TRUE, UNKNOWN, Status

# internal/clients/types/stack.go: the controller's stack status classes
RECREATE = {"CREATE_FAILED", "DELETE_FAILED", "ROLLBACK_COMPLETE", "ROLLBACK_FAILED"}
RECOVERABLE = {
    "UPDATE_FAILED", "UPDATE_ROLLBACK_COMPLETE", "IMPORT_ROLLBACK_COMPLETE", "IMPORT_ROLLBACK_FAILED",
}
APPLIED = {"CREATE_COMPLETE", "UPDATE_COMPLETE", "IMPORT_COMPLETE"}


class StatusBranches(DriftSteps):
    """What a failed, unknown or applied stack leads to."""

    drift: bool

    def _failed_stack(self, obj: StackObject, st: Status, info: StackInfo, revision: str) -> Outcome | None:
        """A stack in a failed or unknown status, as the controller treats it; None: go on to a change set
        (a recoverable failure, after its Warning event). A failed AWS call raises CallFailed."""
        stack_name = str(obj.spec.stack_name)
        st.last_attempted_revision = revision
        if info.status == "UPDATE_ROLLBACK_FAILED":
            with calling(say.continue_rollback_failed(stack_name), stack_name):
                self.cfn.call("continue_update_rollback", StackName=info.stack_id)
            msg = say.rollback_continued(stack_name, info.status)
            self._event(WARNING, msg, revision)
            return self._not_ready(st, obj, "StackRollbackFailed", msg)
        if info.status in RECREATE:
            with calling(say.delete_failed_stack_failed(stack_name), stack_name):
                self.cfn.call("delete_stack", StackName=info.stack_id)
            msg = say.unrecoverable(stack_name, info.status, info.reason)
            self._event(WARNING, msg, revision)
            st.applied_digest = ""
            return self._not_ready(st, obj, "UnrecoverableStackFailure", msg)
        if info.status in RECOVERABLE:
            self._event(WARNING, say.recoverable(stack_name, info.status, info.reason), revision)
            st.applied_digest = ""
            return None
        msg = say.unexpected(stack_name, info.status, info.reason)
        self._event(WARNING, msg, revision)
        return self._not_ready(st, obj, "UnexpectedStatus", msg)

    def _up_to_date(self, obj: StackObject, generation: int, st: Status, revision: str,
                    info: StackInfo, change_set: str = "") -> Outcome:
        """Nothing to apply: record the revision, look for drift, stay Ready. `change_set` is the ARN of the
        empty change set that showed it (none: formwright made no change set for unchanged inputs)."""
        # Ready as the controller's CloudFormationStackReady: the applied change set is the attempted one,
        # the empty one of this pass, else the one that last applied (never a failed attempt since)
        applied = change_set or st.last_applied_change_set or st.last_attempted_change_set
        st.last_attempted_change_set = st.last_applied_change_set = applied
        st.observed_generation = generation
        st.last_attempted_revision = st.last_applied_revision = revision
        st.phase, st.failures = "", 0
        requeue = obj.spec.interval
        if self.drift:
            requeue = self._check_drift(obj, st, info) or requeue
            if st.phase == "correcting":
                st.phase = ""
                st.applied_digest = ""  # re-apply with the correction tag on the next pass
                st.set_ready(UNKNOWN, "Progressing", f"correcting drift: {st.drift}")
                return Outcome(st, 0.0)
        st.set_ready(TRUE, "Succeeded", SUCCEEDED)
        return Outcome(st, requeue)
