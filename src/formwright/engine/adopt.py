"""Bringing existing resources under a stack (`import:` on a stack, `formwright import`): CloudFormation's
rules for an IMPORT change set, checked before it is asked for.

"Bringing existing resources into CloudFormation management" (AWS CloudFormation User Guide): each
resource to import needs a DeletionPolicy; its identifier is the type's primary identifier (the provider
schema's `primaryIdentifier`, as cfn-lint ships it); the type must support import (a provider-schema type
with a read handler: CloudFormation reads the resource to import it); and the change set may do nothing
else: the template is the deployed one plus the imported resources ("Update, create or delete operations
cannot be executed during import operations").
"""

from __future__ import annotations

from typing import Any

from formwright.errors import InputError


def identifier_names(resource_type: str) -> list[str]:
    """The type's primary identifier properties (e.g. ['BucketName']); [] when the type cannot be imported."""
    from formwright.cloud.emulator.schemas import schema

    found = schema(resource_type) or {}
    if "read" not in (found.get("handlers") or {}):
        return []
    return [p.split("/")[-1] for p in found.get("primaryIdentifier") or [] if p.startswith("/properties/")]


def check_imports(stack: Any, template: dict[str, Any]) -> None:
    """The rules a template can break by itself: each `import:` names a resource of the template, with a
    DeletionPolicy, of a type that supports import, by its whole primary identifier. Exit 2 otherwise."""
    config = stack.config
    resources = template.get("Resources") or {}
    written = (stack.original or {}).get("Resources") or {}
    for logical, ids in config.imports.items():
        body = resources.get(logical)
        if not isinstance(body, dict):
            raise InputError(f"stack '{stack.name}' imports {logical}, which its template does not declare",
                             file=config.project.file, line=config.line,
                             hint="add the resource to the template (as it exists), then import it")
        # at the resource in its template when it is written there (not made by a macro)
        line = written.line_of(logical) if logical in written and hasattr(written, "line_of") else None
        where = {"file": stack.source, "line": line} if line else {"file": config.project.file,
                                                                     "line": config.line}
        kind = str(body.get("Type", ""))
        if "DeletionPolicy" not in body:
            raise InputError(f"stack '{stack.name}': {logical} ({kind}) to import has no DeletionPolicy",
                             **where, hint="CloudFormation imports only resources with a DeletionPolicy: add "
                                           "`DeletionPolicy: Retain` to it in the template")
        names = identifier_names(kind)
        if not names:
            raise InputError(f"stack '{stack.name}': {kind} ({logical}) does not support import", **where,
                             hint="see CloudFormation's list of resource types that support import")
        if sorted(ids) != sorted(names):
            raise InputError(f"stack '{stack.name}': {logical} ({kind}) is identified by "
                             f"{', '.join(names)}, not {', '.join(sorted(ids)) or 'nothing'}", **where,
                             hint=f"import: {{{logical}: {{{names[0]}: <value>}}}}")


def pending(stack: Any, deployed: dict[str, Any] | None) -> dict[str, dict[str, str]]:
    """The `import:` resources the deployed template (None: no stack yet) does not hold yet."""
    held = (deployed or {}).get("Resources") or {}
    return {logical: ids for logical, ids in stack.config.imports.items() if logical not in held}


def to_import(cfn: Any, stack: Any, info: Any, template: dict[str, Any]) -> dict[str, dict[str, str]]:
    """The stack's `import:` resources the deployed stack (`info`, None: none yet) does not hold yet; the
    template checked to change nothing else (one GetTemplate)."""
    if not getattr(stack.config, "imports", None):
        return {}
    deployed = None
    if info is not None:
        from formwright.template import loads

        body = cfn.call("get_template", StackName=info.stack_id, TemplateStage="Processed")["TemplateBody"]
        deployed = loads(body) if isinstance(body, str) else body
    wanted = pending(stack, deployed)
    if wanted:
        check_only_imports(stack, template, deployed, wanted)
    return wanted


def check_only_imports(stack: Any, template: dict[str, Any], deployed: dict[str, Any] | None,
                       wanted: dict[str, dict[str, str]]) -> None:
    """Refuse (exit 2) when the template changes anything but adding the resources to import."""
    new = {k: v for k, v in (template.get("Resources") or {}).items() if k not in wanted}
    old = (deployed or {}).get("Resources") or {}
    changed = sorted(n for n in set(new) | set(old) if new.get(n) != old.get(n))
    if changed:
        verb = "differs" if len(changed) == 1 else "differ"
        raise InputError(f"stack '{stack.name}': an import cannot change other resources, and "
                         f"{', '.join(changed)} {verb} from the deployed template",
                         file=stack.config.project.file, line=stack.config.line,
                         hint="deploy the other changes first, without the resources to import; then import")


def resources_to_import(template: dict[str, Any], wanted: dict[str, dict[str, str]]) -> list[dict[str, Any]]:
    """CreateChangeSet's ResourcesToImport."""
    return [{"ResourceType": template["Resources"][logical]["Type"], "LogicalResourceId": logical,
             "ResourceIdentifier": dict(ids)} for logical, ids in sorted(wanted.items())]


def parse_pairs(pairs: list[str], template: dict[str, Any], where: str) -> dict[str, dict[str, str]]:
    """`LogicalId=IDENTIFIER` words (formwright import) as `import:` entries: the value is the type's one
    primary identifier property's."""
    found: dict[str, dict[str, str]] = {}
    resources = template.get("Resources") or {}
    for pair in pairs:
        logical, sep, value = pair.partition("=")
        if not sep or not logical or not value:
            raise InputError(f"'{pair}' is not LogicalId=IDENTIFIER", hint="e.g. Bucket=my-existing-bucket")
        body = resources.get(logical)
        if not isinstance(body, dict):
            raise InputError(f"{where}: the template declares no resource {logical}",
                             hint="add the resource to the template (as it exists), then import it")
        names = identifier_names(str(body.get("Type", "")))
        if len(names) != 1:
            raise InputError(f"{where}: {logical} ({body.get('Type')}) is identified by "
                             f"{', '.join(names) or 'nothing (it cannot be imported)'}",
                             hint="name each part under `import:` of the stack in formwright.yaml"
                             if names else "see CloudFormation's list of resource types that support import")
        found[logical] = {names[0]: value}
    return found
