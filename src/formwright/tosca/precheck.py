"""Structural checks on the raw service template, before tosca-parser, so errors carry `file:line`.

Checked: a known `tosca_definitions_version` first, then a topology with node templates, every type known,
every requirement naming an existing node template. Unknown types are listed together in one error.
"""

from __future__ import annotations

from typing import Any

from formwright.errors import InputError
from formwright.template import line_of
from formwright.tosca.diagnostics import Diagnostics, Problem
from formwright.tosca.documents import Document, Documents
from formwright.tosca.extension import VERSIONS, ensure_versions, short_version
from formwright.tosca.types import TypeRegistry, profile_node_types


def check_version(doc: Document, diagnostics: Diagnostics) -> None:
    """The document's `tosca_definitions_version`, before anything else: missing or unknown is an error,
    not the first key a warning. The OASIS test assertions expect these errors first
    (3.1.2-tosca_definitions_version-03-invalid, -04-missing, -05-not_first_line); tosca-parser, which
    formwright follows where they differ, accepts the version anywhere in the document."""
    from toscaparser.tosca_template import ToscaTemplate

    version = doc.data.get("tosca_definitions_version")
    line = doc.line(doc.data, "tosca_definitions_version") or 1
    hint = f"one of: {', '.join(VERSIONS)}"
    if version is None:
        raise InputError("the service template has no tosca_definitions_version", file=doc.shown, line=1,
                         hint=f"start it with `tosca_definitions_version: {VERSIONS[-1]}`")
    ensure_versions()
    if short_version(version) not in ToscaTemplate.VALID_TEMPLATE_VERSIONS:
        raise InputError(f"tosca_definitions_version '{version}' is not a TOSCA version", file=doc.shown,
                         line=line, hint=hint)
    if next(iter(doc.data)) != "tosca_definitions_version":
        diagnostics.warn(Problem("tosca_definitions_version is not the first line of the service template",
                                 doc.shown, line, "move it to the top"))


def node_templates(doc: Document) -> dict[str, Any]:
    """The `topology_template.node_templates` mapping of the entry document, {} when it has none (see
    `require_node_templates`); the topology is checked to exist."""
    topology = doc.data.get("topology_template")
    if not isinstance(topology, dict):
        raise InputError("the service template has no topology_template", file=doc.shown,
                         line=doc.line(doc.data, "topology_template") or 1)
    nodes = topology.get("node_templates")
    if nodes is not None and not isinstance(nodes, dict):
        raise InputError("node_templates must be a mapping of node template names to node templates",
                         file=doc.shown, line=doc.line(topology, "node_templates"))
    return nodes or {}


def require_node_templates(doc: Document) -> None:
    """Fail when the topology has no node template: nothing to deploy. Checked last, so what else is
    wrong with such a template (an input default of the wrong type, a function with too few arguments:
    tosca-parser's test_invalid_input_defaults.yaml, test_token_invalid.yaml) is what is reported."""
    if not node_templates(doc):
        topology = doc.data["topology_template"]
        raise InputError("topology_template has no node_templates", file=doc.shown,
                         line=doc.line(topology, "node_templates") if "node_templates" in topology
                         else doc.line(doc.data, "topology_template"),
                         hint="a service template needs at least one node template to deploy")


def requirement_target(item: Any) -> tuple[str, Any]:
    """(requirement name, raw value) of one entry of a node template's `requirements` list."""
    if not isinstance(item, dict) or len(item) != 1:
        raise ValueError("a requirement must be a one-key mapping")
    ((name, value),) = item.items()
    return str(name), value


def relationship_type_name(value: Any, relationship_templates: dict[str, Any]) -> str | None:
    """The relationship type a requirement names explicitly (via a type, a dict, or a template)."""
    if not isinstance(value, dict):
        return None
    rel = value.get("relationship")
    if isinstance(rel, dict):
        return rel.get("type")
    if isinstance(rel, str) and rel in relationship_templates:
        template = relationship_templates[rel]
        return template.get("type") if isinstance(template, dict) else None
    return rel


