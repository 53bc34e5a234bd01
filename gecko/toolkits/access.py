"""Read/write kind of an operation: declared, else from the HTTP method, else from the name."""

from __future__ import annotations

from typing import Any

from gecko.toolkits.model import Access
from gecko.toolkits.names import words

READ_METHODS = frozenset({"get", "head", "options"})
READ_VERBS = frozenset({
    "get", "list", "search", "find", "check", "fetch", "read", "query", "lookup", "look",
    "show", "describe", "view", "count", "retrieve", "browse", "is", "has", "exists", "validate",
    "verify", "estimate", "preview", "inspect", "load", "peek", "stat", "status",
})


def first_verb(name: str) -> str:
    """First word of the last dotted segment of a tool name (`triangle_properties.get` → `get`)."""
    found = words(name)
    return found[0] if found else ""


def operation_access(operation: dict[str, Any], method: str, name: str) -> Access:
    """`x-gecko-access` (or `x-gecko.access`) if declared, else GET/HEAD → read, else by name prefix."""
    declared = operation.get("x-gecko-access")
    if declared is None and isinstance(operation.get("x-gecko"), dict):
        declared = operation["x-gecko"].get("access")
    if declared in ("read", "write"):
        return declared
    if declared is not None:
        raise ValueError(f"x-gecko-access must be 'read' or 'write', got {declared!r}")
    if method.lower() in READ_METHODS:
        return "read"
    return "read" if first_verb(name) in READ_VERBS else "write"
