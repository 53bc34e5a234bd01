"""The official MCP Python SDK client against Gecko: streamable HTTP (2 workers) and stdio."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamablehttp_client

from tests.conftest import TOOLKITS_DIR
from tests.mcp.conftest import BAD_NOTE, BAD_NOTE_DETAIL, NOTE, LiveGecko
from utils.paths import REPO_ROOT

pytestmark = pytest.mark.integration


@asynccontextmanager
async def http_session(url: str, headers: dict[str, str] | None = None,
                       fresh_connections: bool = False) -> AsyncIterator[tuple[ClientSession, str]]:
    """An initialized SDK session; yields it and the Mcp-Session-Id Gecko gave."""
    def factory(headers=None, timeout=None, auth=None) -> httpx.AsyncClient:
        limits = httpx.Limits(max_keepalive_connections=0) if fresh_connections else None
        return httpx.AsyncClient(headers=headers, timeout=timeout, auth=auth,
                                 **({"limits": limits} if limits else {}))

    async with streamablehttp_client(url, headers=headers, httpx_client_factory=factory) as (read, write, sid):
        async with ClientSession(read, write) as session:
            await session.initialize()
            session_id = sid()
            assert session_id is not None, "Gecko gave no Mcp-Session-Id"
            yield session, session_id


async def test_http_list_valid_invalid_then_state_over_http(mcp_gecko: LiveGecko):
    async with http_session(f"{mcp_gecko.url}/mcp/notes") as (mcp, session_id):
        tools = {t.name: t for t in (await mcp.list_tools()).tools}
        assert set(tools) == {"create_note", "get_note", "list_notes"}
        create, get = tools["create_note"], tools["get_note"]
        assert create.inputSchema["required"] == ["title", "body"]
        assert create.annotations.readOnlyHint is False and create.annotations.destructiveHint is True
        assert get.annotations.readOnlyHint is True
        assert create.outputSchema["type"] == "object" and "oneOf" in create.outputSchema
        assert get.outputSchema["type"] == "object"

        ok = await mcp.call_tool("create_note", NOTE)
        assert ok.isError is False
        assert ok.structuredContent["title"] == NOTE["title"] and ok.structuredContent["status"] == "saved"
        assert ok.content[0].type == "text" and '"status":"saved"' in ok.content[0].text
        assert ok.meta["gecko/state_version"] == 1

        bad = await mcp.call_tool("create_note", BAD_NOTE)
        assert bad.isError is True and bad.content[0].text.startswith(BAD_NOTE_DETAIL)
        assert "Missing required argument 'body'." in bad.content[0].text
        problem = bad.meta["gecko/problem"]
        assert {e["pointer"] for e in problem["errors"]} >= {"/bogus", "/body", "/title"}

        unknown = await mcp.call_tool("create_notes", NOTE)
        assert unknown.isError and "did you mean: create_note" in unknown.content[0].text

    state = mcp_gecko.state(session_id)
    assert [{k: n[k] for k in NOTE} for n in state["notes"]["notes"].values()] == [NOTE]
    statuses = [c["status"] for c in mcp_gecko.history(session_id)]
    assert statuses == [200, 422]


async def test_http_all_toolkits_endpoint_prefixes_names(mcp_gecko: LiveGecko):
    async with http_session(f"{mcp_gecko.url}/mcp") as (mcp, session_id):
        names = {t.name for t in (await mcp.list_tools()).tools}
        assert {"notes__create_note", "notes__get_note", "legacy30__getAccount"} <= names
        ok = await mcp.call_tool("notes__create_note", NOTE)
        assert not ok.isError
    assert mcp_gecko.state(session_id)["counts"] == {"notes/create_note": 1}


async def test_http_binds_to_an_existing_session_by_header(mcp_gecko: LiveGecko):
    existing = mcp_gecko.new_session({"user": "ada"})
    async with http_session(f"{mcp_gecko.url}/mcp/notes", headers={"X-Session-ID": existing}) as (mcp, sid):
        assert sid == existing
        assert not (await mcp.call_tool("create_note", NOTE)).isError
    state = mcp_gecko.state(existing)
    assert state["user"] == "ada" and len(state["notes"]["notes"]) == 1


async def test_http_binding_to_a_missing_session_fails_loudly(mcp_gecko: LiveGecko):
    with pytest.raises(Exception):  # noqa: B017 - the SDK wraps the 404 in its own exception types
        async with http_session(f"{mcp_gecko.url}/mcp/notes", headers={"X-Session-ID": "no-such-session"}):
            pass


async def test_http_sessions_hold_across_two_workers_on_fresh_connections(mcp_gecko: LiveGecko):
    """Every request on a new TCP connection, so both workers serve one MCP session; no call is lost."""
    pids: set[int] = set()
    for _ in range(200):  # both workers are up and take fresh connections
        pids.add(httpx.get(f"{mcp_gecko.url}/health", headers={"Connection": "close"}).json()["pid"])
        if len(pids) == 2:
            break
    assert len(pids) == 2
    async with http_session(f"{mcp_gecko.url}/mcp/notes", fresh_connections=True) as (mcp, session_id):
        results = [await mcp.call_tool("create_note", {**NOTE, "title": f"n{i}"}) for i in range(12)]
        results += await asyncio.gather(*(mcp.call_tool("create_note", {**NOTE, "title": f"p{i}"}) for i in range(12)))
    errors = [r.content[0].text for r in results if r.isError]
    assert not errors, errors
    assert mcp_gecko.state(session_id)["counts"] == {"notes/create_note": 24}
    titles = [c["arguments"]["title"] for c in mcp_gecko.history(session_id) if c["status"] == 200]
    assert sorted(titles) == sorted([f"n{i}" for i in range(12)] + [f"p{i}" for i in range(12)])
    assert sorted(r.meta["gecko/state_version"] for r in results) == list(range(1, 25))


def test_http_refuses_get_and_unknown_toolkits(mcp_gecko: LiveGecko):
    assert httpx.get(f"{mcp_gecko.url}/mcp").status_code == 405
    reply = httpx.post(f"{mcp_gecko.url}/mcp/note", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
                       headers={"Accept": "application/json, text/event-stream"})
    assert reply.status_code == 404 and "did you mean: notes" in reply.json()["error"]["message"]


def nested(depth: int) -> list:
    value: list = []
    for _ in range(depth - 1):
        value = [value]
    return value


def _stdio(*extra: str, state_dir) -> StdioServerParameters:
    return StdioServerParameters(
        command=sys.executable, cwd=str(REPO_ROOT),
        args=["-m", "gecko.mcp", "--schemas-dir", str(TOOLKITS_DIR), "--state-dir", str(state_dir), *extra])


async def test_stdio_list_valid_invalid_then_state_over_http(mcp_gecko: LiveGecko):
    """`python -m gecko.mcp` on the HTTP server's state dir: its session is visible over HTTP."""
    session_id = mcp_gecko.new_session()
    params = _stdio("--toolkit", "notes", "--session", session_id, state_dir=mcp_gecko.state_dir)
    async with stdio_client(params) as (read, write), ClientSession(read, write) as mcp:
        init = await mcp.initialize()
        assert session_id in init.instructions
        assert {t.name for t in (await mcp.list_tools()).tools} == {"create_note", "get_note", "list_notes"}
        ok = await mcp.call_tool("create_note", NOTE)
        assert not ok.isError and ok.structuredContent["status"] == "saved"
        bad = await mcp.call_tool("create_note", BAD_NOTE)
        assert bad.isError and bad.content[0].text.startswith(BAD_NOTE_DETAIL)
    assert [{k: n[k] for k in NOTE} for n in mcp_gecko.state(session_id)["notes"]["notes"].values()] == [NOTE]
    assert [c["status"] for c in mcp_gecko.history(session_id)] == [200, 422]