def check_structure(doc: Document, registry: TypeRegistry) -> None:
    """Fail on unknown node/relationship types (all listed) and requirements naming no node template."""
    nodes = node_templates(doc)
    topology = doc.data["topology_template"]
    rel_templates = topology.get("relationship_templates") or {}
    unknown: list[tuple[str, int | None]] = []
    for name, tpl in nodes.items():
        if not isinstance(tpl, dict) or "type" not in tpl:
            raise InputError(
                f"node template '{name}' has no type", file=doc.shown, line=doc.line(nodes, name)
            )
        if registry.canonical(str(tpl["type"])) is None:
            unknown.append((str(tpl["type"]), doc.line(tpl, "type")))
    for tpl in rel_templates.values():
        if isinstance(tpl, dict) and registry.canonical(str(tpl.get("type")), "relationship_types") is None:
            unknown.append((str(tpl.get("type")), doc.line(tpl, "type")))
    for name, tpl in nodes.items():
        requirements = tpl.get("requirements") or []
        if not isinstance(requirements, list):
            raise InputError(f"requirements of node template '{name}' must be a list", file=doc.shown,
                             line=doc.line(tpl, "requirements"))
        for item in requirements:
            line = doc.line(item) or doc.line(tpl, "requirements")
            try:
                req, value = requirement_target(item)
            except ValueError as err:
                raise InputError(f"node template '{name}': {err}", file=doc.shown, line=line) from None
            target = value.get("node") if isinstance(value, dict) else value
            if target is None:
                raise InputError(f"requirement '{req}' of node template '{name}' names no target node",
                                 file=doc.shown, line=line)
            if target not in nodes:
                raise InputError(f"requirement '{req}' of node template '{name}' names node '{target}', "
                                 "which does not exist", file=doc.shown, line=line,
                                 hint=f"known nodes: {', '.join(sorted(nodes))}")
            rel_type = relationship_type_name(value, rel_templates)
            if rel_type and rel_type not in rel_templates and \
                    registry.canonical(rel_type, "relationship_types") is None:
                unknown.append((rel_type, line))
    if unknown:
        listed = ", ".join(f"'{t}' ({doc.shown}:{line})" for t, line in unknown)
        first_line = unknown[0][1]
        raise InputError(f"unknown type{'s' if len(unknown) > 1 else ''}: {listed}", file=doc.shown,
                         line=first_line, hint="define it in node_types or import its definition")


_NODE_FUNCTIONS = ("get_property", "get_attribute", "get_operation_output")
_KEYWORDS = ("SELF", "SOURCE", "TARGET", "HOST")


def _walk_functions(value: Any, line: int | None):
    """Yield (function name, args, line) for every TOSCA function inside `value`."""
    here = line_of(value) or line
    if isinstance(value, dict):
        if len(value) == 1:
            ((name, args),) = value.items()
            if name in ("get_input", "concat", "token", *_NODE_FUNCTIONS):
                yield name, args, here
        for child in value.values():
            yield from _walk_functions(child, here)
    elif isinstance(value, list):
        for child in value:
            yield from _walk_functions(child, here)


def check_function_references(doc: Document, registry: TypeRegistry) -> None:
    """Fail on a function naming an undeclared input, a missing node, or a missing property of a node."""
    topology = doc.data["topology_template"]
    nodes = node_templates(doc)
    inputs = topology.get("inputs") or {}
    # get_input's nested form ([input, key or index, ...]) is new in TOSCA 1.3 (section 4.4.1)
    nested_inputs = short_version(doc.data.get("tosca_definitions_version")) >= "tosca_simple_yaml_1_3"
    scopes = [(tpl, line_of(nodes, name)) for name, tpl in nodes.items()]
    scopes.append((topology.get("outputs") or {}, line_of(topology, "outputs")))
    for value, line in scopes:
        for name, args, where in _walk_functions(value, line):
            if name == "get_input":
                if isinstance(args, list) and len(args) > 1 and nested_inputs is False:
                    raise InputError(f"get_input takes one input name, not the list {args}: the "
                                     "[input, key or index, ...] form is TOSCA 1.3", file=doc.shown,
                                     line=where,
                                     hint=f"write `get_input: {args[0]}`, or declare tosca_simple_yaml_1_3")
                key = args[0] if isinstance(args, list) and args else args
                if not isinstance(key, str) or key not in inputs:
                    raise InputError(f"get_input names input '{key}', which is not declared", file=doc.shown,
                                     line=where, hint="declare it under topology_template.inputs")
            elif name in _NODE_FUNCTIONS and isinstance(args, list) and args:
                target = args[0]
                if target not in _KEYWORDS and target not in nodes:
                    raise InputError(f"{name} names node '{target}', which does not exist", file=doc.shown,
                                     line=where, hint=f"known nodes: {', '.join(sorted(nodes))}")
                if name == "get_property" and len(args) == 2 and target in nodes:
                    tpl = nodes[target]
                    known = set(registry.merged(str(tpl["type"]), "properties")) | set(
                        tpl.get("properties") or {}
                    )
                    if args[1] not in known:
                        raise InputError(f"get_property: node '{target}' has no property '{args[1]}'",
                                         file=doc.shown, line=where)


