"""The Gecko client's default aiohttp transport over a real socket: what counts as "never sent".

A server that reads the request and then drops the connection may have executed it: a tool call must
not be repeated, while an idempotent read is retried. A refused connection was never sent: retried.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from inference.gecko import GeckoClient, GeckoUnavailableError
from utils.procs import free_port


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
