"""Ask a real MCP server for its tools: start it over stdio with the official SDK client and run `tools/list`.

`python -m gecko.convert mcp --server 'CMD ARGS…'` turns the answer into a toolkit (a simulated twin of the
server) that records the command as its upstream (`info.x-gecko-upstream`), so the twin can also run in
hybrid mode: real reads through the server, simulated writes.
"""

from __future__ import annotations

import asyncio
import os
import re
import shlex
import tempfile
from dataclasses import dataclass
from typing import Any, TextIO

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from gecko.convert.model import ConversionError
from gecko.upstream.errors import root_cause

MAX_PAGES = 100
QUIET_COLOURS = {"NO_COLOR": "1", "FORCE_COLOR": "0"}
"""Asks a server for plain text (its stderr is read back into error messages)."""
_ANSI = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07]*\x07")


@dataclass(frozen=True)
class ServerTools:
    """What a server said about itself."""

    name: str
    """`serverInfo.name` from `initialize`."""
    version: str
    instructions: str
    tools: list[dict[str, Any]]
    """The `tools/list` entries (every page), as JSON."""


def parse_command(command: str) -> list[str]:
    """`'npx -y pkg /dir'` → argv (POSIX shell quoting).

    Raises:
        ConversionError: empty or unbalanced quotes.
    """
    try:
        argv = shlex.split(command)
    except ValueError as exc:
        raise ConversionError(f"--server {command!r}: {exc}") from None
    if not argv:
        raise ConversionError("--server needs a command, e.g. 'npx -y @modelcontextprotocol/server-memory'")
    return argv


async def list_server_tools(argv: list[str], *, timeout: float = 60.0, env: dict[str, str] | None = None,
                            cwd: str | None = None) -> ServerTools:
    """Start `argv` as an MCP server on stdio, initialize, page through `tools/list`, stop it. The server's stderr
    (banners, colours, progress) is kept out of ours; when the server fails, its last lines (colour codes removed)
    are in the message.

    Raises:
        ConversionError: the server did not start, did not answer in `timeout` seconds, or failed.
    """
    params = StdioServerParameters(command=argv[0], args=argv[1:], env={**os.environ, **QUIET_COLOURS, **(env or {})},
                                   cwd=cwd)
    with tempfile.TemporaryFile("w+", encoding="utf-8", errors="replace") as errlog:
        try:
            return await _list(params, argv, timeout, errlog)
        except ConversionError as exc:
            tail = _tail(errlog)
            raise ConversionError(f"{exc}; its stderr ended with: {tail}" if tail else str(exc)) from None


def _tail(errlog: TextIO, lines: int = 5) -> str:
    """The last lines a server wrote to stderr, without terminal control sequences, on one line."""
    errlog.flush()
    errlog.seek(0)
    kept = [line.strip() for line in _ANSI.sub("", errlog.read()).splitlines() if line.strip()][-lines:]
    return " | ".join(kept)[-1000:]


async def _list(params: StdioServerParameters, argv: list[str], timeout: float, errlog: TextIO) -> ServerTools:
    async def run() -> ServerTools:
        async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
            init = await session.initialize()
            tools: list[dict[str, Any]] = []
            cursor: str | None = None
            for _ in range(MAX_PAGES):
                page = await session.list_tools(cursor=cursor)
                tools += [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in page.tools]
                cursor = page.nextCursor
                if not cursor:
                    break
            return ServerTools(init.serverInfo.name, init.serverInfo.version, init.instructions or "", tools)

    try:
        return await asyncio.wait_for(run(), timeout)
    except TimeoutError:
        raise ConversionError(f"MCP server {shlex.join(argv)!r} did not answer within {timeout:.0f}s") from None
    except ConversionError:
        raise
    except Exception as exc:  # noqa: BLE001 - any start-up or protocol failure becomes one readable message
        cause = root_cause(exc)
        raise ConversionError(f"MCP server {shlex.join(argv)!r} failed: {type(cause).__name__}: {cause}") from None


def upstream_of(argv: list[str]) -> dict[str, Any]:
    """The `x-gecko-upstream` that starts the same server."""
    return {"type": "mcp-stdio", "command": argv[0], "args": argv[1:]}
