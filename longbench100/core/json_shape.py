"""Check that decoded JSON has the shape a reader expects, with one wording for every reader.

A shape is a type or a tuple of types (``int``, ``(str, type(None))``), a list ``[shape]`` of items
of one shape, or a dict of keys to shapes: a key ending in ``?`` may be absent, and the key ``*``
stands for every key of the object. ``(shape, type(None))`` also takes null. ``bool`` never passes
for ``int`` or ``float``.
"""

from __future__ import annotations

from typing import Union

from longbench100.core.errors import UserError

Shape = Union[type, tuple, list, dict]

_NAMES = {
    str: "a string",
    int: "an integer",
    float: "a number",
    bool: "true or false",
    dict: "an object",
    list: "a list",
    type(None): "null",
}


def describe(value: object) -> str:
    """How a JSON value is called in an error: ``a string``, ``null``, ``a list``."""
    return _NAMES.get(type(value), type(value).__name__)


def _expected(shape: Shape) -> str:
    """The shape in words: ``an integer``, ``a string or null``, ``a list``, ``an object``."""
    if isinstance(shape, dict):
        return "an object"
    if isinstance(shape, list):
        return "a list"
    types = shape if isinstance(shape, tuple) else (shape,)
    return " or ".join(_NAMES.get(kind, kind.__name__) for kind in types)


def _matches(value: object, shape: type | tuple) -> bool:
    """Whether ``value`` has one of the types (``bool`` is not a number here; an ``int`` is a
    ``float``)."""
    types = shape if isinstance(shape, tuple) else (shape,)
    if isinstance(value, bool):
        return bool in types
    if isinstance(value, int) and float in types:
        return True
    return isinstance(value, types)


def check_shape(value: object, shape: Shape, where: str, field: str = "") -> None:
    """Raise a one-line :class:`UserError` starting with ``where`` when ``value`` does not have
    ``shape``; ``field`` is the dotted path of ``value`` inside the document (empty for the whole
    document)."""
    named = f"{field} " if field else ""
    if isinstance(shape, tuple) and isinstance(shape[0], (dict, list)):
        if value is not None:
            check_shape(value, shape[0], where, field)
    elif isinstance(shape, dict):
        if not isinstance(value, dict):
            raise UserError(
                f"{where}: {named or 'the content '}must be an object, not {describe(value)}"
            )
        for key, inner in shape.items():
            if key == "*":
                for name, item in value.items():
                    check_shape(item, inner, where, f"{field}.{name}" if field else name)
                continue
            optional, name = key.endswith("?"), key.rstrip("?")
            if name not in value:
                if optional:
                    continue
                raise UserError(f"{where}: {f'{field}.{name}' if field else name} is missing")
            check_shape(value[name], inner, where, f"{field}.{name}" if field else name)
    elif isinstance(shape, list):
        if not isinstance(value, list):
            raise UserError(
                f"{where}: {named or 'the content '}must be a list, not {describe(value)}"
            )
        for index, item in enumerate(value):
            check_shape(item, shape[0], where, f"{field}[{index}]")
    elif not _matches(value, shape):
        raise UserError(
            f"{where}: {named or 'the content '}must be {_expected(shape)}, not {describe(value)}"
        )
