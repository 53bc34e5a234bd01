"""uvicorn HTTP protocol with TCP_NODELAY on every accepted connection.

With several uvicorn workers, accepted keep-alive sockets can lose TCP_NODELAY (uvicorn issue #3149);
Nagle's algorithm then meets the client's delayed ACK and adds ~40 ms to sequential requests on one
connection. Setting the option per connection removes that stall. Used via `uvicorn.run(http=...)`.
"""

from __future__ import annotations

import asyncio
import socket

try:  # uvicorn[standard] ships httptools; fall back to the pure-Python h11 protocol otherwise
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol as _Base
except ImportError:  # pragma: no cover - depends on the environment
    # A different class with the same protocol interface, which is all this module uses.
    from uvicorn.protocols.http.h11_impl import H11Protocol as _Base  # type: ignore[assignment]


def set_nodelay(transport: asyncio.BaseTransport) -> None:
    """Turn on TCP_NODELAY for the transport's socket (no-op for non-TCP sockets)."""
    sock = transport.get_extra_info("socket")
    if sock is None or sock.family not in (socket.AF_INET, socket.AF_INET6):
        return
    try:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    except OSError:
        pass


class NoDelayHttpProtocol(_Base):
    """uvicorn's HTTP protocol, with TCP_NODELAY set as each connection is made."""

    # uvicorn's own connection_made narrows BaseProtocol's BaseTransport to Transport the same way.
    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        set_nodelay(transport)
        super().connection_made(transport)


HTTP_PROTOCOL = "gecko.serving:NoDelayHttpProtocol"
