"""Kubernetes API calls from inside a kopf handler, through kopf's own client on kopf's event loop.

kopf writes a handler's status patch only when the handler returns, and `kopf.event` cannot carry
annotations; the Flux controller does both mid-pass (a new generation's Ready=Unknown is patched at once,
events are annotated with the revision). These calls use kopf's credentials, retries and settings; outside
`kopf run` (a handler called directly) there is no API and nothing is sent.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine
from typing import Any

from formwright.sync.objects import STACK_API_VERSION, STACK_PLURAL

CALL_TIMEOUT = 30.0
log = logging.getLogger("formwright.sync.k8s")


def available() -> bool:
    """True when this kopf exposes the internals these calls need."""
    try:
        from kopf._cogs.clients import api  # noqa: F401
        from kopf._core.engines import posting  # noqa: F401
    except ImportError:
        return False
    return True


def call(make: Callable[[Any, Any], Coroutine[Any, Any, Any]], what: str) -> bool:
    """Run `make(api, settings)` on kopf's loop (waiting for it from a sync handler's thread); False when
    there is no kopf context or the call failed (logged: these calls never fail a pass)."""
    if not available():
        return False
    from kopf._cogs.clients import api
    from kopf._core.engines import posting

    try:
        loop, settings = posting.event_queue_loop_var.get(), posting.settings_var.get()
    except LookupError:
        return False
    coroutine = make(api, settings)
    try:
        if _running_loop() is loop:  # an async handler: send without waiting
            loop.create_task(coroutine)
            return True
        asyncio.run_coroutine_threadsafe(coroutine, loop).result(CALL_TIMEOUT)
    except Exception as err:  # noqa: BLE001 - auxiliary: the pass goes on
        log.warning(f"Failed to {what}: {err}")
        return False
    return True


def reporting_component() -> str:
    """kopf's reporting component (the events' source), or "" outside `kopf run`."""
    if not available():
        return ""
    from kopf._core.engines import posting

    try:
        return str(posting.settings_var.get().posting.reporting_component)
    except LookupError:
        return ""


def patch_status(namespace: str, name: str, status: dict[str, Any]) -> bool:
    """Merge-patch a CloudFormationStack's `.status` now (its status subresource)."""
    url = f"/apis/{STACK_API_VERSION}/namespaces/{namespace}/{STACK_PLURAL}/{name}/status"
    headers = {"Content-Type": "application/merge-patch+json"}
    return call(lambda api, settings: api.patch(url, payload={"status": status}, headers=headers,
                                                settings=settings, logger=log),
                f"patch the status of {namespace}/{name}")


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None