# Each type section, the prefix its short names take, and what a type of it is called in a message.
TYPE_SECTIONS = {"node_types": ("tosca.nodes.", "node type"),
                 "relationship_types": ("tosca.relationships.", "relationship type"),
                 "capability_types": ("tosca.capabilities.", "capability type"),
                 "data_types": ("tosca.datatypes.", "data type"),
                 "interface_types": ("tosca.interfaces.", "interface type"),
                 "artifact_types": ("tosca.artifacts.", "artifact type"),
                 "group_types": ("tosca.groups.", "group type"),
                 "policy_types": ("tosca.policies.", "policy type")}
# Normative types of TOSCA 1.2/1.3 that tosca-parser's definitions lack (Simple Profile 1.3 chapter 5),
# by section, and the types a property may have without a data type (section 3.3)
_NORMATIVE_EXTRA = {"data_types": {"tosca.datatypes.json", "tosca.datatypes.xml",
                                   "tosca.datatypes.TimeInterval"},
                    "artifact_types": {"tosca.artifacts.Template"},
                    "capability_types": {"tosca.capabilities.Compute", "tosca.capabilities.Network",
                                         "tosca.capabilities.Storage"},
                    "interface_types": {"tosca.interfaces.Root"},
                    "node_types": {"tosca.nodes.Abstract.Compute", "tosca.nodes.Abstract.Storage"}}


def _primitive_types() -> set[str]:
    """The types a property may have without a data type (section 3.3): tosca-parser's, and TOSCA 1.3's
    `null` and `scalar-unit.bitrate` it lacks (imported here: tosca-parser's import is ~80 ms)."""
    from toscaparser.elements.constraints import Schema

    return {*Schema.PROPERTY_TYPES, "null", "scalar-unit.bitrate"}


def _known_types(documents: Documents) -> dict[str, set[str]]:
    """Every type name per section: tosca-parser's normative definitions, formwright's profile and the
    documents' own."""
    from toscaparser.elements.entity_type import EntityType

    known = {section: set(EntityType.TOSCA_DEF_LOAD_AS_IS.get(section) or {}) for section in TYPE_SECTIONS}
    known["node_types"] |= set(profile_node_types())
    for section, names in _NORMATIVE_EXTRA.items():
        known[section] |= names
    for doc in documents.all():
        for section in TYPE_SECTIONS:
            if isinstance(doc.data.get(section), dict):
                known[section] |= set(doc.data[section])
    return known


def _is_known(name: str, section: str, known: dict[str, set[str]]) -> bool:
    """Whether `name` is a type of `section`, in full, as `tosca:X`, or as a normative type's shorthand
    name (its last segment: `PortDef` is tosca.datatypes.network.PortDef: the spec's "shorthand name")."""
    short = name.split(":", 1)[1] if name.startswith("tosca:") else name
    return name in known[section] or TYPE_SECTIONS[section][0] + short in known[section] or any(
        full.startswith("tosca.") and full.endswith("." + short) for full in known[section])


def check_type_definitions(documents: Documents) -> None:
    """Fail on a type that derives from an unknown type of its kind (OASIS test assertion
    3.6.6-capability_types-03-unknown-parent-type: InvalidParentType) and on a data type whose property
    has an unknown type (3.6.5-data_type-05: UnknownDataType). Both are mandatory errors of the spec, even
    for a type no template uses; tosca-parser says nothing of them."""
    known, primitives = _known_types(documents), _primitive_types()
    for doc in documents.all():
        for section, (_, called) in TYPE_SECTIONS.items():
            types = doc.data.get(section)
            for name, definition in (types.items() if isinstance(types, dict) else ()):
                if not isinstance(definition, dict):
                    continue
                parent = definition.get("derived_from")
                # a data type may derive from a primitive type (3.6.5-data_type-10-extend_native); a type
                # of another section is let through, as tosca-parser does (heat-translator's
                # test_tosca_get_functions_semantic.yaml declares capability types under node_types)
                if parent is not None and not any(_is_known(str(parent), other, known) for other in known) \
                        and not (section == "data_types" and str(parent) in primitives):
                    raise InputError(f"{called} '{name}' derives from '{parent}', which is not a known "
                                     f"{called}", file=doc.shown, line=doc.line(definition, "derived_from"),
                                     hint=f"define '{parent}' under {section} or import its definition")
                if section == "data_types":
                    _check_data_type_properties(doc, name, definition, known, primitives)


def _check_data_type_properties(doc: Document, name: str, definition: dict, known: dict[str, set[str]],
                                primitives: set[str]) -> None:
    properties = definition.get("properties")
    for prop, schema in (properties.items() if isinstance(properties, dict) else ()):
        kind = schema.get("type") if isinstance(schema, dict) else None
        if kind is not None and str(kind) not in primitives and not _is_known(str(kind), "data_types", known):
            raise InputError(f"property '{prop}' of data type '{name}' has type '{kind}', which is not a "
                             "known data type", file=doc.shown, line=doc.line(schema, "type"),
                             hint="use a primitive type or define the data type under data_types")
