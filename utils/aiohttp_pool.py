"""aiohttp sockets under our HTTP clients: one lazily created session, and one httpx-style transport core.

`LazyAiohttpSession` holds one `aiohttp.ClientSession` with a connection limit: created on first use
(inside the running event loop), re-created if it was closed, closed by `aclose`. The raw LLM transport
(`utils.llm.transport_raw`) uses it directly.

`AiohttpCore` serves the two httpx-style clients: the Gecko client's `httpx` (`inference.gecko.http_aiohttp`)
and the openai SDK's `httpx2` (`utils.llm.http_aiohttp`). httpx/httpx2 still build requests and responses and
keep their exception classes; only the sockets change, because their connection pools (httpcore) scan every
connection on each request, about 3 ms of CPU per request once dozens to hundreds are open. Failures map to
the client library's classes by what they mean: a connect that failed is `ConnectError` (the request was never
sent, so even a tool call may be retried), a timeout is `ReadTimeout`, anything later is `ReadError` (the
request may have been executed). The ready-made adapters (the SDK's `DefaultAioHttpClient`, httpx-aiohttp)
map every `aiohttp.ClientConnectionError` to `ConnectTimeout`: a refused connection reads as a timeout, and a
connection dropped after the request was sent as "never sent", which would make the Gecko client repeat a
tool call (tests/inference/test_gecko_http_aiohttp.py, tests/utils/llm/test_llm_http.py).
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

import aiohttp

KEEPALIVE_S = 2.0
"""Seconds an idle pooled connection is kept: under uvicorn's default keep-alive timeout (5 s), so the client never
reuses a connection at the moment the server closes it. With aiohttp's default (15 s) a request sent after a pause
of about 5 s could meet the server's close and fail as a dropped connection, which a tool call or `POST /sessions`
must not retry (it made `tests/bfcl/test_bfcl_agent_backend_camel.py` fail under load: CAMEL's import is such a
pause)."""
_DROP = frozenset({"content-encoding", "content-length", "transfer-encoding"})
"""aiohttp has already decoded and de-chunked the body, so these no longer describe it."""


class LazyAiohttpSession:
    """Holds one `aiohttp.ClientSession`; `get()` creates it when missing or closed.

    Args:
        max_connections: connection limit of the session (per host and in total).
    """

    def __init__(self, max_connections: int) -> None:
        self._max_connections = max_connections
        self._session: aiohttp.ClientSession | None = None

    def get(self) -> aiohttp.ClientSession:
        """The open session (created now if needed)."""
        if self._session is None or self._session.closed:
            connector = aiohttp.TCPConnector(limit=self._max_connections, limit_per_host=self._max_connections,
                                             keepalive_timeout=KEEPALIVE_S)
            self._session = aiohttp.ClientSession(connector=connector)
        return self._session

    async def aclose(self) -> None:
        """Close the session, if one is open."""
        if self._session is not None:
            await self._session.close()
            self._session = None


class AiohttpCore:
    """`handle_async_request` of an httpx-style transport, for the library passed in (`httpx` or `httpx2`).

    Args:
        max_connections: connection limit of the session (per host and in total).
    """

    def __init__(self, max_connections: int) -> None:
        self._pool = LazyAiohttpSession(max_connections)

    async def handle(self, lib: ModuleType, request: Any) -> Any:
        """Send `request` (a `lib.Request`) and return a `lib.Response` with the whole body read.

        Raises:
            lib.ConnectError: the connection could not be made (the request was never sent).
            lib.ReadTimeout: the connect or read timeout of the request passed.
            lib.ReadError: any other failure (the server may have received the request).
        """
        timeouts = request.extensions.get("timeout") or {}
        body = await request.aread()
        headers = [(k, v) for k, v in request.headers.multi_items() if k.lower() != "content-length"]
        status, raw_headers, content = await self.send(
            lib, request.method, str(request.url), headers, body, connect_s=timeouts.get("connect"),
            read_s=timeouts.get("read"), request=request)
        out_headers = [(k, v) for k, v in raw_headers.items() if k.lower() not in _DROP]
        return lib.Response(status, headers=out_headers, content=content, request=request)

    async def send(self, lib: ModuleType, method: str, url: str, headers: Any, body: bytes | None, *,
                   connect_s: float | None, read_s: float | None, request: Any = None) -> tuple[int, Any, bytes]:
        """Send one request as given (no httpx request or response objects: the cheap path); returns (status,
        the response headers (case-insensitive `get`), the whole body). Failures raise `lib`'s classes as
        `handle` does (`request` is attached to them when given)."""
        timeout = aiohttp.ClientTimeout(total=None, connect=connect_s, sock_read=read_s)
        try:
            async with self._pool.get().request(
                method, url, headers=headers, data=body or None, timeout=timeout, allow_redirects=False,
            ) as response:
                return response.status, response.headers, await response.read()
        except (TimeoutError, aiohttp.ServerTimeoutError) as exc:
            raise lib.ReadTimeout(f"timed out: {exc}", request=request) from exc
        except aiohttp.ClientConnectorError as exc:
            raise lib.ConnectError(str(exc), request=request) from exc
        except aiohttp.ClientError as exc:
            raise lib.ReadError(f"{type(exc).__name__}: {exc}", request=request) from exc

    async def aclose(self) -> None:
        """Close the session, if one is open."""
        await self._pool.aclose()
