"""What every step of one reconcile pass shares: its Outcome, its events and Ready=False."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from botocore.exceptions import BotoCoreError, ClientError
from botocore.parsers import ResponseParserError

from formwright.cloud.errors import translate
from formwright.engine.cfn import CallCounter, CloudFormation
from formwright.sync import messages as say
from formwright.sync.objects import StackObject
from formwright.sync.status_store import FALSE, Event, Status

NORMAL, WARNING = "Normal", "Warning"


def backoff(failures: int, base: float, cap: float) -> float:
    """base, 2·base, 4·base … capped at `cap` (the object's retryInterval)."""
    return min(cap, base * (2 ** max(0, failures - 1)))


class CallFailed(Exception):
    """An AWS call of a step failed: the controller's Ready message for it, and the error for its event."""

    def __init__(self, message: str, detail: str, reason: str = "CloudFormationApiCallFailed") -> None:
        super().__init__(message)
        self.message, self.detail, self.reason = message, detail, reason


@contextmanager
def calling(message: str, where: str, reason: str = "CloudFormationApiCallFailed") -> Iterator[None]:
    """AWS errors inside become CallFailed(`message`) (the controller's text for that call)."""
    try:
        yield
    except (ClientError, BotoCoreError, ResponseParserError) as err:
        raise CallFailed(message, str(translate(err, where=where)), reason) from None


@dataclass
class Outcome:
    """The result of one reconcile: the new status and when to run again (None: not until woken)."""

    status: Status
    requeue: float | None
    applied: bool = False
    #: Events of this pass, as the controller records them (Kubernetes events in the operator).
    events: list[Event] = field(default_factory=list)



class PassSteps:
    """The reconciler's shared parts and the helpers every step uses (the step mixins build on it)."""

    target: Any
    cfn: CloudFormation
    counter: CallCounter
    save: Callable[[str, Status], None]
    _local: threading.local

    def _event(self, kind: str, message: str, revision: str = "") -> None:
        """Record an event of this pass (the controller's `r.event`)."""
        events = getattr(self._local, "events", None)
        if events is not None:
            events.append(Event(kind, message, revision))

    def _api_failed(self, st: Status, obj: StackObject, failed: CallFailed) -> Outcome:
        """An AWS call failed: the Warning event "Failed to reconcile stack: <error>" and Ready=False with the
        controller's text for that call (CloudFormationApiCallFailed, or TemplateUploadFailed), as
        `reconcile` does when reconcileStack returns an error."""
        self._event(WARNING, say.reconcile_failed(failed.detail), st.last_attempted_revision)
        return self._not_ready(st, obj, failed.reason, failed.message)

    def save_status(self, key: str, st: Status) -> None:
        """Persist an intermediate status (before a write call)."""
        self.save(key, st)

    def _change_set_failed(self, st: Status, obj: StackObject, message: str) -> Outcome:
        """ChangeSetFailed with a Warning event, retried at retryInterval."""
        self._event(WARNING, message, st.last_attempted_revision)
        return self._not_ready(st, obj, "ChangeSetFailed", message)

    def _not_ready(self, st: Status, obj: StackObject, reason: str, message: str) -> Outcome:
        """Ready=False with the controller's reason, retried at retryInterval (as the controller)."""
        st.failures += 1
        st.set_ready(FALSE, reason, message)
        return Outcome(st, obj.retry_interval)
