"""TOSCA intrinsic functions resolved against the EffectiveModel.

`get_property` and `concat` of literal values resolve to literals. What is only known at deploy
time stays symbolic, for the target plugin to express: `InputRef` (a template parameter),
`AttributeRef` (an address or another runtime attribute) and `OperationOutputRef`. A function that
names a missing node, property, attribute or input is an `InputError` at its `file:line`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from formwright.errors import InputError
from formwright.template import line_of
from formwright.tosca.diagnostics import Diagnostics, Problem, did_you_mean
from formwright.tosca.model import EffectiveModel, Location, Node

FUNCTIONS = ("get_input", "get_property", "get_attribute", "concat", "get_operation_output", "token")
KEYWORDS = ("SELF", "SOURCE", "TARGET", "HOST")
_MAX_DEPTH = 32


@dataclass(frozen=True)
class InputRef:
    """A topology input, whose chosen value is `value`."""

    name: str
    value: Any


@dataclass(frozen=True)
class AttributeRef:
    """A runtime attribute of a node (optionally of one of its capabilities), seen from node `seen_from`."""

    node: str
    attribute: str
    capability: str | None = None
    seen_from: str | None = None


@dataclass(frozen=True)
class OperationOutputRef:
    """An output variable of an operation, known only once the operation ran."""

    node: str
    interface: str
    operation: str
    output: str


@dataclass(frozen=True)
class Concat:
    """A string joined from parts, some of them symbolic."""

    parts: tuple


@dataclass(frozen=True)
class Token:
    """Piece `index` of a text known only at deploy time, split at `separator` (TOSCA 1.0 section 4.3.2)."""

    text: Any
    separator: str
    index: int


@dataclass
class Context:
    """Where a value is evaluated: SELF, and for relationships SOURCE and TARGET; `location` for errors."""

    self_node: Node | None = None
    source: Node | None = None
    target: Node | None = None
    location: Location | None = None
    depth: int = field(default=0)


def is_function(value: Any) -> bool:
    """True when `value` is a one-key mapping naming a TOSCA function."""
    return isinstance(value, dict) and len(value) == 1 and next(iter(value)) in FUNCTIONS


def is_symbolic(value: Any) -> bool:
    """True for a value known only at deploy time."""
    return isinstance(value, (InputRef, AttributeRef, OperationOutputRef, Concat, Token))


class Resolver:
    """Evaluates values of one EffectiveModel."""

    def __init__(self, model: EffectiveModel, diagnostics: Diagnostics | None = None) -> None:
        self.model = model
        self.diagnostics = diagnostics

    def resolve(self, value: Any, ctx: Context) -> Any:
        """`value` with every function evaluated (recursively through lists and maps)."""
        if is_function(value):
            ((name, args),) = value.items()
            here = ctx.location
            if line_of(value) and here is not None:
                here = Location(here.file, line_of(value))
            inner = Context(ctx.self_node, ctx.source, ctx.target, here, ctx.depth + 1)
            if inner.depth > _MAX_DEPTH:
                self._fail("functions refer to each other in a cycle", inner)
            return getattr(self, f"_{name}")(args, inner)
        if isinstance(value, dict):
            return {k: self.resolve(v, ctx) for k, v in value.items()}
        if isinstance(value, list):
            return [self.resolve(v, ctx) for v in value]
        return value

    @staticmethod
    def _fail(message: str, ctx: Context) -> None:
        loc = ctx.location
        raise InputError(message, file=loc.file if loc else None, line=loc.line if loc else None)

    def _args(self, args: Any, minimum: int, name: str, ctx: Context) -> list:
        if not isinstance(args, list) or len(args) < minimum:
            plural = "s" if minimum > 1 else ""
            self._fail(f"{name} needs at least {minimum} argument{plural}, got {args!r}", ctx)
        return list(args)

    def _entity(self, name: Any, ctx: Context, function: str) -> Node:
        keyword = {"SELF": ctx.self_node, "SOURCE": ctx.source, "TARGET": ctx.target}
        if name in keyword:
            node = keyword[name]
            if node is None:
                self._fail(f"{function} uses {name}, which has no meaning here", ctx)
            return node  # type: ignore[return-value]
        if name == "HOST":
            if ctx.self_node is None or (host := self.model.host_of(ctx.self_node)) is None:
                self._fail(f"{function} uses HOST, but the node is not hosted on anything", ctx)
            return host  # type: ignore[return-value]
        node = self.model.nodes.get(str(name))
        if node is None:
            self._fail(f"{function} names node '{name}', which does not exist", ctx)
        return node  # type: ignore[return-value]

    def _hosts(self, node: Node, from_host: bool) -> list[Node]:
        chain = [node]
        if from_host:
            while (host := self.model.host_of(chain[-1])) is not None:
                chain.append(host)
        return chain

    def _node_ctx(self, node: Node, ctx: Context) -> Context:
        return Context(node, None, None, ctx.location, ctx.depth)

    def _get_input(self, args: Any, ctx: Context) -> Any:
        name = args[0] if isinstance(args, list) and len(args) == 1 else args
        item = self.model.inputs.get(str(name))
        if item is None:
            self._fail(f"get_input names input '{name}', which is not declared", ctx)
        return InputRef(item.name, item.value)  # type: ignore[union-attr]

    def _get_property(self, args: Any, ctx: Context) -> Any:
        args = self._args(args, 2, "get_property", ctx)
        start = self._entity(args[0], ctx, "get_property")
        for node in self._hosts(start, args[0] == "HOST"):
            found, value = self._lookup_property(node, args[1:], ctx)
            if found:
                return self.resolve(value, self._node_ctx(node, ctx))
        self._fail(f"get_property: node '{start.name}' has no property '{'.'.join(map(str, args[1:]))}'", ctx)

    def _lookup_property(self, node: Node, path: list, ctx: Context) -> tuple[bool, Any]:
        first, rest = str(path[0]), path[1:]
        if rest and first in node.capabilities:
            return self._dig(node.capabilities[first], rest)
        if rest and first not in node.properties:
            for rel in node.requirements:
                if rel.requirement == first:
                    target = self.model.nodes[rel.target]
                    found, value = self._dig(target.properties, rest)
                    if not found:
                        for cap in target.capabilities.values():
                            found, value = self._dig(cap, rest)
                            if found:
                                break
                    return found, value
        return self._dig(node.properties, path)

    @staticmethod
    def _dig(values: Any, path: list) -> tuple[bool, Any]:
        current = values
        for key in path:
            if (isinstance(current, dict) and key in current) or (
                isinstance(current, list) and isinstance(key, int) and 0 <= key < len(current)
            ):
                current = current[key]
            else:
                return False, None
        return True, current

    def _get_attribute(self, args: Any, ctx: Context) -> Any:
        args = self._args(args, 2, "get_attribute", ctx)
        start = self._entity(args[0], ctx, "get_attribute")
        capability = str(args[1]) if len(args) >= 3 else None
        attribute = str(args[-1] if len(args) == 3 else args[1])
        seen_from = ctx.self_node.name if ctx.self_node else None
        for node in self._hosts(start, args[0] == "HOST"):
            if capability is not None:
                target = next((self.model.nodes[r.target] for r in node.requirements
                               if r.requirement == capability), None)
                if capability not in node.capabilities and target is not None:
                    # a requirement's name: the attribute of the node it is fulfilled by, as get_property
                    # reads a requirement's target's property (TOSCA Simple Profile 1.0, 4.5.1 and 4.4.2)
                    if attribute in target.attributes or attribute in target.properties:
                        return self._get_attribute([target.name, attribute], ctx)
                    return AttributeRef(target.name, attribute, None, seen_from)
                if capability not in node.capabilities:
                    continue
                if attribute in node.capabilities.get(capability, {}):
                    return self.resolve(node.capabilities[capability][attribute], self._node_ctx(node, ctx))
                return AttributeRef(node.name, attribute, capability, seen_from)
            if attribute in ("tosca_name", "tosca_id"):
                return node.name
            if attribute in node.attributes:
                value = node.attributes[attribute]
                if value is not None and not is_function(value):
                    return value
                return AttributeRef(node.name, attribute, None, seen_from)
            if attribute in node.properties:
                return self.resolve(node.properties[attribute], self._node_ctx(node, ctx))
        what = f"capability or requirement '{capability}' with " if capability else ""
        if capability is None and self.diagnostics is not None:
            # TOSCAna resolved such attributes at deploy time; a warning with a did-you-mean here.
            loc = ctx.location
            known = [*start.attributes, *start.properties]
            self.diagnostics.warn(Problem(
                f"get_attribute: node '{start.name}' has no attribute '{attribute}' in its type",
                loc.file if loc else None, loc.line if loc else None, did_you_mean(attribute, known)))
            return AttributeRef(start.name, attribute, None, seen_from)
        self._fail(f"get_attribute: node '{start.name}' has no {what}attribute '{attribute}'", ctx)

    def _concat(self, args: Any, ctx: Context) -> Any:
        args = self._args(args, 1, "concat", ctx)
        parts = [self.resolve(a, ctx) for a in args]
        if any(is_symbolic(p) for p in parts):
            return Concat(tuple(parts))
        return "".join("" if p is None else str(p) for p in parts)

    def _token(self, args: Any, ctx: Context) -> Any:
        args = self._args(args, 3, "token", ctx)
        text = self.resolve(args[0], ctx)
        separator = args[1]
        if not isinstance(separator, str) or len(separator) != 1:
            self._fail(f"token: the separator must be one character, got {separator!r}", ctx)
        try:
            index = int(args[2])
        except (TypeError, ValueError):
            index = -1
        if index < 0:
            self._fail(f"token: the index must be a whole number from 0, got {args[2]!r}", ctx)
        if is_symbolic(text):  # tosca-parser's test_token.yaml: the first part of public_address
            return Token(text, separator, index)
        pieces = str(text).split(separator)
        if index >= len(pieces):
            self._fail(f"token index {index} is out of range", ctx)
        return pieces[index]

    def _get_operation_output(self, args: Any, ctx: Context) -> Any:
        args = self._args(args, 4, "get_operation_output", ctx)
        node = self._entity(args[0], ctx, "get_operation_output")
        operation = str(args[2])
        if operation not in node.operations:
            self._fail(f"get_operation_output: node '{node.name}' has no operation '{operation}'", ctx)
        return OperationOutputRef(node.name, str(args[1]), operation, str(args[3]))


def check_functions(model: EffectiveModel, diagnostics: Diagnostics | None = None) -> None:
    """Evaluate every value of the model once, so a bad reference fails early with its location
    (and a tolerated one is a warning in `diagnostics`)."""
    resolver = Resolver(model, diagnostics)
    for node in model.nodes.values():
        ctx = Context(node, location=node.location)
        resolver.resolve(node.properties, ctx)
        resolver.resolve(node.capabilities, ctx)
        for op in node.operations.values():
            resolver.resolve(op.inputs, Context(node, location=op.location or node.location))
        for rel in node.requirements:
            resolver.resolve(rel.properties, Context(node, node, model.nodes[rel.target], rel.location))
    for output in model.outputs.values():
        resolver.resolve(output.value, Context(location=output.location))
