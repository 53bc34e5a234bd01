"""The stdio transport of `gecko-mcp`: newline-delimited JSON-RPC, each line bounded and parsed by Gecko first.

Like the SDK's `stdio_server` it hands the server a pair of streams, but a line longer than the limit
(`--max-body-bytes`) is skipped as it arrives, never held whole (a 20 MB line was read whole), and a line that is
not JSON, nests deeper than Gecko stores (192) or names an unknown method is answered with a JSON-RPC error on
stdout (-32700, -32600, -32601; it used to be a log notification). The limits of a tool call's arguments
(`--max-json-depth`, …) are the binding's, as on HTTP: a call over them is an error result naming the limit.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import mcp.types as types
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

from gecko.mcp.jsonrpc import INVALID_REQUEST, PARSE_ERROR, error, unknown_method
from utils.jsonlimits import READABLE_DEPTH, JsonLimitExceeded, JsonLimits, JsonValueRejected, parse_json
from utils.jsonutil import dumps_compact

READ_CHUNK = 65536


async def bounded_lines(source: Any, limit: int) -> AsyncIterator[bytes | None]:
    """The lines of `source` (an async binary file with `read1`), without their newline; None for a line over
    `limit` bytes (its bytes are dropped as they arrive)."""
    pending = b""
    skipping = False
    while True:
        chunk = await source.read1(READ_CHUNK)
        if not chunk:
            break
        pending += chunk
        while True:
            end = pending.find(b"\n")
            if end < 0:
                break
            line, pending = pending[:end], pending[end + 1:]
            if skipping:
                skipping = False
                yield None
            elif len(line) > limit:
                yield None
            else:
                yield line
        if len(pending) > limit:
            pending, skipping = b"", True
    if pending.strip() and not skipping:
        yield pending


def _answer(line: bytes | None, limit: int) -> tuple[SessionMessage | None, dict[str, Any] | None]:
    """(the message for the server, or the error Gecko answers itself) of one line."""
    if line is None:
        return None, error(INVALID_REQUEST, f"message longer than {limit} bytes (--max-body-bytes); skipped")
    if not line.strip():
        return None, None
    try:  # only what a line of `limit` bytes can break: the arguments' own limits are the binding's
        parsed = parse_json(line, JsonLimits(READABLE_DEPTH, limit, limit, limit))
    except (JsonLimitExceeded, JsonValueRejected) as exc:
        return None, error(INVALID_REQUEST, f"message refused: {exc}")
    except (ValueError, UnicodeDecodeError) as exc:
        return None, error(PARSE_ERROR, f"Parse error: {str(exc)[:300]}")
    refusal = unknown_method(parsed)
    if refusal is not None:
        return None, refusal
    try:
        return SessionMessage(types.JSONRPCMessage.model_validate(parsed)), None
    except ValidationError as exc:
        request_id = parsed.get("id") if isinstance(parsed, dict) else None
        return None, error(INVALID_REQUEST, f"Invalid request: {str(exc).splitlines()[0][:300]}",
                           request_id if isinstance(request_id, (str, int)) else None)


@asynccontextmanager
async def bounded_stdio(max_line_bytes: int, stdin: Any = None, stdout: Any = None) -> AsyncIterator[
        tuple[MemoryObjectReceiveStream[SessionMessage | Exception], MemoryObjectSendStream[SessionMessage]]]:
    """(read stream, write stream) for `Server.run`, over this process's stdin and stdout (or the given binary
    async files)."""
    source = stdin or anyio.wrap_file(sys.stdin.buffer)
    sink = stdout or anyio.wrap_file(sys.stdout.buffer)
    to_server, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, from_server = anyio.create_memory_object_stream[SessionMessage](0)
    lines_out, lines = anyio.create_memory_object_stream[bytes](16)

    async def read() -> None:
        async with to_server, lines_out.clone() as answers:
            async for line in bounded_lines(source, max_line_bytes):
                message, refusal = _answer(line, max_line_bytes)
                if refusal is not None:
                    await answers.send(dumps_compact(refusal).encode())
                elif message is not None:
                    await to_server.send(message)

    async def forward() -> None:
        async with from_server, lines_out:
            async for message in from_server:
                await lines_out.send(message.message.model_dump_json(by_alias=True, exclude_none=True).encode())

    drained = anyio.Event()

    async def write() -> None:
        async with lines:
            async for line in lines:
                await sink.write(line + b"\n")
                await sink.flush()
        drained.set()

    async with anyio.create_task_group() as group:
        group.start_soon(read)
        group.start_soon(forward)
        group.start_soon(write)
        yield read_stream, write_stream
        await write_stream.aclose()  # the server is done: write what it answered, then stop reading
        with anyio.move_on_after(5):
            await drained.wait()
        group.cancel_scope.cancel()
