"""JSON helpers: canonical form and content hashes."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable
from typing import Any

import orjson


def json_pointer(parts: Iterable[Any]) -> str:
    """The RFC 6901 pointer of a path of keys and indexes (`["a/b", 0]` → `/a~1b/0`)."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def canonical_json(value: Any) -> str:
    """Compact JSON with sorted keys: equal values give equal strings."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def content_hash(*parts: Any) -> str:
    """sha256 hex of the canonical JSON of `parts`."""
    return hashlib.sha256(canonical_json(list(parts)).encode()).hexdigest()


def dumps_compact(value: Any) -> str:
    """Fast compact JSON text (orjson when it can encode the value, else the standard library)."""
    try:
        return orjson.dumps(value).decode()
    except (TypeError, orjson.JSONEncodeError):
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False, default=str)


_LONG_DIGITS = re.compile(rb"\d{19}")
"""A run of 19+ digits: possibly an integer orjson would turn into a float (|n| ≥ 2^63)."""


def may_hold_big_integers(data: bytes) -> bool:
    """True when JSON text may hold an integer that orjson would round to a float (it has a long digit run)."""
    return _LONG_DIGITS.search(data) is not None


def loads(text: str | bytes) -> Any:
    """Parse JSON text, integers exact: orjson, or the standard parser for text with integers orjson would round."""
    data = text.encode() if isinstance(text, str) else text
    return json.loads(data) if may_hold_big_integers(data) else orjson.loads(data)
