"""Limits on untrusted JSON, checked right after parsing and before any expensive work.

A request body that is small in bytes can still be costly: 500,000 one-byte array items, nesting deep
enough to exhaust a serializer's recursion, a string that a regular expression scans for seconds.
`check_json` walks a parsed value once (iteratively, no recursion) and stops at the first value over a
limit: nesting depth, items of one array, values in total, characters of one string or key. It also
refuses values that cannot be stored and read back losslessly, when the parser let them through: lone
UTF-16 surrogates in strings and non-finite numbers (`NaN`, `Infinity`, `1e400`).

`parse_json` parses bytes with integers kept exact (orjson turns integers beyond 64 bits into floats, so
text with long digit runs goes to the standard parser), reports nesting beyond the parser's recursion as a
depth limit, not as a crash, and checks the limits.
"""

from __future__ import annotations

import dataclasses
import json
import math
import re
from dataclasses import dataclass
from typing import Any, Literal

import orjson

from utils.jsonutil import json_pointer, may_hold_big_integers

LimitName = Literal["depth", "array_items", "nodes", "string_chars"]
READABLE_DEPTH = 192
"""Deepest nesting a stored document may have: the serializers that render stored sessions refuse
documents deeper than 255 levels (orjson, pydantic), and responses wrap a stored value in a few levels."""
_SURROGATE = re.compile("[\ud800-\udfff]")
POINTER_CHARS = 200
"""Longest pointer shown in a message (a pointer holds keys, which may be long)."""


@dataclass(frozen=True)
class JsonLimits:
    """Largest JSON value accepted (each limit ≥ 1)."""

    max_depth: int = 64
    """Nesting depth: a scalar is 0, `{}` or `[]` is 1, `{"a": []}` is 2."""
    max_array_items: int = 10_000
    """Items of one array."""
    max_nodes: int = 100_000
    """Values in total: every object, array, string, number, boolean and null counts one."""
    max_string_chars: int = 100_000
    """Characters of one string or object key."""


class JsonLimitExceeded(ValueError):
    """A value over one of the `JsonLimits`; `pointer` (RFC 6901) locates it."""

    def __init__(self, limit: LimitName, maximum: int, pointer: str) -> None:
        self.limit = limit
        self.maximum = maximum
        self.pointer = pointer
        what = {"depth": "nesting deeper than", "array_items": "an array with more items than",
                "nodes": "more JSON values in total than", "string_chars": "a string longer than"}[limit]
        units = {"depth": "levels", "array_items": "items", "nodes": "values", "string_chars": "characters"}[limit]
        where = f" at '{pointer}'" if pointer else ""
        super().__init__(f"{what} {maximum} {units}{where}")


class JsonValueRejected(ValueError):
    """A string with a lone UTF-16 surrogate, or a non-finite number: not storable as JSON text."""

    def __init__(self, keyword: Literal["surrogate", "finite"], pointer: str) -> None:
        self.keyword = keyword
        self.pointer = pointer
        label = f"'{pointer}'" if pointer else "the body"
        message = (f"{label} holds a lone UTF-16 surrogate (\\ud800-\\udfff without its pair), which JSON text "
                   "cannot carry interoperably; send well-formed Unicode"
                   if keyword == "surrogate" else
                   f"{label} is not a finite number (NaN, Infinity or out of the double range)")
        super().__init__(message)


def parse_json(raw: bytes | str, limits: JsonLimits) -> Any:
    """Parse JSON text with integers kept exact, then `check_json` it against `limits`.

    Raises:
        JsonLimitExceeded: a value over a limit (nesting beyond the parser's own recursion included).
        JsonValueRejected: a lone surrogate or a non-finite number.
        ValueError: not JSON (the message says where).
    """
    data = raw.encode() if isinstance(raw, str) else raw
    if not may_hold_big_integers(data):
        try:
            value = orjson.loads(data)
        except orjson.JSONDecodeError:
            pass  # the standard parser accepts lone surrogates, NaN and huge exponents (refused below) or explains
        else:
            check_json(value, limits)  # orjson guarantees well-formed Unicode and finite numbers
            return value
    try:
        value = json.loads(data)
    except RecursionError:
        raise JsonLimitExceeded("depth", limits.max_depth, "") from None
    check_json(value, limits, values=True)
    return value


