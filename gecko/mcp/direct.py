"""The direct answer to a stateless `tools/call` or `tools/list` over streamable HTTP, without the SDK's transport.

The SDK's stateless transport spends most of an MCP call on machinery a one-shot JSON request does not use: a
transport, memory streams, a task group and a server loop per request, the message validated as a JSON-RPC
message and again as a client request, the result dumped to a dict and that dict serialised again. This path
answers the requests whose SDK answer is fully determined by the handlers: a single JSON-RPC request (an `id`),
`tools/call` or `tools/list`, with exactly the shapes the SDK's models accept, under the headers its transport
accepts. It calls the same handler code (`gecko.mcp.server.call_tool`, the catalog's listing) and writes the same
bytes the SDK would. Everything else (initialize, notifications, responses, batches, other methods, unusual
shapes or headers, task-augmented calls) is None here and goes to the SDK, which answers it as before.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, TypeGuard

from mcp import types
from mcp.shared.version import SUPPORTED_PROTOCOL_VERSIONS
from pydantic_core import to_json

from gecko.mcp.search import search_tool_listing
from gecko.mcp.server import McpBinding, call_tool

CALL = "tools/call"
LIST = "tools/list"
JSON_TYPE = "application/json"
_REQUEST_KEYS = frozenset({"jsonrpc", "id", "method", "params"})
_CALL_KEYS = frozenset({"name", "arguments", "_meta"})
_LIST_KEYS = frozenset({"cursor", "_meta"})
_HEADERS = (b"accept", b"content-type", b"mcp-protocol-version")


@dataclass(frozen=True)
class DirectRequest:
    """A request this module answers: its id, method and (for `tools/call`) the tool and its arguments."""

    id: int | str
    method: str
    name: str = ""
    arguments: dict[str, Any] | None = None


def _first_headers(raw: Iterable[tuple[bytes, bytes]]) -> dict[bytes, str]:
    """The first value of each header the SDK's transport checks (Starlette's `headers.get` reads the first)."""
    found: dict[bytes, str] = {}
    for key, value in raw:
        key = key.lower()
        if key in _HEADERS and key not in found:
            found[key] = value.decode("latin-1")
    return found


def headers_accepted(raw: Iterable[tuple[bytes, bytes]]) -> bool:
    """Whether the SDK's JSON-response transport takes a POST with these headers without refusing it.

    The same three checks it makes: a JSON `Content-Type` (400/415 otherwise), an `Accept` naming
    `application/json` (406), and an `MCP-Protocol-Version`, when sent, that the SDK supports (400).
    """
    headers = _first_headers(raw)
    content_type = headers.get(b"content-type", "")
    if not content_type.lower().startswith(JSON_TYPE):
        return False
    if not any(part.strip() == JSON_TYPE for part in content_type.split(";")[0].split(",")):
        return False
    if not any(part.strip().startswith(JSON_TYPE) for part in headers.get(b"accept", "").split(",")):
        return False
    version = headers.get(b"mcp-protocol-version")
    return version is None or version in SUPPORTED_PROTOCOL_VERSIONS


def _is_id(value: Any) -> TypeGuard[int | str]:
    return type(value) is str or type(value) is int  # not bool, not float: the SDK's RequestId is strict


def _meta_ok(params: dict[str, Any]) -> bool:
    if "_meta" not in params or params["_meta"] is None:
        return True
    meta = params["_meta"]
    return isinstance(meta, dict) and (meta.get("progressToken") is None or _is_id(meta["progressToken"]))


def direct_request(message: Any) -> DirectRequest | None:
    """The request if the SDK would accept it as a `tools/call` or `tools/list` and answer it in one response.

    A strict subset of what the SDK accepts: a JSON object with only the JSON-RPC request members, `jsonrpc`
    "2.0", a string or integer `id`, and params of exactly the types the SDK's models require (no `task`).
    Anything else is None, for the SDK.
    """
    if type(message) is not dict or message.get("jsonrpc") != "2.0" or not message.keys() <= _REQUEST_KEYS:
        return None
    request_id, method, params = message.get("id"), message.get("method"), message.get("params")
    if not _is_id(request_id):
        return None
    if method == CALL:
        if type(params) is not dict or not params.keys() <= _CALL_KEYS or type(params.get("name")) is not str:
            return None
        arguments = params.get("arguments")
        if (arguments is not None and type(arguments) is not dict) or not _meta_ok(params):
            return None
        return DirectRequest(request_id, CALL, params["name"], arguments)
    if method == LIST:
        if params is None:
            return DirectRequest(request_id, LIST)
        if type(params) is not dict or not params.keys() <= _LIST_KEYS or not _meta_ok(params):
            return None
        cursor = params.get("cursor")
        return DirectRequest(request_id, LIST) if cursor is None or type(cursor) is str else None
    return None


def _error_result(message: str) -> types.CallToolResult:
    """What the SDK's `call_tool` wrapper makes of a handler's exception."""
    return types.CallToolResult(content=[types.TextContent(type="text", text=message)], isError=True)


def listing_json(binding: McpBinding) -> bytes:
    """The `tools/list` result of the endpoint `binding` serves, serialised (the same for every request to it)."""
    listing = binding.catalog.listing
    tools = [search_tool_listing(), *listing] if binding.search is not None else listing
    return types.ListToolsResult(tools=tools).model_dump_json(by_alias=True, exclude_none=True).encode()


async def answer(request: DirectRequest, binding: McpBinding, listing: bytes | None = None) -> bytes:
    """The JSON-RPC response body, byte for byte what the SDK's JSON-response transport writes.

    Args:
        request: from `direct_request`.
        binding: the session and tools of this request.
        listing: `listing_json(binding)`, if the caller keeps it (for `tools/list`).
    """
    if request.method == CALL:
        try:
            result = await call_tool(binding, request.name, request.arguments or {})
        except Exception as exc:  # noqa: BLE001 - as the SDK's call_tool wrapper: any failure, an error result
            result = _error_result(str(exc))
        body = result.model_dump_json(by_alias=True, exclude_none=True).encode()
    else:
        body = listing if listing is not None else listing_json(binding)
    return b'{"jsonrpc":"2.0","id":' + to_json(request.id) + b',"result":' + body + b"}"
