"""The official MCP Inspector CLI (`@modelcontextprotocol/inspector --cli`, pinned) against Gecko over HTTP."""

from __future__ import annotations

import json
import subprocess

import pytest

from tests.mcp.conftest import LiveGecko
from tests.mcp.npm_tools import npm_env, npm_tool

pytestmark = pytest.mark.integration


def inspector(url: str, *args: str, home) -> tuple[int, dict]:
    """Run one Inspector CLI command; its exit status and the JSON it printed."""
    done = subprocess.run([npm_tool("inspector"), "--cli", url, "--transport", "http", *args],
                          capture_output=True, text=True, timeout=120, env={**npm_env(), "HOME": str(home)})
    start = done.stdout.index("{")
    reply, _ = json.JSONDecoder().raw_decode(done.stdout[start:])
    return done.returncode, reply


def test_inspector_lists_and_calls_then_state_over_http(mcp_gecko: LiveGecko, tmp_path):
    session_id = mcp_gecko.new_session()
    url = f"{mcp_gecko.url}/mcp/notes"
    bound = ("--header", f"X-Session-ID: {session_id}")

    status, listed = inspector(url, *bound, "--method", "tools/list", home=tmp_path)
    assert status == 0
    tools = {t["name"]: t for t in listed["tools"]}
    assert set(tools) == {"create_note", "get_note", "list_notes"}
    assert tools["get_note"]["annotations"]["readOnlyHint"] is True
    assert tools["create_note"]["inputSchema"]["required"] == ["title", "body"]

    status, ok = inspector(url, *bound, "--method", "tools/call", "--tool-name", "create_note",
                           "--tool-arg", "title=groceries", "body=eggs", home=tmp_path)
    assert status == 0 and ok["isError"] is False
    assert ok["structuredContent"]["status"] == "saved" and ok["structuredContent"]["title"] == "groceries"

    status, bad = inspector(url, *bound, "--method", "tools/call", "--tool-name", "create_note",
                            "--tool-arg", "title=groceries", "priority=9", home=tmp_path)
    assert status != 0 and bad["isError"] is True
    assert bad["content"][0]["text"] == "Missing required argument 'body'. Argument 'priority' must be ≤ 5."

    assert [{k: n[k] for k in ("title", "body")} for n in mcp_gecko.state(session_id)["notes"]["notes"].values()] == [
        {"title": "groceries", "body": "eggs"}]
    assert [c["status"] for c in mcp_gecko.history(session_id)] == [200, 422]


def test_inspector_finds_no_schema_portability_error(mcp_gecko: LiveGecko, tmp_path):
    """`--strict` exits 6 on a tool schema that clients may reject; warnings (nullable types) are allowed."""
    status, listed = inspector(f"{mcp_gecko.url}/mcp", "--method", "tools/list", "--strict", home=tmp_path)
    assert status == 0, listed
