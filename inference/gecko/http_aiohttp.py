"""The Gecko client's connection layer: `utils.aiohttp_pool.AiohttpCore` under `httpx` (see there for why), and
the cheap path the client takes on it by default (`AiohttpTransport.send` → `Reply`): no httpx request or
response objects, whose URL parsing and header models cost more CPU per request than the sockets."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

import httpx

from utils.aiohttp_pool import AiohttpCore


class Reply:
    """A response read whole, without httpx's models: what `GeckoClient` reads of one."""

    __slots__ = ("content", "headers", "status_code")

    def __init__(self, status_code: int, headers: Mapping[str, str], content: bytes) -> None:
        self.status_code = status_code
        self.headers = headers
        """Case-insensitive (aiohttp's `CIMultiDictProxy`)."""
        self.content = content

    @property
    def is_success(self) -> bool:
        """A 2xx status."""
        return 200 <= self.status_code < 300

    @property
    def text(self) -> str:
        """The body as text (UTF-8; undecodable bytes replaced)."""
        return self.content.decode("utf-8", errors="replace")

    def json(self) -> Any:
        """The body as JSON.

        Raises:
            ValueError: the body is not JSON.
        """
        return json.loads(self.content)


class AiohttpTransport(httpx.AsyncBaseTransport):
    """httpx transport over one lazily created `aiohttp.ClientSession`, with a cheap path beside it (`send`).

    Args:
        max_connections: connection limit (per host and in total).
    """

    def __init__(self, max_connections: int = 64) -> None:
        self._core = AiohttpCore(max_connections)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        return await self._core.handle(httpx, request)

    async def send(self, method: str, url: str, headers: Mapping[str, str], body: bytes | None,
                   timeout_s: float) -> Reply:
        """Send one request on the same pool, without httpx's models (same failures as the transport:
        `httpx.ConnectError` never sent, `httpx.ReadTimeout`, `httpx.ReadError` maybe executed)."""
        status, headers_in, content = await self._core.send(httpx, method, url, headers, body, connect_s=timeout_s,
                                                            read_s=timeout_s)
        return Reply(status, headers_in, content)

    async def aclose(self) -> None:
        await self._core.aclose()
