"""`host` requirements the orchestrator fulfils: left out, or abstract (a node type and/or a node_filter).

TOSCA Simple Profile 1.0 section 3.7.2 (requirement assignment): `node` names a node template, or a node
type from which the provider selects a node template at deploy time, and `node_filter` narrows that
choice; a requirement with only a `node_filter` is fulfilled the same way (tosca-parser's
test_node_filter.yaml, a DBMS whose host is a num_cpus / mem_size filter, is valid). formwright is the
provider here: of the topology's Computes, the one the node_filter matches (cloudnet-tosca-toolbox's
example-2-21 has one that matches and one that does not), or the only one without a filter, is taken; when
none matches, a Compute is made to the filter's measure (the least value each constraint allows); several
that match are the user's choice to make. A `host` left out altogether goes to the only Compute too (the
spec's examples leave it open; puccini accepts them), and without one is tosca-parser's error, as its
test_template_without_requirement.yaml expects. Each choice is a warning at the requirement's line.
"""

from __future__ import annotations

from typing import Any

from formwright.errors import InputError
from formwright.template import Mapping, line_of
from formwright.tosca.diagnostics import Diagnostics, Problem
from formwright.tosca.documents import Document
from formwright.tosca.precheck import node_templates
from formwright.tosca.types import TypeRegistry

COMPUTE = "tosca.nodes.Compute"
# capability types a filter may name instead of the Compute's capability names
_CAPABILITY_NAMES = {"tosca.capabilities.Container": "host", "tosca.capabilities.Compute": "host",
                     "tosca.capabilities.OperatingSystem": "os"}


def least_value(constraints: Any) -> Any:
    """The least value the constraint clauses of one property filter allow, or None when they do not say
    (`less_than` alone: the type's default is left to apply)."""
    value = None
    for clause in constraints if isinstance(constraints, list) else [constraints]:
        if not isinstance(clause, dict):
            return clause  # a bare value: that value
        if len(clause) != 1:
            continue
        ((operator, argument),) = clause.items()
        if operator == "equal":
            return argument
        if operator == "valid_values" and isinstance(argument, list) and argument:
            return argument[0]
        if operator == "in_range" and isinstance(argument, list) and argument:
            value = argument[0]
        elif operator == "greater_or_equal":
            value = argument
        elif operator == "greater_than" and isinstance(argument, int) and not isinstance(argument, bool):
            value = argument + 1
    return value


def _comparable(value: Any) -> Any:
    """A property value as something to compare: a scalar-unit size ("512 MB") in bytes, text lowered."""
    if isinstance(value, str):
        from toscaparser.elements.scalarunit import ScalarUnit_Size

        try:
            return ScalarUnit_Size(value).get_num_from_scalar_unit("B")
        except Exception:  # noqa: BLE001 - not a size: compared as text
            return value.strip().lower()
    return value


def satisfies(value: Any, constraints: Any) -> bool:
    """Whether a set property value meets the constraint clauses of a property filter."""
    if value is None or isinstance(value, dict):
        return False  # unset, or known only at deploy time: not shown to match
    have = _comparable(value)
    for clause in constraints if isinstance(constraints, list) else [constraints]:
        if not isinstance(clause, dict):
            clause = {"equal": clause}
        for operator, argument in clause.items():
            try:
                if operator == "valid_values":
                    ok = have in [_comparable(a) for a in argument]
                elif operator == "in_range":
                    ok = _comparable(argument[0]) <= have <= _comparable(argument[1])
                else:
                    want = _comparable(argument)
                    ok = {"equal": have == want, "greater_than": have > want,
                          "greater_or_equal": have >= want, "less_than": have < want,
                          "less_or_equal": have <= want}.get(operator, False)
            except (TypeError, IndexError):
                ok = False
            if not ok:
                return False
    return True


def matches(compute: dict, node_filter: Any) -> bool:
    """Whether a Compute template meets every capability property filter of a node_filter."""
    capabilities = compute.get("capabilities")
    capabilities = capabilities if isinstance(capabilities, dict) else {}
    items = node_filter.get("capabilities") if isinstance(node_filter, dict) else None
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict) or len(item) != 1:
            continue
        ((name, body),) = item.items()
        assignment = capabilities.get(_CAPABILITY_NAMES.get(str(name), str(name))) or {}
        values = assignment.get("properties") if isinstance(assignment, dict) else None
        values = values if isinstance(values, dict) else {}
        properties = body.get("properties") if isinstance(body, dict) else None
        for prop in properties if isinstance(properties, list) else []:
            if isinstance(prop, dict) and len(prop) == 1:
                ((prop_name, constraints),) = prop.items()
                if not satisfies(values.get(prop_name), constraints):
                    return False
    return True