def _pointer(link: tuple[Any, Any] | None, key: Any = None) -> str:
    parts: list[str] = [] if key is None else [str(key)]
    while link is not None:
        link, part = link
        if part is not None:
            parts.append(str(part))
    pointer = json_pointer(reversed(parts))
    pointer = _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", pointer)  # shown as text, never as a surrogate
    return pointer if len(pointer) <= POINTER_CHARS else pointer[:POINTER_CHARS] + "…"


def check_json(value: Any, limits: JsonLimits, *, values: bool = False) -> None:
    """Check a parsed JSON value against `limits` in one iterative pass (stops at the first excess).

    Args:
        value: a value as parsed from JSON (dict, list, str, int, float, bool, None).
        limits: the limits.
        values: also refuse lone surrogates and non-finite numbers (needed unless orjson parsed it).

    Raises:
        JsonLimitExceeded: the first value over a limit.
        JsonValueRejected: the first unstorable value (with `values=True`).
    """
    max_depth, max_items, max_nodes, max_chars = (limits.max_depth, limits.max_array_items, limits.max_nodes,
                                                  limits.max_string_chars)
    kind = type(value)
    if kind is not dict and kind is not list:
        _check_scalar(value, max_chars, values, None, None)
        return
    if max_depth < 1:
        raise JsonLimitExceeded("depth", max_depth, "")
    nodes = 1
    stack: list[tuple[Any, int, tuple[Any, Any] | None]] = [(value, 1, None)]
    while stack:
        container, depth, link = stack.pop()
        size = len(container)
        is_object = type(container) is dict
        if not is_object and size > max_items:
            raise JsonLimitExceeded("array_items", max_items, _pointer(link))
        nodes += size
        if nodes > max_nodes:
            raise JsonLimitExceeded("nodes", max_nodes, _pointer(link))
        if is_object:
            pairs = container.items()
            for key in container:
                if len(key) > max_chars or (values and _SURROGATE.search(key)):
                    _check_scalar(key, max_chars, values, link, key)
        else:
            pairs = enumerate(container)
        for key, item in pairs:
            kind = type(item)
            if kind is dict or kind is list:
                if depth >= max_depth:
                    raise JsonLimitExceeded("depth", max_depth, _pointer(link, key))
                if item:
                    stack.append((item, depth + 1, (link, key)))
            elif kind is str:
                if len(item) > max_chars or (values and _SURROGATE.search(item)):
                    _check_scalar(item, max_chars, values, link, key)
            elif values and kind is float and not math.isfinite(item):
                raise JsonValueRejected("finite", _pointer(link, key))


def _check_scalar(value: Any, max_chars: int, values: bool, link: tuple[Any, Any] | None, key: Any) -> None:
    if isinstance(value, str):
        if len(value) > max_chars:
            raise JsonLimitExceeded("string_chars", max_chars, _pointer(link, key))
        if values and _SURROGATE.search(value):
            raise JsonValueRejected("surrogate", _pointer(link, key))
    elif values and isinstance(value, float) and not math.isfinite(value):
        raise JsonValueRejected("finite", _pointer(link, key))


def is_readable(value: Any) -> bool:
    """False for a document nested deeper than `READABLE_DEPTH` (stored, it could not be read back)."""
    try:
        check_json(value, _READABLE)
    except JsonLimitExceeded:
        return False
    return True


def is_readable_change(state: Any, patch: list[dict[str, Any]] | None) -> bool:
    """`is_readable(state)` for a state made by `patch` from a readable one: only the values the patch puts in
    are walked, each at the depth of its path, so the check costs the size of the change, not of the state.

    Args:
        state: the new state (walked whole when the patch is None or moves or copies values).
        patch: the RFC 6902 patch from the previous, readable state to `state`.
    """
    if patch is None or any(op.get("op") not in ("add", "replace", "remove", "test") for op in patch):
        return is_readable(state)
    for op in patch:
        if op["op"] not in ("add", "replace"):
            continue
        depth = str(op["path"]).count("/")
        if depth > READABLE_DEPTH:
            return False
        value = op["value"]
        if isinstance(value, (dict, list)):
            try:
                check_json(value, dataclasses.replace(_READABLE, max_depth=READABLE_DEPTH - depth))
            except JsonLimitExceeded:
                return False
    return True


_READABLE = JsonLimits(max_depth=READABLE_DEPTH, max_array_items=2**62, max_nodes=2**62, max_string_chars=2**62)
