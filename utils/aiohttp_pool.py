"""One lazily created `aiohttp.ClientSession` with a connection limit, shared by our aiohttp transports
(the Gecko client's `inference.gecko.http_aiohttp` and the LLM client's `utils.llm.transport_raw`).

Created on first use (inside the running event loop), re-created if it was closed, closed by `aclose`.
"""

from __future__ import annotations

from typing import Any


class LazyAiohttpSession:
    """Holds one `aiohttp.ClientSession`; `get()` creates it when missing or closed.

    Args:
        max_connections: connection limit of the session (per host and in total).
    """

    def __init__(self, max_connections: int) -> None:
        self._max_connections = max_connections
        self._session: Any = None

    def get(self) -> Any:
        """The open session (created now if needed)."""
        if self._session is None or self._session.closed:
            import aiohttp

            connector = aiohttp.TCPConnector(limit=self._max_connections, limit_per_host=self._max_connections)
            self._session = aiohttp.ClientSession(connector=connector)
        return self._session

    async def aclose(self) -> None:
        """Close the session, if one is open."""
        if self._session is not None:
            await self._session.close()
            self._session = None
