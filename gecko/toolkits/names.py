"""Callable tool names: every operation can be called as `POST /{toolkit}/{name}` and listed over MCP.

An operationId is its own name when it is one URL path segment that MCP accepts as a tool name. Otherwise
(GitHub's `issues/create`, an id with spaces or `:`) the operation gets an alias: the id with every run of other
characters made `_` (`issues_create`), made unique within its toolkit with `_2`, `_3`, … in document order.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable

CALLABLE_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")
"""One URL path segment (no escaping needed) that the MCP specification also accepts as a tool name."""
MAX_NAME = 128
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")
_WORDS = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")


def words(name: str) -> list[str]:
    """Lower-case words of a name's last dotted segment (`getPetById` → get, pet, by, id; `ticket_queue` → ticket,
    queue; `triangle_properties.get` → get)."""
    return [w.lower() for w in _WORDS.findall(name.rsplit(".", 1)[-1])]


def is_callable(name: str) -> bool:
    """Whether `name` can be used as is in `POST /{toolkit}/{name}` and as an MCP tool name."""
    return bool(CALLABLE_NAME.match(name)) and name not in (".", "..")


def normalized(name: str) -> str:
    """`name` made callable: runs of other characters become `_`; a long name ends with a hash of the original."""
    out = _UNSAFE.sub("_", name).strip("_.") or "tool"
    if len(out) > MAX_NAME:
        out = out[: MAX_NAME - 9] + "_" + hashlib.sha256(name.encode()).hexdigest()[:8]
    return out


def aliases(operation_ids: Iterable[str]) -> dict[str, str]:
    """operationId → alias, for the ids of one toolkit that are not callable themselves (document order)."""
    ids = list(operation_ids)
    taken = {i for i in ids if is_callable(i)}
    out: dict[str, str] = {}
    for op_id in ids:
        if op_id in taken:
            continue
        base = normalized(op_id)
        candidate, counter = base, 2
        while candidate in taken:
            suffix = f"_{counter}"
            candidate = base[: MAX_NAME - len(suffix)] + suffix
            counter += 1
        taken.add(candidate)
        out[op_id] = candidate
    return out
