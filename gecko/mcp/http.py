"""MCP over streamable HTTP at `/mcp` (every toolkit) and `/mcp/{toolkit}`, in Gecko's own FastAPI app.

Sessions: one MCP session is one Gecko session, and the `Mcp-Session-Id` Gecko hands out *is* the Gecko
session id. The SDK's transport runs in its stateless mode (a fresh transport per request, JSON responses),
and this layer does the session mapping, so any worker can serve any request: the session lives in the
shared store, not in a worker's memory.

```
POST initialize ─► bind: X-Session-ID (must exist) │ ?session=ID │ else a new session (?mode=hybrid…)
                   └─► SDK answers; this layer adds `Mcp-Session-Id: <gecko session id>`
POST other      ─► session = Mcp-Session-Id │ X-Session-ID │ ?session=ID (clients that skip initialize)
                   └─► a plain tools/call or tools/list: answered directly (gecko.mcp.direct), the same bytes
                       the SDK writes, without its per-request transport; anything else: the SDK
every POST      ─► --max-body-bytes and the JSON limits first (413/422), as on every Gecko route
GET, DELETE     ─► 405 (no server-initiated stream; a Gecko session ends by TTL or DELETE /sessions/{id})
```
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any
from urllib.parse import parse_qs

from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import Message, Receive, Scope, Send

from gecko.api.deps import LIMIT_FLAGS, SESSION_HEADER, GeckoContext
from gecko.mcp.catalog import McpCatalogs
from gecko.mcp.direct import DirectRequest, answer, direct_request, headers_accepted, listing_json
from gecko.mcp.jsonrpc import PARSE_ERROR, unknown_method
from gecko.mcp.server import McpBinding, build_server
from gecko.sessions.service import create_session
from gecko.toolkits.registry import ToolNotFound
from gecko.upstream.pool import SESSION_MODES
from utils.jsonlimits import JsonLimitExceeded, JsonLimits, JsonValueRejected, parse_json

MCP_SESSION_HEADER = "mcp-session-id"
SCOPE_KEY = "gecko.mcp"
NOT_POST = ("Gecko's MCP endpoint takes POST only: it opens no server-initiated stream, and its sessions are "
            "Gecko sessions (they end by TTL or DELETE /sessions/{id})")


def _jsonrpc_error(status: int, message: str, code: int = -32600) -> Response:
    return JSONResponse({"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": message}},
                        status_code=status)


def _check_body(body: bytes, limits: JsonLimits) -> tuple[Any, Response | None]:
    """The parsed body, or the refusal of a body over the JSON limits (413) or with an unstorable value (422).

    The same limits as the HTTP API's, checked before the SDK parses the body, so no MCP request holds a worker
    either. A body that is not JSON (or holds an integer of more than 4,300 digits, as over HTTP) is a 400 with the
    JSON-RPC parse error (-32700).
    """
    try:
        return parse_json(body, limits), None
    except JsonLimitExceeded as exc:
        return None, _jsonrpc_error(413, f"request body has {exc}; this server accepts no more "
                                         f"({LIMIT_FLAGS[exc.limit]})")
    except JsonValueRejected as exc:
        return None, _jsonrpc_error(422, str(exc))
    except (ValueError, UnicodeDecodeError) as exc:
        return None, _jsonrpc_error(400, f"Parse error: {str(exc)[:300]}", PARSE_ERROR)


def _is_initialize(message: Any) -> bool:
    items = message if isinstance(message, list) else [message]
    return any(isinstance(m, dict) and m.get("method") == "initialize" for m in items)


class McpHttpEndpoint:
    """The ASGI app behind `/mcp` and `/mcp/{toolkit}`; `run()` must be entered in the app's lifespan."""

    def __init__(self, ctx: GeckoContext) -> None:
        self.ctx = ctx
        self.catalogs = McpCatalogs(ctx.registry)
        self.server = build_server(self._binding, version=ctx.version)
        self.manager = StreamableHTTPSessionManager(app=self.server, json_response=True, stateless=True,
                                                    security_settings=None)
        self._listings: dict[str | None, bytes] = {}
        """The serialised `tools/list` result per endpoint (its catalog is built once per worker too)."""

    def run(self) -> contextlib.AbstractAsyncContextManager[None]:
        """The SDK's task group, for the app's lifespan."""
        return self.manager.run()

    def _binding(self) -> McpBinding:
        request = self.server.request_context.request
        assert isinstance(request, Request), "MCP over HTTP: the SDK passes the HTTP request to handlers"
        toolkit, session_id = request.scope[SCOPE_KEY]
        return self._bind(toolkit, session_id)

    def _bind(self, toolkit: str | None, session_id: str | None) -> McpBinding:
        return McpBinding(self.catalogs.get(toolkit), self.ctx.runner, session_id,
                          search=self.ctx.search if toolkit is None else None)

    async def _answer_directly(self, request: DirectRequest, toolkit: str | None, session_id: str | None,
                               scope: Scope, receive: Receive, send: Send) -> None:
        binding = self._bind(toolkit, session_id)
        listing = self._listings.get(toolkit)
        if request.method == "tools/list" and listing is None:  # the first: may load toolkits, so in a thread
            listing = self._listings[toolkit] = await asyncio.to_thread(listing_json, binding)
        body = await answer(request, binding, listing)
        await Response(body, headers={"Content-Type": "application/json"})(scope, receive, send)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        toolkit = scope.get("path_params", {}).get("toolkit")
        if scope["method"] != "POST":
            await _jsonrpc_error(405, NOT_POST)(scope, receive, _with_headers(send, {"Allow": "POST"}))
            return
        if not self.catalogs.built(toolkit):
            # first use: loading the toolkit(s) of a prebuilt index and building the catalog compile documents, so
            # it runs in a thread, not on the event loop every other request of this worker waits for
            try:
                await asyncio.to_thread(self.catalogs.get, toolkit)
            except ToolNotFound as exc:
                hint = f"; did you mean: {', '.join(exc.suggestions)}" if exc.suggestions else ""
                await _jsonrpc_error(404, f"{exc}{hint}")(scope, receive, send)
                return
        body = await self._read_body(receive)
        if body is None:
            await _jsonrpc_error(413, f"request body exceeds {self.ctx.settings.max_body_bytes} bytes")(
                scope, receive, send)
            return
        message, refusal = _check_body(body, self.ctx.settings.json_limits())
        if refusal is not None:
            await refusal(scope, receive, send)
            return
        unknown = unknown_method(message)
        if unknown is not None:
            await JSONResponse(unknown)(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        mcp_sid, gecko_sid = headers.get(MCP_SESSION_HEADER), headers.get(SESSION_HEADER.lower())
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        query_sid = (query.get("session") or [None])[0]
        named = [s.strip() for s in (mcp_sid, gecko_sid, query_sid) if s and s.strip()]
        if len(set(named)) > 1:
            await _jsonrpc_error(400, "Mcp-Session-Id, X-Session-ID and ?session= name different sessions; "
                                 "send one")(scope, receive, send)
            return
        session_id = named[0] if named else None
        if _is_initialize(message):
            if session_id is not None and await self.ctx.store.get(session_id) is None:
                await _jsonrpc_error(404, f"no live Gecko session {session_id!r} to bind to (never created, "
                                     "deleted or expired)")(scope, receive, send)
                return
            if session_id is None:
                mode = (query.get("mode") or ["simulate"])[0]
                if mode not in SESSION_MODES:
                    await _jsonrpc_error(400, f"?mode= must be one of {', '.join(SESSION_MODES)}")(scope, receive, send)
                    return
                labels = {"transport": "mcp", **({"toolkit": toolkit} if toolkit else {})}
                session_id = (await create_session(self.ctx.store, {"labels": labels, "mode": mode}, {})).id
            send = _with_headers(send, {MCP_SESSION_HEADER: session_id}, only_success=True)
        else:
            direct = direct_request(message) if headers_accepted(scope["headers"]) else None
            if direct is not None:
                await self._answer_directly(direct, toolkit, session_id, scope, receive, send)
                return
        scope = {**scope, SCOPE_KEY: (toolkit, session_id)}
        await self.manager.handle_request(scope, _replay(body, receive), send)

    async def _read_body(self, receive: Receive) -> bytes | None:
        limit = self.ctx.settings.max_body_bytes
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                break
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > limit:
                return None
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        return b"".join(chunks)


def _replay(body: bytes, receive: Receive) -> Receive:
    """The body read once already, then the client's own messages (a disconnect, in time)."""
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return replay


def _with_headers(send: Send, extra: dict[str, str], only_success: bool = False) -> Send:
    async def wrapped(message: Message) -> None:
        if message["type"] == "http.response.start" and (not only_success or message["status"] < 400):
            headers = list(message.get("headers", []))
            headers += [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in extra.items()]
            message = {**message, "headers": headers}
        await send(message)

    return wrapped


def mcp_routes(endpoint: McpHttpEndpoint) -> list[Route]:
    """`/mcp` and `/mcp/{toolkit}`, both served by `endpoint`."""
    return [Route("/mcp", endpoint), Route("/mcp/{toolkit}", endpoint)]
