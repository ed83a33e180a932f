"""Running tosca-parser quietly on an already loaded service template.

tosca-parser validates the topology against the types (required properties, constraints, capabilities,
relationships). Its log lines and prints are swallowed. Every exception it collected becomes a
`Problem` at the `file:line` of the template element its message names, and all are raised together;
what TOSCAna tolerated (an unknown property name, of a node or of a capability) becomes a warning and is
left out of a second pass.

Two constructs are kept from tosca-parser because it cannot take them although they are valid
TOSCA, and formwright checks them itself (`precheck`, `functions`): outputs (1.2 gives them `type`,
and `get_attribute [node, capability, attribute]` in an output crashes tosca-parser while it writes
its error message, since the output list is its "context"), and `get_attribute` in interface inputs and
in node and capability properties (an attribute a type does not declare is a warning here, an error there;
tosca-parser also refuses a capability's property read as an attribute, `get_attribute [web,
data_endpoint, port]`, which the spec allows: every property is also an attribute). Interface-level `inputs`
(1.2+) are handed to tosca-parser inside each operation, as the spec defines them.
"""

from __future__ import annotations

import contextlib
import io
import logging
import re
from typing import Any

from formwright.template import line_of, plain
from formwright.tosca.diagnostics import Diagnostics, Problem, did_you_mean
from formwright.tosca.documents import Document, Documents
from formwright.tosca.extension import ensure_versions, short_version
from formwright.tosca.types import TypeRegistry, profile_node_types

_QUOTED = re.compile(r'"([^"]+)"')
_UNKNOWN_FIELD = re.compile(
    r'^"(properties|requirements)" of template "([^"]+)" contains unknown field "([^"]+)"')
_REFERRER = re.compile(r'referenced from node template "([^"]+)"')
_PLACEHOLDER = "formwright-checked"
_MAX_PASSES = 12


def _find(value: Any, wanted: str, depth: int = 0) -> tuple[list, int | None] | None:
    """(key path, line) of the first mapping key `wanted`, or key holding the scalar `wanted`, inside
    `value` (depth first); None when there is none."""
    if depth > 40 or not isinstance(value, (dict, list)):
        return None
    items = list(value.items()) if isinstance(value, dict) else list(enumerate(value))

    def line(key: Any) -> int | None:
        return line_of(value, key) if isinstance(value, dict) else line_of(value)

    for key, child in items:
        if key == wanted or (not isinstance(child, (dict, list)) and str(child) == wanted):
            return [key], line(key)
    for key, child in items:
        found = _find(child, wanted, depth + 1)
        if found:
            return [key, *found[0]], found[1] or line(key)
    return None


def locate(message: str, doc: Document) -> tuple[list, int]:
    """(key path, line) of the element `message` names: a field or value inside a named node template,
    the node, a key or value named anywhere in the document; else ([], 1)."""
    quoted = _QUOTED.findall(message)
    referrer = _REFERRER.search(message)
    if referrer:  # where the function is written comes first ("... referenced from node template "X"")
        quoted.insert(0, referrer.group(1))
    topology = doc.data.get("topology_template") or {}
    nodes = topology.get("node_templates") or {}
    base = ["topology_template", "node_templates"]
    for name in quoted:
        if isinstance(nodes, dict) and name in nodes:
            for other in quoted:
                if other != name and (found := _find(nodes[name], other)):
                    return [*base, name, *found[0]], found[1] or line_of(nodes, name) or 1
            return [*base, name], line_of(nodes, name) or 1
    for name in quoted:
        if (found := _find(doc.data, name)) is not None:
            return found[0], found[1] or 1
    if "version" in message and "tosca_definitions_version" in doc.data:
        return ["tosca_definitions_version"], line_of(doc.data, "tosca_definitions_version") or 1
    return [], 1


def _origin(err: BaseException) -> list[str]:
    """Names of the node template and property being validated when tosca-parser raised `err` on the
    spot (from the frames of its traceback), quoted as in its messages."""
    from toscaparser.entity_template import EntityTemplate
    from toscaparser.properties import Property

    node, prop = None, None
    tb = err.__traceback__
    while tb is not None:
        owner = tb.tb_frame.f_locals.get("self")
        if isinstance(owner, EntityTemplate):
            node = owner.name
        elif isinstance(owner, Property):
            prop = owner.name
        tb = tb.tb_next
    return [f'"{n}"' for n in (node, prop) if n]


def _excise(tpl: dict, path: list) -> bool:
    """Remove the element at `path` (below a node template) from `tpl`, so another pass finds more."""
    if len(path) < 4 or path[:2] != ["topology_template", "node_templates"]:
        return False
    parent: Any = tpl
    for key in path[:-1]:
        try:
            parent = parent[key]
        except (KeyError, IndexError, TypeError):
            return False
    try:
        del parent[path[-1]]
    except (KeyError, IndexError, TypeError):
        return False
    return True


