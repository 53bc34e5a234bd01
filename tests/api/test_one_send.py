"""Each response leaves in one write (`gecko.serving.OneSendWriter`), through uvicorn's own HTTP protocol."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from uvicorn.server import ServerState

from gecko.serving import _HOOKS, JOIN_BYTES, GeckoConfig, GeckoHttpProtocol, OneSendWriter


class FakeTransport:
    """The transport calls uvicorn's protocol makes, recorded."""

    def __init__(self) -> None:
        self.writes: list[bytes] = []
        self.closed = False

    def write(self, data: bytes) -> None:
        assert not self.closed, "write after close"
        self.writes.append(bytes(data))

    def close(self) -> None:
        self.closed = True

    def is_closing(self) -> bool:
        return self.closed

    def get_extra_info(self, name: str, default: Any = None) -> Any:
        return {"sockname": ("127.0.0.1", 8000), "peername": ("127.0.0.1", 5000)}.get(name, default)

    def pause_reading(self) -> None: ...

    def resume_reading(self) -> None: ...


async def _steps(count: int = 3) -> None:
    for _ in range(count):
        await asyncio.sleep(0)


async def test_two_writes_in_one_step_leave_as_one() -> None:
    transport = FakeTransport()
    writer = OneSendWriter(transport, asyncio.get_running_loop())
    writer.write(b"HTTP/1.1 200 OK\r\n\r\n")
    writer.write(b"body")
    assert transport.writes == [b"HTTP/1.1 200 OK\r\n\r\nbody"]
    await _steps()
    assert transport.writes == [b"HTTP/1.1 200 OK\r\n\r\nbody"]


async def test_a_lone_write_leaves_when_the_step_ends() -> None:
    transport = FakeTransport()
    writer = OneSendWriter(transport, asyncio.get_running_loop())
    writer.write(b"head")
    assert transport.writes == []
    await _steps()
    assert transport.writes == [b"head"]


async def test_close_sends_what_is_held_first_and_a_closing_transport_drops_it() -> None:
    loop = asyncio.get_running_loop()
    transport = FakeTransport()
    writer = OneSendWriter(transport, loop)
    writer.write(b"head")
    writer.close()
    assert transport.writes == [b"head"] and transport.closed
    await _steps()  # the scheduled flush finds nothing left
    assert transport.writes == [b"head"]

    lost = FakeTransport()
    writer = OneSendWriter(lost, loop)
    writer.write(b"head")
    lost.closed = True  # the peer went away before the step ended
    await _steps()
    assert lost.writes == []


async def test_a_held_buffer_is_what_it_was_when_written() -> None:
    transport = FakeTransport()
    writer = OneSendWriter(transport, asyncio.get_running_loop())
    buffer = bytearray(b"first chunk")
    writer.write(buffer)
    buffer[:] = b"reused"  # a writer may fill its buffer again once `write` returned
    await _steps()
    assert transport.writes == [b"first chunk"]


async def test_a_large_body_is_not_copied_onto_the_head() -> None:
    transport = FakeTransport()
    writer = OneSendWriter(transport, asyncio.get_running_loop())
    body = b"x" * (JOIN_BYTES + 1)
    writer.write(b"head")
    writer.write(body)
    assert transport.writes == [b"head", body]


async def test_everything_else_is_the_transport_s_own() -> None:
    transport = FakeTransport()
    writer = OneSendWriter(transport, asyncio.get_running_loop())
    assert writer.get_extra_info("peername") == ("127.0.0.1", 5000)
    assert writer.is_closing() is False


async def _app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    assert scope["type"] == "http"
    await receive()
    body = b'{"ok":true}'
    await send({"type": "http.response.start", "status": 201,
                "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


async def _serve(request: bytes) -> FakeTransport:
    config = GeckoConfig(_app, http="gecko.serving:GeckoHttpProtocol", log_level="warning", lifespan="off")
    config.load()
    protocol = GeckoHttpProtocol(config, ServerState(), {}, _loop=asyncio.get_running_loop())
    transport = FakeTransport()
    protocol.connection_made(transport)
    protocol.data_received(request)
    await _steps(50)  # every answer, pipelined ones included, is sent within a few steps
    protocol.connection_lost(None)
    return transport


@pytest.mark.skipif(not _HOOKS, reason="uvicorn without httptools")
async def test_uvicorn_s_protocol_sends_a_response_in_one_write() -> None:
    transport = await _serve(b"POST /x HTTP/1.1\r\nhost: a\r\ncontent-length: 2\r\n\r\n{}")
    assert len(transport.writes) == 1, transport.writes  # uvicorn alone writes the head and the body apart
    head, body = transport.writes[0].split(b"\r\n\r\n", 1)
    assert head.startswith(b"HTTP/1.1 201 ") and body == b'{"ok":true}'


@pytest.mark.skipif(not _HOOKS, reason="uvicorn without httptools")
async def test_pipelined_requests_get_whole_answers_in_order() -> None:
    first = b"POST /x HTTP/1.1\r\nhost: a\r\ncontent-length: 2\r\n\r\n{}"
    second = b"HEAD /x HTTP/1.1\r\nhost: a\r\n\r\n"  # a head without a body: sent when the step ends
    transport = await _serve(first + second + first)
    answers = b"".join(transport.writes).split(b"HTTP/1.1 ")[1:]
    assert [a.split(b"\r\n\r\n", 1)[1] for a in answers] == [b'{"ok":true}', b"", b'{"ok":true}']
