"""The Flux CloudFormation controller's Ready messages and event texts, word for word.

From awslabs/aws-cloudformation-controller-for-flux, internal/controllers/cloudformationstack_controller.go
(the `msg := fmt.Sprintf(...)` lines) and api/v1alpha1 ("Stack reconciliation succeeded").
"""

from __future__ import annotations

from typing import Any

SUCCEEDED = "Stack reconciliation succeeded"
IN_PROGRESS = "Stack reconciliation in progress"


def _with_reason(message: str, reason: str) -> str:
    return message + (f", reason '{reason}'" if reason else "")


def stack_in_progress(stack: str, status: str) -> str:
    """Progressing while a stack action runs."""
    return (f"Stack action for stack '{stack}' is in progress (status: '{status}'), "
            "waiting for stack action to complete")


def deletion_waits(stack: str, status: str) -> str:
    """Progressing while a stack marked for deletion finishes its action."""
    return (f"Stack action is in progress for stack marked for deletion '{stack}' (status '{status}'), "
            "waiting for stack action to complete")


def rollback_continued(stack: str, status: str) -> str:
    """StackRollbackFailed: ContinueUpdateRollback was called."""
    return f"Stack '{stack}' has a previously failed rollback (status '{status}'), continuing rollback"


def unrecoverable(stack: str, status: str, reason: str) -> str:
    """UnrecoverableStackFailure: the stack was deleted to be created again."""
    return _with_reason(f"Stack '{stack}' is in an unrecoverable state and must be recreated: "
                        f"status '{status}'", reason)


def recoverable(stack: str, status: str, reason: str) -> str:
    """The Warning event of a failed stack that a new change set can update."""
    return _with_reason(f"Stack '{stack}' is in a failed state (status '{status}'", reason) + \
        "), creating a new change set"


def unexpected(stack: str, status: str, reason: str) -> str:
    """UnexpectedStatus: a stack status none of the controller's branches knows."""
    return _with_reason(f"Unexpected stack status for stack '{stack}': status '{status}'", reason)


def change_set_state(desc: dict[str, Any]) -> str:
    """`status '…', execution status '…', reason '…'` of a described change set."""
    return (f"status '{desc.get('Status', '')}', execution status '{desc.get('ExecutionStatus', '')}', "
            f"reason '{desc.get('StatusReason', '')}'")


def change_set_in_progress(stack: str, desc: dict[str, Any]) -> str:
    """Progressing while the change set is being created."""
    return f"Change set is in progress for stack '{stack}': {change_set_state(desc)}"


def change_set_failed(stack: str, desc: dict[str, Any]) -> str:
    """ChangeSetFailed (and its Warning event)."""
    return f"Change set failed for stack '{stack}': {change_set_state(desc)}"


def change_set_created(stack: str, arn: str, create: bool) -> str:
    """The Normal event (and Progressing message) after CreateChangeSet."""
    return f"{'Creation' if create else 'Update'} of stack '{stack}' in progress (change set {arn})"


def execution_started(stack: str, arn: str) -> str:
    """The Normal event (and Progressing message) after ExecuteChangeSet."""
    return f"Change set execution started for stack '{stack}' (change set {arn})"
