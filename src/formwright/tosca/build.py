"""Building the EffectiveModel from the loaded documents, the type registry and tosca-parser's result.

Raw values (with their source lines) come from the documents; property defaults come from
tosca-parser's property objects; interfaces and artifacts are merged along the type chain.
"""

from __future__ import annotations

from typing import Any

from formwright.errors import InputError
from formwright.template import line_of
from formwright.tosca.documents import Document
from formwright.tosca.model import (
    LIFECYCLE,
    STANDARD,
    Artifact,
    EffectiveModel,
    Input,
    Location,
    Node,
    Operation,
    Output,
    Relationship,
)
from formwright.tosca.precheck import node_templates, relationship_type_name, requirement_target
from formwright.tosca.types import TypeRegistry

STANDARD_NAMES = ("Standard", STANDARD)


def unparse(value: Any) -> Any:
    """A tosca-parser value with its Function objects turned back into raw `{name: args}` form."""
    from toscaparser.functions import Function

    if isinstance(value, Function):
        return {value.name: unparse(value.args)}
    if isinstance(value, dict):
        return {k: unparse(v) for k, v in value.items()}
    if isinstance(value, list):
        return [unparse(v) for v in value]
    return value


def _properties(raw: dict, parsed: list) -> dict[str, Any]:
    values = {p.name: unparse(p.value) for p in parsed}
    values.update(raw or {})
    return values


def _operation(name: str, value: Any, location: Location) -> Operation:
    if isinstance(value, str):
        return Operation(name, value, location=location)
    if not isinstance(value, dict):
        return Operation(name, None, location=location)
    implementation = value.get("implementation")
    dependencies: list[str] = []
    if isinstance(implementation, dict):
        dependencies = [str(d) for d in implementation.get("dependencies") or []]
        implementation = implementation.get("primary")
    inputs = {k: (v.get("default") if isinstance(v, dict) and "type" in v else v)
              for k, v in (value.get("inputs") or {}).items()}
    return Operation(name, implementation, inputs, dependencies, location)


def _with_inputs(definition: Any, shared: dict) -> Any:
    """An operation definition with the interface-level `inputs` (TOSCA 1.2+) under its own."""
    if not shared:
        return definition
    body: dict = {"implementation": definition} if isinstance(definition, str) else dict(definition or {})
    body["inputs"] = {**shared, **(body.get("inputs") or {})}
    return body


def _operations(registry: TypeRegistry, node_type: str, tpl: dict, doc: Document) -> dict[str, Operation]:
    interfaces: dict[str, dict] = {}
    for source in (registry.merged(node_type, "interfaces"), tpl.get("interfaces") or {}):
        for iname, idef in source.items():
            if iname in STANDARD_NAMES and isinstance(idef, dict):
                body = idef.get("operations", idef)
                shared = idef["inputs"] if isinstance(idef.get("inputs"), dict) else {}
                merged = interfaces.setdefault("Standard", {})
                merged.update({k: _with_inputs(v, shared) for k, v in body.items() if k in LIFECYCLE})
    ops: dict[str, Operation] = {}
    template_standard: object = next(
        (v for k, v in (tpl.get("interfaces") or {}).items() if k in STANDARD_NAMES), {}
    )
    for name, value in interfaces.get("Standard", {}).items():
        line = line_of(template_standard, name) if isinstance(template_standard, dict) else None
        ops[name] = _operation(name, value, Location(doc.shown, line or line_of(tpl)))
    return ops


def _artifacts(registry: TypeRegistry, node_type: str, tpl: dict) -> dict[str, Artifact]:
    out: dict[str, Artifact] = {}
    for name, value in {**registry.merged(node_type, "artifacts"), **(tpl.get("artifacts") or {})}.items():
        if isinstance(value, str):
            out[name] = Artifact(name, value)
        elif isinstance(value, dict) and value.get("file"):
            out[name] = Artifact(name, str(value["file"]), value.get("type"), value.get("deploy_path"))
    return out


