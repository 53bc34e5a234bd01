"""The LLM client's connection layer under the openai SDK: `utils.aiohttp_pool.AiohttpCore` under `httpx2`.

The SDK still builds requests, authenticates and raises its own error classes; the httpx2 exceptions raised
here become `APIConnectionError` / `APITimeoutError`. See `utils.aiohttp_pool` for why not the SDK's own
`DefaultAioHttpClient`.
"""

from __future__ import annotations

import httpx2

from utils.aiohttp_pool import AiohttpCore
from utils.llm.transport import DEFAULT_MAX_CONNECTIONS


class AiohttpTransport(httpx2.AsyncBaseTransport):
    """httpx2 transport over one lazily created `aiohttp.ClientSession`.

    Args:
        max_connections: connection limit of the session (per host and in total).
    """

    def __init__(self, max_connections: int = DEFAULT_MAX_CONNECTIONS) -> None:
        self._core = AiohttpCore(max_connections)

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        return await self._core.handle(httpx2, request)

    async def aclose(self) -> None:
        await self._core.aclose()
