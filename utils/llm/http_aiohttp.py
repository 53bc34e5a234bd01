"""An aiohttp connection layer under the openai SDK.

The SDK's default HTTP stack (httpx2/httpcore2) spends about 3 ms of CPU per request once a few hundred
connections are open (its pool scans every connection for each request). Gecko makes hundreds of
concurrent LLM calls per worker, so `OpenAITransport` plugs this adapter in as the SDK's
`http_client` transport when aiohttp is installed: the SDK still builds requests, authenticates and
raises its own error classes; only the sockets change. Exceptions are mapped to httpx2's, which the
SDK turns into `APITimeoutError` / `APIConnectionError`.
"""

from __future__ import annotations

import httpx2

from utils.aiohttp_pool import LazyAiohttpSession

_DROP = frozenset({"content-encoding", "content-length", "transfer-encoding"})
"""aiohttp has already decoded and de-chunked the body, so these no longer describe it."""


class AiohttpTransport(httpx2.AsyncBaseTransport):
    """httpx2 transport backed by one `aiohttp.ClientSession` (created in the running loop).

    Args:
        max_connections: connection limit of the session (per host and in total).
    """

    def __init__(self, max_connections: int = 256) -> None:
        self._pool = LazyAiohttpSession(max_connections)

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        import aiohttp

        timeouts = request.extensions.get("timeout") or {}
        timeout = aiohttp.ClientTimeout(total=None, connect=timeouts.get("connect"),
                                        sock_read=timeouts.get("read"))
        body = await request.aread()
        headers = [(k, v) for k, v in request.headers.multi_items() if k.lower() != "content-length"]
        try:
            async with self._pool.get().request(
                request.method, str(request.url), headers=headers, data=body or None, timeout=timeout,
                allow_redirects=False,
            ) as response:
                content = await response.read()
                out_headers = [(k, v) for k, v in response.headers.items() if k.lower() not in _DROP]
                return httpx2.Response(response.status, headers=out_headers, content=content, request=request)
        except (TimeoutError, aiohttp.ServerTimeoutError) as exc:
            raise httpx2.ReadTimeout(f"timed out: {exc}", request=request) from exc
        except aiohttp.ClientConnectorError as exc:
            raise httpx2.ConnectError(str(exc), request=request) from exc
        except aiohttp.ClientError as exc:
            raise httpx2.ReadError(f"{type(exc).__name__}: {exc}", request=request) from exc

    async def aclose(self) -> None:
        await self._pool.aclose()

