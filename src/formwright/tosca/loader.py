"""From a service template on disk to a checked EffectiveModel, in one call."""

from __future__ import annotations

from typing import Any

from formwright.errors import InputError
from formwright.tosca.build import build_model
from formwright.tosca.diagnostics import Diagnostics, Problem
from formwright.tosca.documents import load_documents
from formwright.tosca.fulfil import fulfil_hosts
from formwright.tosca.functions import check_functions
from formwright.tosca.inputs import assign_inputs
from formwright.tosca.model import EffectiveModel
from formwright.tosca.parser import run_tosca_parser
from formwright.tosca.precheck import (
    check_function_references,
    check_structure,
    check_type_definitions,
    check_version,
    require_node_templates,
)
from formwright.tosca.source import Source
from formwright.tosca.types import TypeRegistry


def check_hosting(model: EffectiveModel) -> None:
    """Fail when HostedOn relationships form a cycle, or a node is hosted on two nodes."""
    for node in model.nodes.values():
        hosts = [r for r in node.requirements if r.is_a("tosca.relationships.HostedOn")]
        # the same host named twice (a `host` and a HostedOn requirement of another name, as tosca-parser's
        # test_requirements.yaml does) is one host
        others = [r for r in hosts if r.target != hosts[0].target]
        if others:
            loc = others[0].location
            raise InputError(f"node '{node.name}' is hosted on more than one node",
                             file=loc.file if loc else None, line=loc.line if loc else None)
    for node in model.nodes.values():
        path = [node.name]
        current = model.host_of(node)
        while current is not None:
            if current.name in path:
                cycle = " -> ".join([*path[path.index(current.name):], current.name])
                rel = next(
                    r for r in model.nodes[path[-1]].requirements if r.is_a("tosca.relationships.HostedOn")
                )
                loc = rel.location
                raise InputError(f"HostedOn cycle: {cycle}", file=loc.file if loc else None,
                                 line=loc.line if loc else None)
            path.append(current.name)
            current = model.host_of(current)


def load_model(source: Source, inputs: dict[str, Any] | None = None, *,
               strict: bool = False) -> EffectiveModel:
    """Parse and validate `source` (with tosca-parser) and return its EffectiveModel with inputs applied.

    What TOSCAna tolerated is in `model.warnings` (an error when `strict`); errors are raised together."""
    diagnostics = Diagnostics(strict=strict)
    documents = load_documents(source)
    for doc in documents.all():
        for key, line, first in doc.duplicates:
            diagnostics.warn(Problem(f"duplicate key '{key}' (first at line {first}): the last one is used, "
                                     "as tosca-parser reads it", doc.shown, line, "remove one of them"))
    check_version(documents.entry, diagnostics)
    check_type_definitions(documents)
    registry = TypeRegistry(documents)
    fulfil_hosts(documents.entry, registry, diagnostics)
    check_structure(documents.entry, registry)
    check_function_references(documents.entry, registry)
    given = dict(inputs or {})
    tosca = run_tosca_parser(documents, registry, diagnostics)
    model = build_model(documents.entry, registry, tosca, source.root)
    check_hosting(model)
    assign_inputs(model.inputs, given, documents.entry.shown)
    check_functions(model, diagnostics)
    diagnostics.raise_errors()
    require_node_templates(documents.entry)
    model.warnings = list(diagnostics.warnings)
    model.strict = strict
    model.base = source.entry.parent.relative_to(source.root).as_posix()
    model.source = source.display
    return model
