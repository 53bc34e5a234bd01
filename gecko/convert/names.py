"""Safe operation ids for tool names, and the way back to the original names.

An operationId must match `^[A-Za-z0-9_-]{1,64}$` (the tool-name rule of OpenAI-style function
calling, so the same id works as a route segment and as a function name). Other characters become
`_`; names longer than 64 characters are cut and given a hash suffix so they stay distinct.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from typing import Any

SAFE_NAME_RE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
MAX_LEN = 64
ORIGINAL_NAME_KEY = "x-gecko-original-name"
_UNSAFE_RUN = re.compile(r"[^A-Za-z0-9_-]+")


def is_safe(name: str) -> bool:
    """Whether `name` can be used as an operationId unchanged."""
    return bool(SAFE_NAME_RE.match(name))


def _digest(name: str) -> str:
    return hashlib.sha256(name.encode("utf-8")).hexdigest()[:8]


def _fit(base: str, suffix: str) -> str:
    return base[: MAX_LEN - len(suffix)] + suffix


def safe_name(name: str) -> str:
    """The safe form of one tool name (`math.factorial` → `math_factorial`).

    Runs of characters outside `[A-Za-z0-9_-]` become one `_`; an empty result becomes `tool`;
    a result longer than 64 characters is cut and ends with `_` plus 8 hex digits of the name's hash.
    """
    if is_safe(name):
        return name
    base = _UNSAFE_RUN.sub("_", name).strip("_") or "tool"
    if len(base) > MAX_LEN:
        base = _fit(base, "_" + _digest(name))
    return base


def assign_operation_ids(names: Sequence[str]) -> list[str]:
    """Unique safe ids for `names` (which must be distinct), in the same order.

    The result does not depend on the order of `names`: names that are already safe keep
    themselves; the others, taken in sorted order, get their safe form, or that form plus `_2`,
    `_3`, … when it is taken.

    Raises:
        ValueError: two tools have the same original name.
    """
    if len(set(names)) != len(names):
        dupes = sorted({n for n in names if names.count(n) > 1})
        raise ValueError(f"duplicate tool names: {', '.join(dupes)}")
    taken = {n for n in names if is_safe(n)}
    chosen: dict[str, str] = {n: n for n in taken}
    for name in sorted(n for n in names if n not in chosen):
        candidate = safe_name(name)
        counter = 2
        while candidate in taken:
            candidate = _fit(safe_name(name), f"_{counter}")
            counter += 1
        taken.add(candidate)
        chosen[name] = candidate
    return [chosen[n] for n in names]


def operation_names(document: Mapping[str, Any]) -> dict[str, str]:
    """operationId → original tool name of every operation of a generated document."""
    mapping: dict[str, str] = {}
    for item in (document.get("paths") or {}).values():
        for op in item.values() if isinstance(item, dict) else ():
            if isinstance(op, dict) and "operationId" in op:
                mapping[op["operationId"]] = str(op.get(ORIGINAL_NAME_KEY) or op["operationId"])
    return mapping


def original_names(document: Mapping[str, Any]) -> dict[str, str]:
    """Original tool name → operationId; the inverse of `operation_names`."""
    return {original: op_id for op_id, original in operation_names(document).items()}

