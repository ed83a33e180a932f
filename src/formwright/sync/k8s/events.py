"""A pass's events as Kubernetes events, annotated with the source revision as the Flux controller does.

The controller's `event()` (internal/controllers/util.go) calls fluxcd/pkg/runtime's
`AnnotatedEventf(stack, {"cloudformation.contrib.fluxcd.io/revision": revision}, type, severity, msg)`:
the revision goes into the event's `metadata.annotations` (not into its message), the reason is the
severity (`info` or `error`) and the type Normal, or Warning for `error`.

`kopf.event` cannot carry annotations, so the event is posted through kopf's own API client on kopf's
event loop (k8s/kopf_api.py); a kopf without those internals falls back to `kopf.event` with the revision
in the message, and says so once in the log.
"""

from __future__ import annotations

import datetime
import logging
import time
from collections.abc import Mapping
from typing import Any

import kopf

from formwright.sync.k8s import kopf_api
from formwright.sync.objects import STACK_API_GROUP
from formwright.sync.status_store import Event

#: `cfnv1.GroupVersion.Group + "/revision"` in the controller
REVISION_ANNOTATION = f"{STACK_API_GROUP}/revision"
log = logging.getLogger("formwright.sync.k8s")
_warned: list[bool] = []


def event_body(body: Mapping, event: Event, component: str) -> dict[str, Any]:
    """The core/v1 Event for `event` on the object `body`, in the shape the controller's recorder posts."""
    meta = body.get("metadata") or {}
    namespace = meta.get("namespace") or "default"
    involved = {"apiVersion": body.get("apiVersion"), "kind": body.get("kind"), "name": meta.get("name"),
                "namespace": namespace, "uid": meta.get("uid"),
                "resourceVersion": meta.get("resourceVersion")}
    now = datetime.datetime.now(datetime.UTC).isoformat()
    # client-go's recorder names an event `<object name>.<unix nanoseconds in hex>` (tools/record, makeEvent)
    metadata: dict[str, Any] = {"namespace": namespace, "name": f"{meta.get('name')}.{time.time_ns():x}"}
    if event.revision:
        metadata["annotations"] = {REVISION_ANNOTATION: event.revision}
    return {
        "apiVersion": "v1", "kind": "Event", "metadata": metadata,
        "involvedObject": {k: v for k, v in involved.items() if v},
        "type": event.type, "reason": severity(event), "message": event.message,
        "source": {"component": component}, "reportingComponent": component,
        "firstTimestamp": now, "lastTimestamp": now, "count": 1,
    }


def severity(event: Event) -> str:
    """Flux's event severity, the controller's event reason: `error` for a Warning, else `info`."""
    return "error" if event.type == "Warning" else "info"


def post_events(body: Mapping, events: list[Event]) -> None:
    """Post `events` on the object; nothing outside `kopf run` (a handler called directly has no API)."""
    if not kopf_api.available():  # a kopf that moved its internals: the revision goes into the message
        _fallback(body, events)
        return
    component = kopf_api.reporting_component()
    if not component:
        return
    for event in events:
        payload = event_body(body, event, component)
        url = f"/api/v1/namespaces/{payload['metadata']['namespace']}/events"

        def post(api: Any, settings: Any, p: dict[str, Any] = payload, u: str = url) -> Any:
            return api.post(u, payload=p, headers={"Content-Type": "application/json"}, settings=settings,
                            logger=log)

        kopf_api.call(post, f"post an event ({event.type} {severity(event)}: {event.message})")


def _fallback(body: Mapping, events: list[Event]) -> None:
    if not _warned:
        _warned.append(True)
        log.warning("this kopf has no API client to post annotated events: the revision goes into the "
                    "event's message instead of its %s annotation", REVISION_ANNOTATION)
    for event in events:
        message = event.message + (f" (revision {event.revision})" if event.revision else "")
        try:
            kopf.event(body, type=event.type, reason=severity(event), message=message)
        except LookupError:
            return