def _without_get_attribute(value: Any, placeholder: Any = _PLACEHOLDER) -> Any:
    if isinstance(value, dict):
        if len(value) == 1 and "get_attribute" in value:
            return placeholder
        return {k: _without_get_attribute(v, placeholder) for k, v in value.items()}
    if isinstance(value, list):
        return [_without_get_attribute(v, placeholder) for v in value]
    return value


def _prepare_properties(node: dict) -> None:
    """`get_attribute` in the properties of a node and of its capabilities replaced (see module doc) by a
    function tosca-parser does not type-check, so a typed property (an integer port) still validates."""
    typed_placeholder = {"concat": [_PLACEHOLDER]}
    if isinstance(node.get("properties"), dict):
        node["properties"] = _without_get_attribute(node["properties"], typed_placeholder)
    capabilities = node.get("capabilities")
    # a list (not a map) is left to tosca-parser, which reports it
    for assignment in capabilities.values() if isinstance(capabilities, dict) else ():
        if isinstance(assignment, dict) and isinstance(assignment.get("properties"), dict):
            assignment["properties"] = _without_get_attribute(assignment["properties"], typed_placeholder)


def _prepare_interfaces(interfaces: Any) -> Any:
    """Interface inputs pushed into each operation; `get_attribute` in inputs replaced (see module doc)."""
    if not isinstance(interfaces, dict):
        return interfaces
    out: dict[str, Any] = {}
    for name, body in interfaces.items():
        if not isinstance(body, dict):
            out[name] = body
            continue
        shared = body["inputs"] if isinstance(body.get("inputs"), dict) else {}
        ops = body["operations"] if isinstance(body.get("operations"), dict) else body
        new: dict[str, Any] = {}
        for op, definition in ops.items():
            if op in ("inputs", "type", "operations", "notifications"):
                continue
            if shared:
                definition = {"implementation": definition} if isinstance(definition, str) else dict(
                    definition or {})
                definition["inputs"] = {**shared, **(definition.get("inputs") or {})}
            new[op] = _without_get_attribute(definition)
        if "type" in body:
            new["type"] = body["type"]
        out[name] = new
    return out


def parser_input(documents: Documents) -> dict[str, Any]:
    """The dict handed to tosca-parser: the entry template adapted as described in the module doc."""
    tpl = plain(documents.entry.data)
    if "tosca_definitions_version" in tpl:
        tpl["tosca_definitions_version"] = short_version(tpl["tosca_definitions_version"])
    tpl["imports"] = [str(p) for p in documents.entry_imports]
    if not tpl["imports"]:
        del tpl["imports"]
    # formwright's profile, parsed once per process, joins the template's own types (which win).
    tpl["node_types"] = {**profile_node_types(), **(tpl.get("node_types") or {})}
    topology = tpl.get("topology_template")
    if isinstance(topology, dict):
        # not applied by formwright, which says so (transform/cloudformation/check.py); tosca-parser knows
        # few policy types' properties (Scaling's min_instances …) and no workflows
        topology.pop("policies", None)
        topology.pop("workflows", None)
        if isinstance(topology.get("outputs"), dict):
            topology["outputs"] = {name: {"value": _PLACEHOLDER} for name in topology["outputs"]}
        for node in (topology.get("node_templates") or {}).values():
            if isinstance(node, dict) and "interfaces" in node:
                node["interfaces"] = _prepare_interfaces(node["interfaces"])
            if isinstance(node, dict) and isinstance(node.get("capabilities"), dict):
                # `os: {}` (an assignment with nothing in it, 1.3 examples) crashes tosca-parser
                node["capabilities"] = {k: v for k, v in node["capabilities"].items() if v}
            if isinstance(node, dict):
                _prepare_properties(node)
    return tpl


def _message(err: BaseException) -> str:
    """What tosca-parser says is wrong, without Python's wrapping: no exception class name, and a
    KeyError's text without the quotes its str() adds."""
    text = getattr(err, "message", None)
    if not text and err.args and isinstance(err.args[0], str):
        text = err.args[0]
    return str(text or err or type(err).__name__)


