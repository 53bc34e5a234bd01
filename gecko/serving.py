"""uvicorn's HTTP protocol with TCP_NODELAY on every connection, a deadline for reading each request, and each
response sent in one write.

- TCP_NODELAY: with several uvicorn workers, accepted keep-alive sockets can lose TCP_NODELAY (uvicorn
  issue #3149); Nagle's algorithm then meets the client's delayed ACK and adds ~40 ms to sequential
  requests on one connection. Setting the option per connection removes that stall.
- Request read deadline (slowloris): uvicorn waits for a request's headers and body as long as the client
  likes, so a client that declares a Content-Length and never sends it holds a connection (and a slot of
  the app) forever. Here a client has `GeckoConfig.request_read_timeout` seconds from the first byte of a
  request (or from connecting) to its last byte; then it gets 408 and the connection is closed. The time
  the app takes to answer is not counted.
- One write per response: uvicorn writes a response's head and its body separately (`OneSendWriter`).

Used via `uvicorn.Config(http=HTTP_PROTOCOL)`; the deadline needs the httptools parser (uvicorn[standard]).
"""

from __future__ import annotations

import asyncio
import json
import socket
from typing import Any

import uvicorn

try:  # uvicorn[standard] ships httptools; fall back to the pure-Python h11 protocol otherwise
    from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol as _Base

    _HOOKS = True
except ImportError:  # pragma: no cover - depends on the environment
    # A different class with the same protocol interface, which is all this module uses.
    from uvicorn.protocols.http.h11_impl import H11Protocol as _Base  # type: ignore[assignment]

    _HOOKS = False

HTTP_PROTOCOL = "gecko.serving:GeckoHttpProtocol"
JOIN_BYTES = 65536
"""Largest body `OneSendWriter` joins to the head it holds."""
_TIMEOUT_BODY = json.dumps({
    "type": "urn:gecko:problem:request-timeout", "title": "Request timeout", "status": 408,
    "detail": "the request was not received in time (see --request-read-timeout); the connection is closed",
}).encode()
_TIMEOUT_RESPONSE = (b"HTTP/1.1 408 Request Timeout\r\ncontent-type: application/problem+json\r\n"
                     b"connection: close\r\ncontent-length: " + str(len(_TIMEOUT_BODY)).encode() + b"\r\n\r\n"
                     + _TIMEOUT_BODY)


class GeckoConfig(uvicorn.Config):
    """uvicorn's configuration plus the request read deadline (pickled to every worker with the rest)."""

    def __init__(self, app: Any, *, request_read_timeout: float | None = None, **kwargs: Any) -> None:
        super().__init__(app, **kwargs)
        self.request_read_timeout = request_read_timeout


def set_nodelay(transport: asyncio.BaseTransport) -> None:
    """Turn on TCP_NODELAY for the transport's socket (no-op for non-TCP sockets)."""
    sock = transport.get_extra_info("socket")
    if sock is None or sock.family not in (socket.AF_INET, socket.AF_INET6):
        return
    try:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    except OSError:
        pass


class OneSendWriter:
    """A connection's transport as uvicorn's protocol sees it: each write is held until the next write, a close, or
    the end of the event loop's current step, so a response's head and body leave in one send.

    uvicorn writes the status line and headers, then the body, with two `write` calls; under TCP_NODELAY each is a
    send of its own and a TCP segment of its own, for the server and for the client to handle. Writes keep their
    order: every write of the connection, the protocol's own included, goes through here. Everything but `write`
    and `close` is the transport's own.
    """

    __slots__ = ("_held", "_loop", "_transport")

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        self._transport = transport
        self._loop = loop
        self._held: bytes | None = None

    def write(self, data: bytes) -> None:
        held = self._held
        if held is None:
            self._held = data if type(data) is bytes else bytes(data)  # a buffer its writer may reuse: copied now
            self._loop.call_soon(self.flush)
        elif len(data) > JOIN_BYTES:  # a large body: not worth copying to save a send
            self._held = None
            self._transport.write(held)
            self._transport.write(data)
        else:
            self._held = None
            self._transport.write(b"".join((held, data)))

    def flush(self) -> None:
        """Send the held write, if any (dropped when the connection is closing, as the transport would drop it)."""
        held, self._held = self._held, None
        if held is not None and not self._transport.is_closing():
            self._transport.write(held)

    def close(self) -> None:
        self.flush()
        self._transport.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


class GeckoHttpProtocol(_Base):
    """uvicorn's HTTP protocol, with TCP_NODELAY per connection, a read deadline per request, and each response sent
    in one write (`OneSendWriter`)."""

    def __init__(self, config: uvicorn.Config, *args: Any, **kwargs: Any) -> None:
        super().__init__(config, *args, **kwargs)
        timeout = getattr(config, "request_read_timeout", None)
        self._read_timeout: float | None = timeout if _HOOKS else None
        self._read_deadline: asyncio.TimerHandle | None = None

    # uvicorn's own connection_made narrows BaseProtocol's BaseTransport to Transport the same way.
    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        set_nodelay(transport)
        super().connection_made(transport)  # its flow control keeps the transport itself
        self.transport = OneSendWriter(transport, self.loop)  # type: ignore[assignment]
        self._arm_deadline()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm_deadline()
        super().connection_lost(exc)

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._arm_deadline()

    def on_message_complete(self) -> None:
        self._disarm_deadline()
        super().on_message_complete()

    def _arm_deadline(self) -> None:
        self._disarm_deadline()
        if self._read_timeout:
            self._read_deadline = self.loop.call_later(self._read_timeout, self._read_timed_out)

    def _disarm_deadline(self) -> None:
        if self._read_deadline is not None:
            self._read_deadline.cancel()
            self._read_deadline = None

    def _read_timed_out(self) -> None:
        self._read_deadline = None
        if self.transport.is_closing():
            return
        cycle = self.cycle
        if cycle is None or cycle.response_complete or not cycle.response_started:
            self.transport.write(_TIMEOUT_RESPONSE)
        self.transport.close()
