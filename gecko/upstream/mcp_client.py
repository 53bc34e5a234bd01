"""A long-lived connection to a real MCP server (official SDK client), shared by a worker's calls.

The SDK's transports are async context managers that must be entered and left by one task, so one owner
task holds the connection open; calls from any request task go through the shared `ClientSession`, which
multiplexes them. A connection that breaks is dropped and re-opened on the next call.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from contextlib import AbstractAsyncContextManager
from datetime import timedelta
from typing import Any

import httpx
from mcp import ClientSession, McpError, StdioServerParameters, types
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamablehttp_client

from gecko.upstream.errors import UpstreamError, root_cause
from gecko.upstream.result import UpstreamResult, parse_text
from gecko.upstream.spec import McpHttpUpstream, McpStdioUpstream

log = logging.getLogger(__name__)


def _describe(spec: McpStdioUpstream | McpHttpUpstream) -> str:
    return spec.url if isinstance(spec, McpHttpUpstream) else " ".join([spec.command, *spec.args])


def _streams(spec: McpStdioUpstream | McpHttpUpstream) -> AbstractAsyncContextManager[tuple[Any, ...]]:
    if isinstance(spec, McpHttpUpstream):
        return streamablehttp_client(spec.url, headers=spec.headers or None)
    params = StdioServerParameters(command=spec.command, args=list(spec.args), env={**os.environ, **spec.env},
                                   cwd=spec.cwd)
    return stdio_client(params)


def to_result(reply: types.CallToolResult) -> UpstreamResult:
    """An MCP tool result as Gecko records and relays it."""
    blocks = [b.model_dump(mode="json", by_alias=True, exclude_none=True) for b in reply.content]
    texts = [b["text"] for b in blocks if b.get("type") == "text"]
    if reply.structuredContent is not None:
        body: Any = reply.structuredContent
    elif len(texts) == 1 and len(blocks) == 1:
        body = parse_text(texts[0])
    else:
        body = {"content": blocks}
    return UpstreamResult(body=body, is_error=bool(reply.isError), content=blocks, structured=reply.structuredContent)


class McpUpstream:
    """Calls tools on one real MCP server; connects on first use."""

    def __init__(self, spec: McpStdioUpstream | McpHttpUpstream, timeout: float) -> None:
        self.spec = spec
        self.timeout = timeout
        self._session: ClientSession | None = None
        self._owner: asyncio.Task[None] | None = None
        self._stop = asyncio.Event()
        self._lock = asyncio.Lock()

    async def call(self, name: str, arguments: dict[str, Any]) -> UpstreamResult:
        """Call tool `name`; the server's tool errors and JSON-RPC errors are results (`is_error`).

        Raises:
            UpstreamError: the server cannot be reached, dies, or does not answer within the timeout.
        """
        session = await self._connected()
        try:
            reply = await session.call_tool(name, arguments, read_timeout_seconds=timedelta(seconds=self.timeout))
        except McpError as exc:
            if exc.error.code == httpx.codes.REQUEST_TIMEOUT:  # what the SDK raises on read_timeout_seconds
                await self._drop()
                raise UpstreamError(f"{_describe(self.spec)}: no answer within {self.timeout:.0f}s") from None
            return UpstreamResult(body=exc.error.message, is_error=True,
                                  content=[{"type": "text", "text": exc.error.message}])
        except Exception as exc:  # noqa: BLE001 - a broken connection in any form: reconnect on the next call
            await self._drop()
            raise UpstreamError(f"{_describe(self.spec)}: {type(exc).__name__}: {exc}") from None
        return to_result(reply)

    async def _connected(self) -> ClientSession:
        async with self._lock:
            if self._session is not None and self._owner is not None and not self._owner.done():
                return self._session
            ready: asyncio.Future[ClientSession] = asyncio.get_running_loop().create_future()
            self._stop = asyncio.Event()
            self._owner = asyncio.create_task(self._hold(ready, self._stop))
            try:
                self._session = await asyncio.wait_for(asyncio.shield(ready), self.timeout)
            except TimeoutError:
                self._owner.cancel()
                raise UpstreamError(f"{_describe(self.spec)}: did not start within {self.timeout:.0f}s") from None
            return self._session

    async def _hold(self, ready: asyncio.Future[ClientSession], stop: asyncio.Event) -> None:
        try:
            async with _streams(self.spec) as streams, ClientSession(streams[0], streams[1]) as session:
                await session.initialize()
                ready.set_result(session)
                await stop.wait()
        except BaseException as exc:  # noqa: BLE001 - reported to the waiting caller, or logged
            if not ready.done():
                cause = root_cause(exc)
                ready.set_exception(UpstreamError(f"{_describe(self.spec)}: could not connect: "
                                                  f"{type(cause).__name__}: {cause}"))
            elif not isinstance(exc, asyncio.CancelledError):
                log.warning("upstream %s closed: %r", _describe(self.spec), exc)
            if isinstance(exc, (asyncio.CancelledError, KeyboardInterrupt)):
                raise
        finally:
            self._session = None

    async def _drop(self) -> None:
        async with self._lock:
            await self._close_owner()

    async def _close_owner(self) -> None:
        owner, self._owner, self._session = self._owner, None, None
        if owner is None or owner.done():
            return
        self._stop.set()
        try:
            await asyncio.wait_for(asyncio.shield(owner), 5)
        except (TimeoutError, Exception):  # noqa: BLE001 - a server that will not stop is cancelled
            owner.cancel()
            with contextlib.suppress(BaseException):
                await owner

    async def aclose(self) -> None:
        """Stop the server (stdio) or close the connection (HTTP)."""
        async with self._lock:
            await self._close_owner()

