"""A stdio MCP server (the official SDK's FastMCP) whose one tool answers after `seconds`: a hung upstream."""

from __future__ import annotations

import asyncio

from mcp.server.fastmcp import FastMCP

server = FastMCP("slow")


@server.tool()
async def wait(seconds: float) -> str:
    """Answer after `seconds`."""
    await asyncio.sleep(seconds)
    return "done"


if __name__ == "__main__":
    server.run("stdio")
