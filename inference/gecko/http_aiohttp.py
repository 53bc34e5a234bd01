"""An aiohttp connection layer under the Gecko client's `httpx.AsyncClient`.

httpcore's pool costs about 3 ms of CPU per request at a few dozen open connections (it scans the pool on
every request), which on a 2-core machine takes CPU from Gecko itself during a sweep. `GeckoClient` plugs
this transport in: httpx still builds requests and responses and keeps its exception classes; only the
sockets change. Why not httpx-aiohttp's transport: it maps every `aiohttp.ClientConnectionError`, a
server that dropped the connection after the request was sent included, to `httpx.ConnectTimeout`,
which `GeckoClient` must read as "never sent" and retry; here only a failed connect
(`ClientConnectorError`) is a `ConnectError`, anything later a `ReadError`, so a tool call never runs twice.
"""

from __future__ import annotations

import httpx

from utils.aiohttp_pool import LazyAiohttpSession

_DROP = frozenset({"content-encoding", "content-length", "transfer-encoding"})
"""aiohttp has already decoded and de-chunked the body, so these no longer describe it."""



class AiohttpTransport(httpx.AsyncBaseTransport):
    """httpx transport backed by one `aiohttp.ClientSession` (created lazily in the running loop).

    Args:
        max_connections: connection limit (per host and in total).
    """

    def __init__(self, max_connections: int = 64) -> None:
        self._pool = LazyAiohttpSession(max_connections)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        import aiohttp

        timeouts = request.extensions.get("timeout") or {}
        timeout = aiohttp.ClientTimeout(total=None, connect=timeouts.get("connect"), sock_read=timeouts.get("read"))
        body = await request.aread()
        headers = [(k, v) for k, v in request.headers.multi_items() if k.lower() != "content-length"]
        try:
            async with self._pool.get().request(
                request.method, str(request.url), headers=headers, data=body or None, timeout=timeout,
                allow_redirects=False,
            ) as response:
                content = await response.read()
                out_headers = [(k, v) for k, v in response.headers.items() if k.lower() not in _DROP]
                return httpx.Response(response.status, headers=out_headers, content=content, request=request)
        except (TimeoutError, aiohttp.ServerTimeoutError) as exc:
            raise httpx.ReadTimeout(f"timed out: {exc}", request=request) from exc
        except aiohttp.ClientConnectorError as exc:
            raise httpx.ConnectError(str(exc), request=request) from exc
        except aiohttp.ClientError as exc:
            raise httpx.ReadError(f"{type(exc).__name__}: {exc}", request=request) from exc

    async def aclose(self) -> None:
        await self._pool.aclose()