def _tolerate(message: str, tpl: dict, doc: Document, registry: TypeRegistry,
              diagnostics: Diagnostics) -> bool:
    """Turn an unknown property name of a node template or of one of its capabilities, or an unknown
    requirement name, into a warning and drop it from `tpl` (the requirement still becomes a
    relationship, see `build`); True if done."""
    match = _UNKNOWN_FIELD.match(message.split(": ", 1)[-1])
    if not match:
        return False
    section, node, name = match.groups()
    if node not in (tpl["topology_template"].get("node_templates") or {}):
        return False  # a policy or group of that name: tosca-parser's error stands
    raw = doc.data["topology_template"]["node_templates"].get(node) or {}
    node_type = str(raw.get("type"))
    parsed = tpl["topology_template"]["node_templates"][node]
    if section == "properties" and name in (parsed.get("properties") or {}):
        known = list(registry.merged(node_type, "properties"))
        diagnostics.warn(Problem(
            f"node template '{node}' has no property '{name}' in its type (ignored)", doc.shown,
            line_of(raw.get("properties"), name) or line_of(raw), did_you_mean(name, known)))
        parsed["properties"].pop(name)
        return True
    if section == "properties":  # tosca-parser words an unknown capability property the same way
        return _tolerate_capability_property(node, name, raw, parsed, doc, registry, diagnostics)
    known = registry.requirement_names(node_type)
    line = next((line_of(item) for item in raw.get("requirements") or []
                 if isinstance(item, dict) and name in item), None) or line_of(raw)
    diagnostics.warn(Problem(
        f"node template '{node}': its type declares no requirement '{name}' (kept as a relationship)",
        doc.shown, line, did_you_mean(name, known)))
    parsed["requirements"] = [item for item in parsed.get("requirements") or []
                              if not (isinstance(item, dict) and name in item)]
    return True


def _tolerate_capability_property(node: str, name: str, raw: dict, parsed: dict, doc: Document,
                                  registry: TypeRegistry, diagnostics: Diagnostics) -> bool:
    """The unknown property `name` of one of node `node`'s capabilities as a warning (see `_tolerate`)."""
    node_type = str(raw.get("type"))
    for capability, assignment in (parsed.get("capabilities") or {}).items():
        properties = assignment.get("properties") if isinstance(assignment, dict) else None
        known = registry.capability_properties(node_type, capability)
        if not isinstance(properties, dict) or name not in properties or name in known:
            continue
        raw_properties = ((raw.get("capabilities") or {}).get(capability) or {}).get("properties")
        diagnostics.warn(Problem(
            f"node template '{node}': capability '{capability}' has no property '{name}' in its type "
            "(ignored)",
            doc.shown, line_of(raw_properties, name) or line_of(raw), did_you_mean(name, known)))
        properties.pop(name)
        return True
    return False


def run_tosca_parser(documents: Documents, registry: TypeRegistry, diagnostics: Diagnostics) -> Any:
    """Validate the entry template (with its imports and formwright's profile); return the ToscaTemplate.

    Raises every error tosca-parser found, together, each at its `file:line`."""
    from toscaparser.common.exception import ExceptionCollector, ValidationError
    from toscaparser.tosca_template import ToscaTemplate

    ensure_versions()
    doc = documents.entry
    tpl = parser_input(documents)
    logger = logging.getLogger("tosca")
    previous = logger.level, logger.propagate
    logger.setLevel(logging.CRITICAL + 1)
    logger.propagate = False
    failed: list[list] = []
    named: list[set[str]] = []  # the names each reported error quotes
    try:
        for _ in range(_MAX_PASSES):
            sink = io.StringIO()
            try:
                with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
                    parsed = ToscaTemplate(yaml_dict_tpl=plain(tpl), parsed_params=None, a_file=False)
            except Exception as err:  # noqa: BLE001 - tosca-parser raises its own and Python's exceptions
                collected = list(ExceptionCollector.getExceptions())
                if not collected or (not isinstance(err, ValidationError) and err not in collected):
                    collected.append(err)  # raised on the spot (a bad value)
            else:
                diagnostics.raise_errors(hard_only=True)  # those of earlier passes
                return parsed
            progress = False
            located = []
            for item in collected:
                message = _message(item)
                if _tolerate(message, tpl, doc, registry, diagnostics):
                    progress = True
                    continue
                located.append((message, *locate(" ".join([message, *_origin(item)]), doc)))
            # an error naming no element of the template follows from one that does (a scalar without a
            # unit is also "a unit '0' that is not valid"): reported only when no other error is
            for message, path, line in sorted(located, key=lambda found: not found[1]):
                names = set(_QUOTED.findall(message))
                repeated = bool(names) and any(names <= seen for seen in named)
                if path[:3] in failed or (not path and failed) or repeated:
                    # one error per node template, and none naming nothing another did not: the others
                    # tend to follow from the first (an unknown capability property is also looked up as
                    # a property of its node)
                    continue
                diagnostics.error(Problem(f"TOSCA validation failed: {message}", doc.shown, line))
                failed.append(path[:3])
                named.append(names)
                progress = _excise(tpl, path) or progress  # look for the template's other errors
            if not progress:
                break
        diagnostics.raise_errors(hard_only=True)
        diagnostics.error(Problem("TOSCA validation failed: tosca-parser did not settle", doc.shown, 1))
        diagnostics.raise_errors()
    finally:
        ExceptionCollector.stop()
        ExceptionCollector.clear()
        logger.setLevel(previous[0])
        logger.propagate = previous[1]
    return None
