"""A stdio MCP server (the official SDK's FastMCP) that greets on stderr with a coloured banner, as many published
servers do; with `--fail` it exits after the banner instead of serving."""

from __future__ import annotations

import sys

from mcp.server.fastmcp import FastMCP

server = FastMCP("banner")


@server.tool()
def echo(text: str) -> str:
    """Say `text` back."""
    return text


if __name__ == "__main__":
    print("\x1b[1;32m*** Banner MCP server v1.0 running on stdio ***\x1b[0m", file=sys.stderr, flush=True)
    if "--fail" in sys.argv:
        print("\x1b[31mfatal: no config file\x1b[0m", file=sys.stderr, flush=True)
        sys.exit(3)
    server.run("stdio")
