"""The Gecko client's connection layer: `utils.aiohttp_pool.AiohttpCore` under `httpx` (see there for why)."""

from __future__ import annotations

import httpx

from utils.aiohttp_pool import AiohttpCore


class AiohttpTransport(httpx.AsyncBaseTransport):
    """httpx transport over one lazily created `aiohttp.ClientSession`.

    Args:
        max_connections: connection limit (per host and in total).
    """

    def __init__(self, max_connections: int = 64) -> None:
        self._core = AiohttpCore(max_connections)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        return await self._core.handle(httpx, request)

    async def aclose(self) -> None:
        await self._core.aclose()
