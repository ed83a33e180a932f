"""Firing events: every trigger of an element (or the project) for an event, in file order.

Each action gets the JSON context (operation, event, element, instance, inputs, properties, manifest,
the element's transaction records, execution ids). Properties it reports feed `{{ property(…) }}`;
secure ones go to the secret store and are masked from then on. A trigger with a `cache_key` whose
rendered value is unchanged is skipped on updates and upgrades.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from formwright.lifecycle.actions import (
    ActionResult,
    OperationLog,
    Redactor,
    command_argv,
    run_command,
    run_python,
)
from formwright.lifecycle.manifest import Manifest, Trigger
from formwright.lifecycle.rendering import instance_context, render_value
from formwright.lifecycle.sources import SecretStore
from formwright.state.journal import Journal, Operation

CACHEABLE = ("update", "upgrade")


@dataclass
class EventScope:
    """The instance-wide values every action of an operation sees."""

    operation: str  # create | update | upgrade | delete | scope | rollback | retry | <custom name>
    instance: str
    version: str | None
    inputs: dict[str, Any]
    properties: dict[str, str]
    manifest_data: dict[str, Any]
    cwd: Path
    retry_of: str | None = None  # on a retry (operation "retry"): the operation retried


class EventFirer:
    """Runs triggers and keeps what they report (journal, secret store, log)."""

    def __init__(
        self,
        journal: Journal,
        op: Operation,
        manifest: Manifest,
        scope: EventScope,
        log: OperationLog,
        redactor: Redactor,
        secrets: SecretStore,
    ) -> None:
        self.journal = journal
        self.op = op
        self.manifest = manifest
        self.scope = scope
        self.log = log
        self.redactor = redactor
        self.secrets = secrets
        self.fired: list[tuple[str, str]] = []  # (element, event), in order

    def fire(self, element: str, event: str, *, action: str = "", triggers: list[Trigger] | None = None,
             manifest: Manifest | None = None, cwd: Path | None = None, cacheable: bool = True) -> str | None:
        """Run the triggers for (element, event); None when all succeeded, else the first error.

        `manifest` and `cwd` name another version's manifest and folder (a clean-up delete runs the hooks
        of the version that made the stack); `cacheable=False` never skips a hook on its cache key.
        """
        manifest = manifest or self.manifest
        chosen = manifest.triggers_for(element, event) if triggers is None else triggers
        if not chosen:
            return None
        self.fired.append((element, event))
        for index, trigger in enumerate(chosen):
            where = f"{element or 'project'}/{event}"
            hook_id = f"{element}:{event}:{index}"
            jinja = instance_context(self.scope.instance, self.scope.version, self.scope.inputs,
                                     self.scope.properties, strict=True)
            cache_key = None
            if trigger.cache_key is not None:
                cache_key = str(render_value(trigger.cache_key, jinja, manifest.file, trigger.line))
                if cacheable and self.scope.operation in CACHEABLE and \
                        self.journal.hook_key(self.scope.instance, hook_id) == self.redactor.text(cache_key):
                    self.log.write(where, "skipped: cache key unchanged")
                    continue
            result = self._run(trigger, element, event, action, jinja, manifest, cwd or self.scope.cwd)
            for item in result.logs:
                self.log.write(where, item["msg"], item["level"])
            self._keep(element, result)
            if not result.ok:
                message = f"{where}: {result.error}"
                self.log.write(where, message, "error")
                return message
            if cache_key is not None:
                self.journal.set_hook_key(self.scope.instance, hook_id, self.redactor.text(cache_key))
        return None

    def _run(self, trigger: Trigger, element: str, event: str, action: str, jinja: dict[str, Any],
             manifest: Manifest, cwd: Path) -> ActionResult:
        context = {
            "operation": self.scope.operation,
            "retry_of": self.scope.retry_of,
            "event": event,
            "element": element,
            "instance": {"name": self.scope.instance, "version": self.scope.version},
            "inputs": self.scope.inputs,
            "properties": dict(self.scope.properties),
            "manifest": self.scope.manifest_data,
            "transactions": self.journal.transactions(self.scope.instance, element),
            "execution": {"operation_id": self.op.id, "invocation_id": uuid.uuid4().hex,
                          "attempt": self.op.attempt, "action": action},
        }
        where = f"{element or 'project'}/{event}"
        if trigger.is_python:
            assert isinstance(trigger.action, str)
            return run_python(
                trigger.action, context, cwd=cwd, timeout=trigger.timeout, log=self.log, where=where
            )
        rendered = render_value(trigger.action, jinja, manifest.file, trigger.line)
        argv = command_argv(rendered, cwd)
        return run_command(argv, context, cwd=cwd, timeout=trigger.timeout, log=self.log, where=where)

    def _keep(self, element: str, result: ActionResult) -> None:
        secure: dict[str, str] = {}
        for prop in result.properties:
            name = prop["name"] if (not element or "." in prop["name"]) else f"{element}.{prop['name']}"
            if prop["secure"]:
                self.redactor.add(prop["value"])
                secure[name] = prop["value"]
            else:
                self.journal.set_property(self.scope.instance, name, self.redactor.text(prop["value"]))
            self.scope.properties[name] = prop["value"]
        if secure:
            self.secrets.update(self.scope.instance, properties=secure)
        for record in result.transactions:
            self.journal.add_transaction(self.scope.instance, element, self.op.id, self.redactor.data(record))
