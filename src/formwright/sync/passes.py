"""What every step of one reconcile pass shares: its Outcome, its events and Ready=False."""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from formwright.engine.cfn import CallCounter, CloudFormation
from formwright.sync.objects import StackObject
from formwright.sync.status_store import FALSE, Event, Status

NORMAL, WARNING = "Normal", "Warning"


def backoff(failures: int, base: float, cap: float) -> float:
    """base, 2·base, 4·base … capped at `cap` (the object's retryInterval)."""
    return min(cap, base * (2 ** max(0, failures - 1)))


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

    def _api_failed(self, st: Status, obj: StackObject, detail: str) -> Outcome:
        """An AWS call failed: Warning "Failed to reconcile stack: …", CloudFormationApiCallFailed."""
        self._event(WARNING, f"Failed to reconcile stack: {detail}", st.last_attempted_revision)
        return self._not_ready(st, obj, "CloudFormationApiCallFailed", detail)

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
