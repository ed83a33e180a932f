"""The Flux CloudFormation controller's Ready messages and event texts, word for word.

From awslabs/aws-cloudformation-controller-for-flux, internal/controllers/cloudformationstack_controller.go
(the `msg := fmt.Sprintf(...)` lines) and api/v1alpha1 ("Stack reconciliation succeeded").

Where the controller only logs a cause (a template that does not load, a source it may not read) formwright
appends it to the controller's text after `: `, since the Ready message is the one place a user sees it;
where the controller puts the cause into an event (a failed AWS call: "Failed to reconcile stack: <error>"),
the Ready message is the controller's text alone.
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


def change_set_unexpected(stack: str, desc: dict[str, Any]) -> str:
    """UnexpectedStatus: a change set status none of the controller's branches knows."""
    return f"Unexpected change set status for stack '{stack}': {change_set_state(desc)}"


def reconcile_failed(detail: str) -> str:
    """The Warning event of a failed AWS call; the condition keeps the call's own text (below)."""
    return f"Failed to reconcile stack: {detail}"


# The Ready=False messages of failed AWS calls (CloudFormationApiCallFailed, TemplateUploadFailed): the
# controller's fixed texts; the error itself goes into the event (reconcile_failed).
def describe_stack_failed(stack: str) -> str:
    """DescribeStacks failed (reconcileStack and reconcileDelete)."""
    return f"Failed to describe the stack '{stack}'"


def continue_rollback_failed(stack: str) -> str:
    """ContinueUpdateRollback failed."""
    return f"Failed to continue a failed rollback for stack '{stack}'"


def delete_failed_stack_failed(stack: str) -> str:
    """DeleteStack of an unrecoverable stack failed."""
    return f"Failed to delete the failed stack '{stack}'"


def upload_failed(stack: str) -> str:
    """TemplateUploadFailed: the template could not be put into the template bucket."""
    return f"Failed to upload template to S3 for stack '{stack}'"


def create_change_set_failed(stack: str) -> str:
    """CreateChangeSet failed."""
    return f"Failed to create a change set for stack '{stack}'"


def describe_change_set_failed(stack: str) -> str:
    """DescribeChangeSet failed."""
    return f"Failed to describe a change set for stack '{stack}'"


def delete_empty_change_set_failed(stack: str) -> str:
    """DeleteChangeSet of an empty change set failed."""
    return f"Failed to delete an empty change set for stack '{stack}'"


def delete_failed_change_set_failed(stack: str) -> str:
    """DeleteChangeSet of a failed change set failed."""
    return f"Failed to delete a failed change set for stack '{stack}'"


def execute_failed(stack: str) -> str:
    """ExecuteChangeSet failed."""
    return f"Failed to execute a change set for stack '{stack}'"


def delete_stack_failed(stack: str) -> str:
    """DeleteStack of an object's stack (reconcileDelete) failed."""
    return f"Failed to delete the stack '{stack}'"
