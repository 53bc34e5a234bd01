"""The MCP upstream client against a real stdio MCP server (the SDK's FastMCP): answers, and a hung tool."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from gecko.upstream.errors import UpstreamError
from gecko.upstream.mcp_client import McpUpstream
from gecko.upstream.spec import McpStdioUpstream

SERVER = McpStdioUpstream(command=sys.executable, args=(str(Path(__file__).with_name("slow_mcp_server.py")),))


async def test_an_answer_within_the_timeout_is_the_result():
    upstream = McpUpstream(SERVER, timeout=30)
    try:
        result = await upstream.call("wait", {"seconds": 0})
    finally:
        await upstream.aclose()
    assert not result.is_error
    assert result.body == {"result": "done"}  # FastMCP wraps a str return as structured content


async def test_a_tool_that_does_not_answer_in_time_is_an_upstream_error():
    upstream = McpUpstream(SERVER, timeout=60)
    try:
        await upstream.call("wait", {"seconds": 0})  # connected: what follows times out the call, not the start
        upstream.timeout = 1
        with pytest.raises(UpstreamError, match="no answer within 1s"):
            await upstream.call("wait", {"seconds": 30})
    finally:
        await upstream.aclose()
