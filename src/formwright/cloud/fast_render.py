"""moto's query-protocol XML for a result, rendered from the service model with the lookups kept.

moto's serializer (moto.core.serialize.QuerySerializer with XFormedAttributePicker) walks the output
shape on every response and, for each member of each object, builds a context and asks five alias
providers which attribute names to try. The names depend only on the member, its shape and the
object's class, so they are asked of moto's own picker once per (member, class) here and kept; the
rest follows moto's rules as they are:

- a member whose value is None is left out; a structure member without a value is left out, one
  whose members are all absent is an empty element;
- a list is `<member>` items (an item that renders to nothing is dropped), an empty list is an empty
  element; strings are `str()`, booleans `true` unless neither True nor "true", integers `int()`,
  timestamps ISO 8601 (with microseconds when there are any);
- moto's response transformers (`RESPONSE_KEY_PATH_TO_TRANSFORMER`) apply at the member paths
  they name.

Shapes this does not render (maps, flattened lists, XML attributes or namespaces on members) raise
`Unsupported` the first time they are met, and the caller lets moto answer.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from xml.sax.saxutils import escape

Render = Callable[[Any], str | None]


class Unsupported(Exception):
    """A shape this renderer does not cover."""


_MISSING = object()
_renderers: dict[tuple[str, str], Render] = {}


def render_output(operation: Any, result: Any) -> str:
    """The inner XML of `operation`'s result wrapper for `result`."""
    shape = operation.output_shape
    key = (operation.name, "output")
    if key not in _renderers:
        _renderers[key] = _structure(shape, f"{operation.name}.{shape.name}", operation)
    return _renderers[key](result) or ""


def render_error_members(operation: Any, shape: Any, error: Exception) -> str:
    """The members an error shape declares, read from the error (moto serializes them too)."""
    if not shape.members:
        return ""
    return _structure(shape, f"{operation.name}.{shape.name}", operation)(error) or ""


def _element(name: str, inner: str) -> str:
    return f"<{name}>{inner}</{name}>" if inner else f"<{name}/>"


def _name(shape: Any, default: str) -> str:
    return str(shape.serialization.get("name", default))


def _renderer(shape: Any, path: str, operation: Any) -> Render:
    kind = shape.type_name
    if kind == "structure":
        return _structure(shape, path, operation)
    if kind == "list":
        return _list(shape, path, operation)
    return _scalar(shape)


def _scalar(shape: Any) -> Render:
    kind = shape.type_name
    if kind == "string":
        return lambda v: escape(str(v))
    if kind == "boolean":
        return lambda v: "true" if v is True or str(v).lower() == "true" else "false"
    if kind in ("integer", "long"):
        return lambda v: str(int(v))
    if kind in ("float", "double"):
        return lambda v: str(float(v))
    if kind == "timestamp":
        from moto.core.serialize import TimestampSerializer

        stamps = TimestampSerializer(TimestampSerializer.TIMESTAMP_FORMAT_ISO8601)
        form = shape.serialization.get("timestampFormat", stamps.default_format)
        return lambda v: stamps._convert_timestamp_to_str(v, form)
    raise Unsupported(f"{shape.name}: {kind}")


def _list(shape: Any, path: str, operation: Any) -> Render:
    if shape.serialization.get("flattened"):
        raise Unsupported(f"{shape.name}: flattened list")
    item_shape = shape.member
    item_tag = _name(item_shape, "member")
    structured = item_shape.type_name == "structure"
    item = _renderer(item_shape, f"{path}.{item_shape.name}", operation)

    def render(value: Any) -> str:
        parts = []
        for entry in value:
            inner = item(entry)
            if inner is None or (structured and inner == ""):
                continue  # moto drops an item that serializes to nothing or to {}
            parts.append(_element(item_tag, inner))
        return "".join(parts)

    return render


def _structure(shape: Any, path: str, operation: Any) -> Render:
    from moto.cloudformation.responses import CloudFormationResponse

    transformers = CloudFormationResponse.RESPONSE_KEY_PATH_TO_TRANSFORMER
    members = []
    for key, member in shape.members.items():
        member.parent = shape  # as moto's serializer sets it, for its alias providers
        if member.serialization.get("xmlAttribute") or member.serialization.get("xmlNamespace") \
                or member.type_name == "map":
            raise Unsupported(f"{shape.name}.{key}")
        key_path = f"{path}.{key}"
        transform = next((t for suffix, t in transformers.items() if key_path.endswith(suffix)), None)
        members.append((key, member, _name(member, key), _renderer(member, key_path, operation),
                        transform))
    names: dict[type, list[tuple[str, ...]]] = {}  # the attribute names tried, by the object's class

    def render(value: Any) -> str | None:
        if value is None:
            return None
        tried = names.get(type(value))
        if tried is None:
            tried = names[type(value)] = [_candidates(value, key, member, path, operation)
                                          for key, member, *_ in members]
        parts = []
        for (_, _, tag, inner, transform), keys in zip(members, tried, strict=True):
            found = _pick(value, keys)
            if transform is not None:
                found = transform(found)
            if found is None:
                continue
            text = inner(found)
            if text is not None:
                parts.append(_element(tag, text))
        return "".join(parts)

    return render


def _candidates(value: Any, key: str, member: Any, path: str, operation: Any) -> tuple[str, ...]:
    """The attribute names moto's XFormedAttributePicker tries for `key` on `value`, in its order."""
    from moto.core.serialize import AttributePickerContext, XFormedAttributePicker

    context = AttributePickerContext(obj=value, key=key, shape=member, operation_model=operation,
                                     service_model=operation.service_model, key_path=path)
    return tuple(XFormedAttributePicker().get_possible_keys(context))


def _pick(value: Any, keys: tuple[str, ...]) -> Any:
    """The first of `keys` the value has (moto.core.utils.get_value: an item, else an attribute)."""
    if hasattr(value, "__getitem__"):
        for key in keys:
            try:
                return value[key]
            except (KeyError, IndexError, TypeError, AttributeError):
                continue
        return None
    for key in keys:
        found = getattr(value, key, _MISSING)
        if found is not _MISSING:
            return found
    return None