def _requirements(name: str, node_type: str, tpl: dict, doc: Document, registry: TypeRegistry,
                  rel_templates: dict) -> list[Relationship]:
    out = []
    for item in tpl.get("requirements") or []:
        req, value = requirement_target(item)
        target = value.get("node") if isinstance(value, dict) else value
        explicit = relationship_type_name(value, rel_templates)
        definition = registry.requirement_definition(node_type, req)
        rel_def = definition.get("relationship")
        rel_def = rel_def.get("type") if isinstance(rel_def, dict) else rel_def
        default = "tosca.relationships.DependsOn"
        if not definition and isinstance(target, str) and target in (doc.data["topology_template"].get(
                "node_templates") or {}):
            # A requirement the type does not declare (TOSCAna's `database_endpoint`): it connects to the
            # target's capability of the same name, as the spec's requirement/capability naming pairs them.
            target_type = registry.canonical(str(doc.data["topology_template"]["node_templates"][target].get(
                "type"))) or ""
            if req in registry.merged(target_type, "capabilities"):
                default = "tosca.relationships.ConnectsTo"
        rel_type = registry.canonical(explicit or rel_def or default, "relationship_types")
        properties: dict[str, Any] = {}
        if isinstance(value, dict) and isinstance(value.get("relationship"), str) and \
                value["relationship"] in rel_templates:
            properties = dict(rel_templates[value["relationship"]].get("properties") or {})
        elif isinstance(value, dict) and isinstance(value.get("relationship"), dict):
            properties = dict(value["relationship"].get("properties") or {})
        rel_type = rel_type or "tosca.relationships.DependsOn"
        out.append(Relationship(
            source=name, target=str(target), requirement=req, type=rel_type,
            types=registry.chain(rel_type, "relationship_types"),
            capability=value.get("capability") if isinstance(value, dict) else None,
            properties=properties, location=Location(doc.shown, line_of(item) or line_of(tpl)),
        ))
    return out


def _inputs(doc: Document, parsed: list) -> dict[str, Input]:
    raw = (doc.data.get("topology_template") or {}).get("inputs") or {}
    out = {}
    for item in parsed:
        definition = raw.get(item.name) or {}
        out[item.name] = Input(
            name=item.name,
            type=str(definition.get("type", "string")),
            description=definition.get("description"),
            default=definition.get("default"),
            required=bool(definition.get("required", True)),
            constraints=list(definition.get("constraints") or []),
            location=Location(doc.shown, line_of(raw, item.name)),
        )
    return out


def _outputs(doc: Document) -> dict[str, Output]:
    raw = (doc.data.get("topology_template") or {}).get("outputs") or {}
    out = {}
    for name, definition in raw.items():
        if not isinstance(definition, dict) or "value" not in definition:
            raise InputError(f"output '{name}' has no value", file=doc.shown, line=line_of(raw, name))
        out[name] = Output(name, definition["value"], definition.get("description"),
                           Location(doc.shown, line_of(definition, "value") or line_of(raw, name)))
    return out


def _directives(doc: Document) -> list[tuple[str, str, str, Location]]:
    """(section, name, type, location) of every policy (a list of one-key maps, or a map) and workflow."""
    topology = doc.data.get("topology_template") or {}
    found = []
    for section in ("policies", "workflows"):
        value = topology.get(section)
        items = [i for i in value if isinstance(i, dict)] if isinstance(value, list) else [value]
        for item in items:
            for name, body in (item.items() if isinstance(item, dict) else []):
                kind = str(body.get("type", section[:-1] if section == "workflows" else "?")) \
                    if isinstance(body, dict) else "?"
                found.append((section, str(name), kind,
                              Location(doc.shown, line_of(item, name) or line_of(topology, section))))
    return found


def build_model(doc: Document, registry: TypeRegistry, tosca: Any, root: Any) -> EffectiveModel:
    """The EffectiveModel of the entry document, with tosca-parser's validated templates `tosca`."""
    raw_nodes = node_templates(doc)
    rel_templates = (doc.data.get("topology_template") or {}).get("relationship_templates") or {}
    parsed = {nt.name: nt for nt in tosca.nodetemplates}
    nodes: dict[str, Node] = {}
    for name, tpl in raw_nodes.items():
        node_type = registry.canonical(str(tpl["type"])) or str(tpl["type"])
        nt = parsed[name]
        capabilities: dict[str, dict[str, Any]] = {
            cap: {} for cap in registry.merged(node_type, "capabilities")
        }
        for cap, value in (tpl.get("capabilities") or {}).items():
            capabilities[cap] = dict((value or {}).get("properties") or {}) if isinstance(value, dict) else {}
        attributes = {k: (v.get("default") if isinstance(v, dict) else None)
                      for k, v in registry.merged(node_type, "attributes").items()}
        attributes.update(tpl.get("attributes") or {})
        nodes[name] = Node(
            name=name, type=node_type, types=registry.chain(node_type),
            properties=_properties(tpl.get("properties") or {}, nt.get_properties_objects()),
            attributes=attributes, capabilities=capabilities,
            requirements=_requirements(name, node_type, tpl, doc, registry, rel_templates),
            operations=_operations(registry, node_type, tpl, doc),
            artifacts=_artifacts(registry, node_type, tpl),
            location=Location(doc.shown, line_of(raw_nodes, name)),
        )
    description = doc.data.get("description")
    return EffectiveModel(nodes=nodes, inputs=_inputs(doc, tosca.inputs), outputs=_outputs(doc), root=root,
                          entry=doc.shown, description=str(description).strip() if description else None,
                          directives=_directives(doc))
