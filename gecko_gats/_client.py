"""The synchronous client of a Gecko server, and a session handle shared by the client and the simulator.

`SyncGeckoClient` runs the async `GeckoClient` (one connection pool, the same retries and errors) on a private loop
thread; `GeckoSession` is what `SyncGeckoClient.session()`, `Simulator.session()` and the `gecko_session` fixture
return: `call(tool, arguments)` gives the `ToolResponse` the async client would.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import httpx

from gecko_gats._loop import LoopThread
from inference.gecko.client import GeckoClient, ToolResponse
from inference.gecko.models import HealthInfo, SessionInfo, StateReply


def split_tool(tool: str) -> tuple[str, str]:
    """`toolkit/operationId` → (toolkit, operationId).

    Raises:
        ValueError: Not of that form.
    """
    toolkit, slash, operation = tool.partition("/")
    if not slash or not toolkit or not operation or "/" in operation:
        raise ValueError(f"name a tool as 'toolkit/operationId' (e.g. 'orders/get_product'), not {tool!r}")
    return toolkit, operation


class SyncGeckoClient:
    """Synchronous client of one Gecko server (the async one is `GeckoClient`).

    Args:
        base_url: e.g. `http://127.0.0.1:8000`.
        api_key: sent as `Authorization: Bearer …` to a Gecko that requires one.
        timeout_s: per-request timeout.
        transport: an httpx transport (the simulator passes the app's own, in process); default: HTTP.
    """

    def __init__(self, base_url: str, *, api_key: str | None = None, timeout_s: float = 120.0,
                 transport: httpx.AsyncBaseTransport | None = None, _loop: LoopThread | None = None) -> None:
        self._loop = _loop or LoopThread("gecko-client")
        self.base_url = base_url.rstrip("/")

        async def make() -> GeckoClient:  # on the loop: the connection pool belongs to it
            return GeckoClient(self.base_url, api_key=api_key, timeout_s=timeout_s, transport=transport)

        self.aio: GeckoClient = self._loop.run(make())
        """The async client behind this one (await its methods only through `arun`)."""

    def close(self) -> None:
        """Close the connection pool and the loop thread (idempotent)."""
        if not self._loop.loop.is_closed():
            self._loop.run(self.aio.aclose())
            self._loop.close()

    def __enter__(self) -> SyncGeckoClient:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def health(self) -> HealthInfo:
        """`GET /health`."""
        return self._loop.run(self.aio.health())

    def toolkits(self) -> dict[str, Any]:
        """`GET /toolkits` with every tool."""
        return self._loop.run(self.aio.toolkits())

    def metrics(self) -> str:
        """`GET /metrics` (Prometheus text)."""
        return self._loop.run(self.aio.metrics())

    def session(self, config: Mapping[str, Any] | None = None, state: Mapping[str, Any] | None = None) -> GeckoSession:
        """A new session (`POST /sessions` with `config` and an initial `state`)."""
        info: SessionInfo = self._loop.run(self.aio.create_session(config, state))
        return GeckoSession(self, info.session_id)

    def call_tool(self, session_id: str, tool: str, arguments: Mapping[str, Any] | None = None, *,
                  message: str | None = None) -> ToolResponse:
        """Call `tool` (`toolkit/operationId`) in a session: 200, 422 with every violation, or another refusal."""
        toolkit, operation = split_tool(tool)
        return self._loop.run(self.aio.call_tool(session_id, toolkit, operation, arguments or {}, message))

    async def acall_tool(self, session_id: str, tool: str, arguments: Mapping[str, Any] | None = None, *,
                         message: str | None = None) -> ToolResponse:
        """`call_tool` from async code (the caller's loop is not blocked)."""
        toolkit, operation = split_tool(tool)
        return await self._loop.run_async(self.aio.call_tool(session_id, toolkit, operation, arguments or {},
                                                             message))

    def state(self, session_id: str) -> StateReply:
        """The session's current state and version."""
        return self._loop.run(self.aio.session_state(session_id))

    def history(self, session_id: str) -> list[dict[str, Any]]:
        """Every history entry of the session (one per call: request, validation, response, timings)."""
        return self._loop.run(self.aio.full_history(session_id))

    def delete_session(self, session_id: str) -> bool:
        """Delete a session; False if it was not there."""
        return self._loop.run(self.aio.delete_session(session_id))


class GeckoSession:
    """One session: `call(tool, arguments)` → `ToolResponse`; a context manager that deletes it at the end."""

    def __init__(self, client: SyncGeckoClient, session_id: str) -> None:
        self.client = client
        self.id = session_id

    def call(self, tool: str, arguments: Mapping[str, Any] | None = None, *,
             message: str | None = None) -> ToolResponse:
        """Call `tool` (`toolkit/operationId`) with `arguments` in this session."""
        return self.client.call_tool(self.id, tool, arguments, message=message)

    async def acall(self, tool: str, arguments: Mapping[str, Any] | None = None, *,
                    message: str | None = None) -> ToolResponse:
        """`call` from async code."""
        return await self.client.acall_tool(self.id, tool, arguments, message=message)

    def state(self) -> dict[str, Any]:
        """The session's current state."""
        return dict(self.client.state(self.id).state)

    def history(self) -> list[dict[str, Any]]:
        """The session's history entries, oldest first."""
        return self.client.history(self.id)

    def delete(self) -> None:
        """Delete the session (a no-op if it is gone)."""
        self.client.delete_session(self.id)

    def __enter__(self) -> GeckoSession:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.delete()
