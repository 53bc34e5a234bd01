"""An operation's error convention (`x-gecko-error-convention`, learned by `gecko twin learn` or declared): how its
real server reports the tool's own errors, and its not-found message template (`Task not found: {id}`).

Read here once for every way in: the world model's not-found answer (`gecko.pipeline.world.respond`) and the MCP
rendering of a tool's errors (`gecko.mcp.conventions`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from gecko.toolkits.model import Operation

EXTENSION = "x-gecko-error-convention"
KINDS = ("isError", "body")
"""`isError`: an MCP error result with the server's message; `body`: a success whose body carries the error."""


def convention_of(operation: Operation | None) -> Mapping[str, Any] | None:
    """The operation's learned or declared error convention, or None."""
    found = operation.extensions.get(EXTENSION) if operation is not None else None
    return found if isinstance(found, Mapping) and found.get("kind") in KINDS else None


def not_found_message(convention: Mapping[str, Any] | None, record_id: Any) -> str | None:
    """The convention's not-found message for `record_id` (its template, `{id}` filled), or None without a template."""
    template = convention.get("not_found") if convention is not None else None
    return template.replace("{id}", str(record_id)) if isinstance(template, str) else None


__all__ = ["EXTENSION", "KINDS", "convention_of", "not_found_message"]
