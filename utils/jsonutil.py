"""JSON helpers: canonical form and content hashes."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import orjson


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


def loads(text: str | bytes) -> Any:
    """Parse JSON text (orjson)."""
    return orjson.loads(text)