def test_stdio_refuses_an_unknown_toolkit(tmp_path):
    import subprocess

    done = subprocess.run([sys.executable, "-m", "gecko.mcp", "--schemas-dir", str(TOOLKITS_DIR), "--toolkit", "note",
                           "--state-dir", str(tmp_path)], capture_output=True, text=True, timeout=60, cwd=REPO_ROOT)
    assert done.returncode == 2 and "did you mean: notes" in done.stderr


async def test_stdio_checks_the_json_limits_and_creates_private_files(tmp_path):
    """No HTTP layer on stdio: the call's arguments get the limits; the session DB is 0600 (--umask 077)."""
    params = _stdio("--toolkit", "notes", "--max-array-items", "5", state_dir=tmp_path)
    async with stdio_client(params) as (read, write), ClientSession(read, write) as mcp:
        await mcp.initialize()
        many = await mcp.call_tool("create_note", {**NOTE, "tags": list(range(10))})
        assert many.isError and "--max-array-items" in many.content[0].text and "'/tags'" in many.content[0].text
        deep = await mcp.call_tool("create_note", {**NOTE, "z": nested(70)})
        assert deep.isError and "--max-json-depth" in deep.content[0].text
        ok = await mcp.call_tool("create_note", NOTE)
        assert not ok.isError
    files = [p for p in tmp_path.rglob("*") if p.is_file()]
    assert files and all(p.stat().st_mode & 0o777 == 0o600 for p in files), [(p, oct(p.stat().st_mode)) for p in files]
