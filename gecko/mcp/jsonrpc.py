"""What Gecko answers itself before the MCP SDK sees a message, on both transports (HTTP and stdio).

The SDK answers an unknown method with -32602 ("invalid params": it fails to validate the request as any known
one) and a body it cannot parse (an integer of 5,000 digits, say) with a 500; JSON-RPC 2.0 says -32601 (method
not found) and -32700 (parse error). Gecko parses every message with its own JSON limits first, so it answers
those two itself.
"""

from __future__ import annotations

import typing
from typing import Any

import mcp.types as types

PARSE_ERROR = types.PARSE_ERROR
INVALID_REQUEST = types.INVALID_REQUEST
METHOD_NOT_FOUND = types.METHOD_NOT_FOUND


def _client_methods() -> frozenset[str]:
    """The request methods of the MCP version the SDK implements (from its `ClientRequest` union)."""
    annotation = types.ClientRequest.model_fields["root"].annotation
    return frozenset(method for request in typing.get_args(annotation)
                     for method in typing.get_args(request.model_fields["method"].annotation))


CLIENT_METHODS = _client_methods()


def error(code: int, message: str, request_id: Any = None) -> dict[str, Any]:
    """A JSON-RPC 2.0 error response (`id` null when the request's id is unknown)."""
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


def unknown_method(message: Any) -> dict[str, Any] | None:
    """The -32601 answer to a request (it has an `id`) for a method MCP does not define; None for anything else."""
    if not isinstance(message, dict) or "id" not in message or not isinstance(message.get("method"), str):
        return None
    method = message["method"]
    if method in CLIENT_METHODS:
        return None
    return error(METHOD_NOT_FOUND, f"Method not found: {method[:100]!r} is not an MCP method this server "
                                   f"implements", message.get("id"))
