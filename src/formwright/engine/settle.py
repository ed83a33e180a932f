"""Settling a stack before its change set: every status a deploy can meet is brought to one a change set
can start from.

*_IN_PROGRESS waits; ROLLBACK_COMPLETE after a failed create is deleted (and re-created by the deploy);
UPDATE_ROLLBACK_FAILED gets continue-update-rollback; CREATE_FAILED and UPDATE_FAILED (rollback
disabled) are rolled back with RollbackStack, or updated again when the stack keeps failed resources
(`on_failure: do_nothing`); IMPORT_ROLLBACK_FAILED is updated again; DELETE_FAILED and ROLLBACK_FAILED
are errors with a hint.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from formwright.engine.results import ProgressCallback, ProgressEvent
from formwright.errors import CloudError

if TYPE_CHECKING:
    from formwright.engine.cfn import CloudFormation
    from formwright.engine.stack import Stack
    from formwright.engine.stack_info import StackInfo

DEAD_ENDS = {
    "DELETE_FAILED": "a delete failed; fix the resources that would not delete, "
                     "then `formwright delete` again",
    "ROLLBACK_FAILED": "the rollback failed; delete the stack (retaining stuck resources) and deploy again",
}
# Left by a failed operation with rollback disabled: RollbackStack takes them back to the last stable
# state (deleting a stack that never had one), or an update retries from where they stopped.
FAILED_KEPT = ("CREATE_FAILED", "UPDATE_FAILED")


class SettleSteps:
    """The status steps of engine.runner.StackRunner (which has `cfn` and `progress`), and its progress."""

    cfn: CloudFormation
    progress: ProgressCallback

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
            rolled = self._recover(stack, info, "rollback_stack", "updating", note)
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
            after = self._recover(stack, info, "delete_stack", "deleting", note)
            if after is not None and after.status != "DELETE_COMPLETE":
                raise CloudError(f"could not delete the rolled-back stack: {after.status} {after.reason}",
                                 where=stack.name)
            return None, note
        if info.status == "UPDATE_ROLLBACK_FAILED":
            note = "stack was UPDATE_ROLLBACK_FAILED: continued the rollback first"
            info = self._recover(stack, info, "continue_update_rollback", "updating", note)
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

    def _recover(self, stack: Stack, info: StackInfo, operation: str, phase: str,
                 note: str) -> StackInfo | None:
        """Start `operation` (rollback_stack, delete_stack, continue_update_rollback) on the stack and
        wait for its end; the stack as it left it (None: gone)."""
        self._say(stack, phase, info.status, note)
        self.cfn.call(operation, StackName=info.stack_id, **role(stack))
        return self.cfn.wait_operation(info.stack_id, info, on_poll=lambda i: self._poll(stack, phase, i))

    def _say(self, stack: Stack, phase: str, status: str, message: str) -> None:
        self.progress(ProgressEvent(stack.name, phase, status, message))

    def _poll(self, stack: Stack, phase: str, info: StackInfo | None) -> None:
        self._say(stack, phase, info.status if info else "DELETE_COMPLETE", "")


def role(stack: Stack) -> dict[str, str]:
    """RoleARN for the stack's `service_role`, when it has one."""
    return {"RoleARN": stack.config.service_role} if stack.config.service_role else {}
