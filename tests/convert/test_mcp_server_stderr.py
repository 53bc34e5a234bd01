"""Listing a real MCP server's tools (`gecko pool build`, `gecko convert mcp`) keeps the server's stderr banner and
colour codes out of ours; a server that fails has its last stderr lines, without colour codes, in the message."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from gecko.convert.mcp_server import ConversionError, list_server_tools

SERVER = str(Path(__file__).with_name("banner_mcp_server.py"))


async def test_the_servers_banner_is_not_relayed(capfd: pytest.CaptureFixture[str]) -> None:
    listed = await list_server_tools([sys.executable, SERVER], timeout=60)
    assert [tool["name"] for tool in listed.tools] == ["echo"]
    out, err = capfd.readouterr()
    assert "Banner" not in out + err and "\x1b[" not in out + err


async def test_a_failing_servers_last_words_are_in_the_message_without_colours(
        capfd: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(ConversionError) as caught:
        await list_server_tools([sys.executable, SERVER, "--fail"], timeout=60)
    assert "its stderr ended with: *** Banner MCP server v1.0 running on stdio *** | fatal: no config file" in str(
        caught.value)
    assert "\x1b[" not in str(caught.value) and "\x1b[" not in "".join(capfd.readouterr())
