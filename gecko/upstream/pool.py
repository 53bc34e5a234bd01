"""Which calls go to a real upstream, and the upstream connections of one worker (opened on first use).

Session modes (`config.mode`):

| mode          | reads of a toolkit with an upstream | writes               | toolkits without one |
|---------------|-------------------------------------|----------------------|----------------------|
| `simulate`    | simulated                           | simulated            | simulated            |
| `hybrid`      | real (recorded as observations)     | simulated            | simulated            |
| `passthrough` | real (recorded as observations)     | real (recorded as real effects) | refused (409) |

An upstream is a command Gecko starts or a service it calls, so it runs only for the toolkits the operator named
at start-up (`--allow-upstream NAME[,…]`, `*` for all): a call that would reach any other toolkit's upstream is
refused (409, `UpstreamNotAllowed`), whatever the document declares and the session's mode asks.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Literal

from gecko.toolkits.model import Operation
from gecko.toolkits.registry import ToolkitRegistry
from gecko.upstream.errors import NoUpstream, UpstreamNotAllowed
from gecko.upstream.http_client import RestUpstream
from gecko.upstream.mcp_client import McpUpstream
from gecko.upstream.result import UpstreamResult
from gecko.upstream.spec import HttpUpstream

log = logging.getLogger(__name__)
SessionMode = Literal["simulate", "hybrid", "passthrough"]
SESSION_MODES: tuple[SessionMode, ...] = ("simulate", "hybrid", "passthrough")


class UpstreamPool:
    """The upstreams of a worker's toolkits; each connects on its first call and closes at shutdown."""

    def __init__(self, registry: ToolkitRegistry, timeout: float, allowed: frozenset[str] = frozenset()) -> None:
        self.registry = registry
        self.timeout = timeout
        self.allowed = allowed
        """Toolkits whose upstream may run (`--allow-upstream`); `*` allows every toolkit's."""
        self._clients: dict[str, McpUpstream | RestUpstream] = {}

    def goes_upstream(self, operation: Operation, mode: str) -> bool:
        """Whether a call in a session of `mode` runs on the real upstream.

        Raises:
            NoUpstream: passthrough on a toolkit that declares no upstream.
            UpstreamNotAllowed: the call would run an upstream the operator did not allow.
        """
        if mode == "simulate":
            return False
        toolkit = self.registry.toolkit(operation.toolkit)
        if toolkit is None or toolkit.upstream is None:
            if mode == "passthrough":
                raise NoUpstream(f"toolkit {operation.toolkit!r} declares no x-gecko-upstream, so a passthrough "
                                 "session cannot call it")
            return False
        if not (mode == "passthrough" or operation.access == "read"):
            return False
        if "*" not in self.allowed and toolkit.name not in self.allowed:
            raise UpstreamNotAllowed(
                f"toolkit {toolkit.name!r} declares an x-gecko-upstream, but this server runs no upstream the "
                f"operator did not allow: a {mode} session cannot call it (the operator starts the server with "
                f"--allow-upstream {toolkit.name} to allow it; a simulate session works as it is)")
        return True

    async def call(self, operation: Operation, arguments: dict[str, Any]) -> UpstreamResult:
        """Run the call on the toolkit's upstream.

        Raises:
            UpstreamError: the upstream could not answer.
        """
        client = self._client(operation.toolkit)
        if isinstance(client, RestUpstream):
            return await client.call_operation(operation, arguments)
        return await client.call(operation.original_name, arguments)

    def _client(self, toolkit_name: str) -> McpUpstream | RestUpstream:
        client = self._clients.get(toolkit_name)
        if client is None:
            toolkit = self.registry.toolkit(toolkit_name)
            assert toolkit is not None and toolkit.upstream is not None, "checked by goes_upstream"
            spec = toolkit.upstream
            client = RestUpstream(spec, self.timeout) if isinstance(spec, HttpUpstream) else McpUpstream(
                spec, self.timeout)
            self._clients[toolkit_name] = client
        return client

    async def aclose(self) -> None:
        """Close every upstream that was opened."""
        clients, self._clients = list(self._clients.values()), {}
        results = await asyncio.gather(*(c.aclose() for c in clients), return_exceptions=True)
        for result in results:
            if isinstance(result, BaseException):
                log.warning("closing an upstream failed: %r", result)
