"""Provider-safe tool names (`^[a-zA-Z0-9_-]{1,64}$`) that map back to exactly one tool.

Function-calling APIs accept only such names. A catalog gives every tool one agent-facing name: its
operationId when that is safe and unique in the catalog; otherwise a sanitised form, prefixed with the
toolkit name on a clash, cut to 64 characters with a hash suffix, and numbered if still taken. The
mapping is kept both ways, so a name the model returns resolves to the exact tool (and nothing else).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable

SAFE_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
MAX_NAME_LENGTH = 64
_UNSAFE_RUN = re.compile(r"[^a-zA-Z0-9_-]+")


def is_provider_safe(name: str) -> bool:
    """Whether `name` is accepted as a function name by OpenAI-style APIs."""
    return bool(SAFE_NAME.match(name))


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:8]


def sanitise(name: str) -> str:
    """`name` with unsafe runs replaced by `_`, cut to 64 characters with a hash suffix when longer."""
    base = _UNSAFE_RUN.sub("_", name).strip("_") or "tool"
    if len(base) > MAX_NAME_LENGTH:
        suffix = "_" + _digest(name)
        base = base[: MAX_NAME_LENGTH - len(suffix)] + suffix
    return base


def assign_agent_names(tools: Iterable[tuple[str, str]]) -> dict[tuple[str, str], str]:
    """Unique provider-safe names for `(toolkit, operation_id)` pairs.

    A safe operationId that no other tool of the catalog shares is kept as is. Clashing or unsafe ones
    become `sanitise(f"{toolkit}__{operation_id}")` (or their sanitised form when that is unique), then
    `_2`, `_3`, … if that is still taken. The result depends only on the set of pairs.

    Args:
        tools: `(toolkit, operation_id)` pairs; duplicates are ignored.

    Returns:
        A name for every pair.
    """
    pairs = sorted(set(tools))
    counts: dict[str, int] = {}
    for _, op in pairs:
        counts[op] = counts.get(op, 0) + 1
    names: dict[tuple[str, str], str] = {}
    taken: set[str] = set()
    deferred: list[tuple[str, str]] = []
    for toolkit, op in pairs:
        if counts[op] == 1 and is_provider_safe(op):
            names[(toolkit, op)] = op
            taken.add(op)
        else:
            deferred.append((toolkit, op))
    for toolkit, op in deferred:
        candidate = sanitise(op) if counts[op] == 1 else sanitise(f"{toolkit}__{op}")
        if candidate in taken:
            candidate = sanitise(f"{toolkit}__{op}")
        unique, number = candidate, 2
        while unique in taken:
            suffix = f"_{number}"
            unique = candidate[: MAX_NAME_LENGTH - len(suffix)] + suffix
            number += 1
        names[(toolkit, op)] = unique
        taken.add(unique)
    return names
