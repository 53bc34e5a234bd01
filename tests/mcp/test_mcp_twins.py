"""Simulated twins of real MCP servers (`@modelcontextprotocol/server-filesystem`, `server-memory`, pinned),
built with `python -m gecko.convert mcp --server`, served by a 2-worker Gecko and driven with the SDK client
in simulate, hybrid and passthrough sessions."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from tests.mcp.npm_tools import npm_env, npm_tool
from tests.mcp.test_mcp_sdk_client import http_session
from utils.paths import REPO_ROOT
from utils.procs import gecko_server

pytestmark = [pytest.mark.integration, pytest.mark.slow]


def snapshot(root: Path) -> dict[str, tuple[bytes, int]]:
    """Every file and directory under `root` with its bytes and mtime: any change shows."""
    return {str(p.relative_to(root)): (p.read_bytes() if p.is_file() else b"<dir>", p.stat().st_mtime_ns)
            for p in sorted(root.rglob("*"))}


def convert(server: str, title: str, out: Path) -> dict:
    done = subprocess.run([sys.executable, "-m", "gecko.convert", "mcp", "--server", server, "--title", title,
                           "-o", str(out)], capture_output=True, text=True, timeout=120, env=npm_env(), cwd=REPO_ROOT)
    assert done.returncode == 0, done.stderr
    return json.loads(out.read_text())


async def real_tools(argv: list[str]) -> list:
    params = StdioServerParameters(command=argv[0], args=argv[1:], env=npm_env())
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        return (await session.list_tools()).tools


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict]:
    """A real directory and memory file, the twins of both servers over them, and Gecko serving the twins."""
    base = tmp_path_factory.mktemp("twins")
    real_dir = base / "real"
    (real_dir / "docs").mkdir(parents=True)
    (real_dir / "docs" / "plan.txt").write_text("step 1: measure\nstep 2: improve\n")
    (real_dir / "notes.md").write_text("# notes\n")
    memory_file = base / "memory.jsonl"
    memory_file.write_text(json.dumps({"type": "entity", "name": "ada", "entityType": "person",
                                       "observations": ["writes programs"]}) + "\n")
    twins = base / "toolkits"
    filesystem = [npm_tool("mcp-server-filesystem"), str(real_dir)]
    memory = [npm_tool("mcp-server-memory")]
    docs = {"filesystem": convert(" ".join(filesystem), "filesystem", twins / "filesystem.json"),
            "memory": convert(" ".join(memory), "memory", twins / "memory.json")}
    env = {**npm_env(), "MEMORY_FILE_PATH": str(memory_file)}
    with gecko_server([twins], workers=2, state_dir=base / "state", env=env, log_path=base / "server.log",
                      extra=["--allow-upstream", "filesystem,memory"]) as url:
        yield {"url": url, "real_dir": real_dir, "memory_file": memory_file, "docs": docs,
               "argv": {"filesystem": filesystem, "memory": memory}}


async def test_twins_list_exactly_what_the_real_servers_list(world):
    for name in ("filesystem", "memory"):
        real = {t.name: t for t in await real_tools(world["argv"][name])}
        doc = world["docs"][name]
        assert doc["info"]["x-gecko-upstream"] == {"type": "mcp-stdio", "command": world["argv"][name][0],
                                                   "args": world["argv"][name][1:]}
        async with http_session(f"{world['url']}/mcp/{name}") as (mcp, _):
            twin = {t.name: t for t in (await mcp.list_tools()).tools}
        assert set(twin) == set(real)
        for tool_name, tool in real.items():
            assert twin[tool_name].annotations.readOnlyHint == bool(tool.annotations and tool.annotations.readOnlyHint)
            assert set(twin[tool_name].inputSchema["properties"]) == set(tool.inputSchema.get("properties", {}))
            assert bool(twin[tool_name].outputSchema) == bool(tool.outputSchema)


async def test_hybrid_reads_are_real_and_writes_never_touch_the_directory(world):
    real_dir = world["real_dir"]
    before = snapshot(real_dir)
    async with http_session(f"{world['url']}/mcp/filesystem?mode=hybrid") as (mcp, session_id):
        read = await mcp.call_tool("read_text_file", {"path": str(real_dir / "docs" / "plan.txt")})
        assert not read.isError and read.structuredContent == {"content": "step 1: measure\nstep 2: improve\n"}
        assert read.meta["gecko/source"] == "upstream"
        listing = await mcp.call_tool("list_directory", {"path": str(real_dir)})
        assert "[DIR] docs" in listing.content[0].text and "[FILE] notes.md" in listing.content[0].text
        writes = [("write_file", {"path": str(real_dir / "new.txt"), "content": "should not exist"}),
                  ("write_file", {"path": str(real_dir / "notes.md"), "content": "overwritten?"}),
                  ("create_directory", {"path": str(real_dir / "made")}),
                  ("move_file", {"source": str(real_dir / "notes.md"), "destination": str(real_dir / "moved.md")}),
                  ("edit_file", {"path": str(real_dir / "docs" / "plan.txt"),
                                 "edits": [{"oldText": "measure", "newText": "guess"}]})]
        for tool, arguments in writes:
            result = await mcp.call_tool(tool, arguments)
            assert not result.isError and (result.meta or {}).get("gecko/source") != "upstream", tool
        outside = await mcp.call_tool("read_text_file", {"path": "/etc/hostname"})
        assert outside.isError and "outside allowed directories" in outside.content[0].text
        bad = await mcp.call_tool("write_file", {"path": str(real_dir / "x")})
        assert bad.isError and "Missing required argument 'content'." in bad.content[0].text
    assert snapshot(real_dir) == before, "a simulated write reached the real directory"

    state = httpx.get(f"{world['url']}/get-session-state", headers={"X-Session-ID": session_id}).json()["state"]
    assert [o["tool"] for o in state["observed"]] == ["filesystem/read_text_file", "filesystem/list_directory"]
    assert state["observed"][0]["source"] == "real"
    # create_directory makes a record of the world model; the other writes are kept as effects
    assert [e["tool"].split("/")[1] for e in state["effects"]] == [t for t, _ in writes if t != "create_directory"]
    assert [d["path"] for d in state["filesystem"]["directories"].values()] == [str(real_dir / "made")]
    history = httpx.get(f"{world['url']}/sessions/{session_id}/history").json()["calls"]
    assert [c.get("source") for c in history[:2]] == ["upstream", "upstream"]


async def test_hybrid_memory_twin_reads_the_real_graph_and_simulates_writes(world):
    memory_file = world["memory_file"]
    before = memory_file.read_bytes()
    async with http_session(f"{world['url']}/mcp/memory?mode=hybrid") as (mcp, _):
        graph = await mcp.call_tool("read_graph", {})
        assert not graph.isError and "ada" in graph.content[0].text
        created = await mcp.call_tool("create_entities", {"entities": [
            {"name": "grace", "entityType": "person", "observations": ["admiral"]}]})
        assert not created.isError
        again = await mcp.call_tool("search_nodes", {"query": "grace"})
        assert "grace" not in again.content[0].text, "the real graph must not hold a simulated write"
    assert memory_file.read_bytes() == before


async def test_simulate_mode_never_reaches_the_upstream(world):
    async with http_session(f"{world['url']}/mcp/filesystem") as (mcp, _):
        read = await mcp.call_tool("read_text_file", {"path": str(world["real_dir"] / "docs" / "plan.txt")})
    assert not read.isError and "step 1" not in read.content[0].text
    assert (read.meta or {}).get("gecko/source") != "upstream"


async def test_passthrough_writes_for_real(world, tmp_path):
    target = world["real_dir"] / "passthrough.txt"
    session = httpx.post(f"{world['url']}/sessions", json={"config": {"mode": "passthrough"}}).json()["session_id"]
    try:
        reply = httpx.post(f"{world['url']}/filesystem/write_file", headers={"X-Session-ID": session},
                           json={"path": str(target), "content": "real"}, timeout=30)
        assert reply.status_code == 200 and reply.headers["X-Gecko-Source"] == "upstream"
        assert target.read_text() == "real"
        state = httpx.get(f"{world['url']}/get-session-state", headers={"X-Session-ID": session}).json()["state"]
        assert state["effects"][0]["source"] == "real"
    finally:
        target.unlink(missing_ok=True)


def test_converter_reports_a_server_that_does_not_start(tmp_path):
    done = subprocess.run([sys.executable, "-m", "gecko.convert", "mcp", "--server", "/nonexistent/mcp-server",
                           "-o", str(tmp_path / "x.json")], capture_output=True, text=True, timeout=60, cwd=REPO_ROOT)
    assert done.returncode == 1 and "/nonexistent/mcp-server" in done.stderr and not (tmp_path / "x.json").exists()