def _filter_capabilities(node_filter: Any) -> dict[str, dict[str, Any]]:
    """Capability property values meeting a node_filter's `capabilities` section."""
    capabilities: dict[str, dict[str, Any]] = {}
    items = node_filter.get("capabilities") if isinstance(node_filter, dict) else None
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict) or len(item) != 1:
            continue
        ((name, body),) = item.items()
        properties = body.get("properties") if isinstance(body, dict) else None
        chosen = {}
        for prop in properties if isinstance(properties, list) else []:
            if isinstance(prop, dict) and len(prop) == 1:
                ((prop_name, constraints),) = prop.items()
                if (value := least_value(constraints)) is not None:
                    chosen[str(prop_name)] = value
        if chosen:
            capabilities.setdefault(_CAPABILITY_NAMES.get(str(name), str(name)), {}).update(chosen)
    return capabilities


def _abstract_host(item: Any, nodes: dict, registry: TypeRegistry) -> dict | None:
    """The body of a `host` requirement that names no node template (nothing, a Compute type, and/or a
    node_filter), else None."""
    if not isinstance(item, dict) or len(item) != 1 or "host" not in item:
        return None
    value = item["host"]
    body = value if isinstance(value, dict) else {"node": value}
    target = body.get("node")
    if target is None and "node_filter" not in body:
        return None  # `host:` with nothing at all: check_structure's error
    if target is not None and (str(target) in nodes or not registry.is_a(str(target), COMPUTE)):
        return None
    return body


def _new_compute(name: str, body: dict, nodes: dict, line: int | None) -> tuple[str, str]:
    """Add a Compute for node `name` made to `body`'s node_filter; (its name, what it was given)."""
    host = f"{name}_host"
    while host in nodes:
        host += "_"
    capabilities = _filter_capabilities(body.get("node_filter"))
    template = Mapping({"type": COMPUTE})
    template.line = line
    if capabilities:
        template["capabilities"] = {cap: {"properties": props} for cap, props in capabilities.items()}
    nodes[host] = template
    if isinstance(nodes, Mapping) and line is not None:
        nodes.key_lines[host] = line
    given = ", ".join(f"{prop} {value}" for props in capabilities.values() for prop, value in props.items())
    return host, given or "the default size"


def fulfil_hosts(doc: Document, registry: TypeRegistry, diagnostics: Diagnostics) -> None:
    """Point every `host` requirement that names no node template at a Compute (see the module doc)."""
    nodes = node_templates(doc)
    computes = [name for name, tpl in nodes.items()
                if isinstance(tpl, dict) and registry.is_a(str(tpl.get("type")), COMPUTE)]
    for name, tpl in list(nodes.items()):
        if not isinstance(tpl, dict) or registry.is_a(str(tpl.get("type")), COMPUTE):
            continue
        requirements = tpl.get("requirements")
        if not isinstance(requirements, list):
            requirements = []
        for index, item in enumerate(requirements):
            body = _abstract_host(item, nodes, registry)
            if body is None:
                continue
            line = line_of(item) or line_of(tpl)
            node_filter = body.get("node_filter")
            fitting = [c for c in computes if matches(nodes[c], node_filter)] if node_filter else computes
            if len(fitting) > 1:
                raise InputError(f"requirement 'host' of node template '{name}' names no node template, and "
                                 f"{len(fitting)} Computes could host it: {', '.join(fitting)}",
                                 file=doc.shown, line=line, hint="name one with `node:`")
            if fitting:
                which = "the Compute its node_filter matches" if node_filter else "the only Compute"
                host, what = fitting[0], f"placed on {which} '{fitting[0]}'"
            else:
                host, given = _new_compute(name, body, nodes, line)
                what = f"a Compute '{host}' is made for it ({given})"
            diagnostics.warn(Problem(f"requirement 'host' of node template '{name}' names no node template: "
                                     f"{what}", doc.shown, line))
            kept = {k: v for k, v in body.items() if k not in ("node", "node_filter")}
            fulfilled = Mapping({"host": {"node": host, **kept} if kept else host})
            fulfilled.line = line
            requirements[index] = fulfilled
        _fulfil_missing_host(doc, registry, diagnostics, name, tpl, computes)


def _fulfil_missing_host(doc: Document, registry: TypeRegistry, diagnostics: Diagnostics, name: str,
                         tpl: dict, computes: list[str]) -> None:
    """A node whose type requires a `host` and that names none goes on the only Compute."""
    if not registry.requirement_definition(str(tpl.get("type")), "host"):
        return
    requirements = tpl.get("requirements")
    if requirements is not None and not isinstance(requirements, list):
        return  # check_structure's error
    if any(isinstance(r, dict) and "host" in r for r in requirements or []):
        return
    if len(computes) != 1:
        return  # tosca-parser reports the missing host
    diagnostics.warn(Problem(f"node template '{name}' names no host: placed on the only Compute "
                             f"'{computes[0]}'", doc.shown, line_of(node_templates(doc), name)))
    tpl["requirements"] = [*(requirements or []), {"host": computes[0]}]
