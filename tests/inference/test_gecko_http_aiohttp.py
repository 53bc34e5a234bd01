"""The Gecko client's default aiohttp transport over a real socket: what counts as "never sent".

A server that reads the request and then drops the connection may have executed it: a tool call must
not be repeated, while an idempotent read is retried. A refused connection was never sent: retried.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator

import pytest

from inference.gecko import GeckoClient, GeckoUnavailableError
from utils.procs import free_port

IDLE_BEYOND_SERVER_KEEPALIVE_S = 5.5
"""Longer than uvicorn's default keep-alive (5 s), which Gecko serves with."""


async def _no_wait(seconds: float) -> None:
    return None


@pytest.fixture
async def dropping_server() -> AsyncIterator[tuple[str, list[str]]]:
    """A loopback server that reads each request line and headers, then closes without answering."""
    requests: list[str] = []

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        requests.append(head.split(b"\r\n", 1)[0].decode())
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    async with server:
        yield f"http://127.0.0.1:{port}", requests


async def test_a_dropped_tool_call_is_not_repeated(dropping_server) -> None:
    url, requests = dropping_server
    async with GeckoClient(url, retries=2, sleep=_no_wait) as client:
        with pytest.raises(GeckoUnavailableError):
            await client.call_tool("s1", "notes", "create_note", {"title": "x"})
        assert requests == ["POST /notes/create_note HTTP/1.1"]
        with pytest.raises(GeckoUnavailableError):
            await client.health()
    health = requests[1:]  # 3 tries, each of which aiohttp itself may repeat once (an idempotent method)
    assert len(health) >= 3 and set(health) == {"GET /health HTTP/1.1"}


async def test_a_refused_connection_is_retried_for_any_request() -> None:
    attempts = 0

    async def counting_sleep(seconds: float) -> None:
        nonlocal attempts
        attempts += 1

    async with GeckoClient(f"http://127.0.0.1:{free_port()}", retries=2, sleep=counting_sleep) as client:
        with pytest.raises(GeckoUnavailableError, match="after 3 tries"):
            await client.call_tool("s1", "notes", "create_note", {"title": "x"})
    assert attempts == 2


async def test_the_default_path_sends_what_httpx_would() -> None:
    """The default (no httpx models) path: the API key, the query, the session header and the JSON body as httpx
    encodes it (compact, UTF-8), and the reply's status, headers (any case) and JSON read back."""
    seen: list[bytes] = []

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n")
                       if line.lower().startswith(b"content-length:")), 0)
        seen.append(head + await reader.readexactly(length))
        body = b'{"id":"n1"}'
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nX-Gecko-State-Version: 7\r\n"
                     b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    url = f"http://127.0.0.1:{server.sockets[0].getsockname()[1]}"
    async with server, GeckoClient(url + "/", api_key="k3y") as client:
        response = await client.call_tool("s1", "notes", "create_note", {"title": "Café", "n": 1})
        listing = await client.toolkits(tools=False, limit=5)
    assert response.ok and response.body == {"id": "n1"} and response.state_version == 7
    assert listing == {"id": "n1"}
    head, _, body = seen[0].partition(b"\r\n\r\n")
    lines = head.decode().split("\r\n")
    headers = {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
    assert lines[0] == "POST /notes/create_note HTTP/1.1"
    assert headers["authorization"] == "Bearer k3y" and headers["x-session-id"] == "s1"
    assert headers["content-type"] == "application/json"
    assert body == '{"title":"Café","n":1}'.encode()
    assert seen[1].split(b"\r\n", 1)[0] == b"GET /toolkits?tools=false&limit=5&offset=0 HTTP/1.1"


async def test_a_connection_gecko_closed_while_idle_is_not_reused(live_gecko: str) -> None:
    """uvicorn closes an idle keep-alive connection after 5 s. A client whose loop was blocked meanwhile (a slow
    synchronous import) has not seen the close yet; reusing the connection would fail the POST ("Can not write
    request body"), and a POST is never repeated. The pool drops idle connections sooner than the server does."""
    async with GeckoClient(live_gecko, retries=0) as client:
        await client.health()
        time.sleep(IDLE_BEYOND_SERVER_KEEPALIVE_S)  # noqa: ASYNC251 - blocks the loop on purpose
        assert (await client.create_session()).session_id
