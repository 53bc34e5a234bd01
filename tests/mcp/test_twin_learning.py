"""Twins of real MCP servers that keep their contract and learn from captured calls (issue 32, items 4-7), driven with
the official SDK: `@modelcontextprotocol/server-memory` (output schemas, annotations) and `ohno-mcp` (a task tracker
with neither; its errors are `{"error": …}` bodies), both pinned by `make npm-tools`. The twins are built with
`gecko convert mcp --server`, `gecko twin capture --server … --calls …` and `gecko twin learn`, as a user would."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from gecko.convert import from_mcp, write_document
from gecko.twin.capture import capture_of
from gecko.twin.learn import learn_toolkit
from gecko.twin.outcome import result_value
from tests.mcp.npm_tools import npm_env, npm_tool
from tests.mcp.test_mcp_sdk_client import http_session
from utils.paths import REPO_ROOT
from utils.procs import gecko_server

pytestmark = [pytest.mark.integration, pytest.mark.slow]

OHNO_CALLS = [
    {"tool": "create_task", "arguments": {"title": "write the docs"}},
    {"tool": "create_task", "arguments": {"title": "measure", "task_type": "chore"}},
    {"tool": "get_task", "arguments": {"task_id": "{{0.task_id}}"}},
    {"tool": "get_task", "arguments": {"task_id": "{{1.task_id}}", "fields": "minimal"}},
    {"tool": "get_task", "arguments": {"task_id": "task-never-issued"}},
    {"tool": "update_task_status", "arguments": {"task_id": "{{0.task_id}}", "status": "in_progress"}},
    {"tool": "update_task_status", "arguments": {"task_id": "task-gone", "status": "done"}},
    {"tool": "get_tasks", "arguments": {}},
    {"tool": "get_task", "arguments": {"task_id": 7}},
]


def run(*argv: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([sys.executable, *argv], capture_output=True, text=True, timeout=180, env=env, cwd=REPO_ROOT)
    assert done.returncode == 0, done.stderr
    return done


@pytest.fixture(scope="module")
def twins(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    base = tmp_path_factory.mktemp("learning")
    kits = base / "toolkits"
    memory, ohno = npm_tool("mcp-server-memory"), npm_tool("ohno-mcp")
    env = {**npm_env(), "MEMORY_FILE_PATH": str(base / "memory.jsonl"), "OHNO_DB_PATH": str(base / "convert.db")}
    run("-m", "gecko.convert", "mcp", "--server", memory, "--title", "memory", "-o", str(kits / "memory.json"), env=env)
    run("-m", "gecko.convert", "mcp", "--server", ohno, "--title", "ohno", "-o", str(kits / "ohno.json"), env=env)
    calls = base / "calls.jsonl"
    calls.write_text("".join(json.dumps(c) + "\n" for c in OHNO_CALLS))
    capture_env = {**env, "OHNO_DB_PATH": str(base / "capture.db")}
    run("-m", "gecko.twin", "capture", "--server", ohno, "--calls", str(calls), "-o", str(base / "cap.jsonl"),
        env=capture_env)
    learned = base / "learned"
    run("-m", "gecko.twin", "learn", str(kits / "ohno.json"), "--captures", str(base / "cap.jsonl"),
        "-o", str(learned / "ohno_learned.json"), env=env)
    write_document(_graph_twin(), learned / "graph.json")
    with gecko_server([kits, learned], workers=1, state_dir=base / "state", env=env, log_path=base / "server.log",
                      extra=["--allow-upstream", "memory"]) as url:
        yield {"url": url, "ohno": ohno, "memory": memory, "base": base,
               "captures": [json.loads(line) for line in (base / "cap.jsonl").read_text().splitlines()]}


def _graph_twin() -> dict[str, Any]:
    """A twin whose server reports a missing record as `isError` with a message (learned from captures)."""
    tools = [{"name": "add_node", "inputSchema": {"type": "object", "properties": {"label": {"type": "string"}}}},
             {"name": "open_node", "inputSchema": {"type": "object", "properties": {"node_id": {"type": "string"}},
                                                   "required": ["node_id"]}, "annotations": {"readOnlyHint": True}}]
    text = {"type": "text"}
    captures = [
        capture_of("add_node", {"label": "a"}, {"content": [{**text, "text": '{"node_id": "n-81f2"}'}]}),
        capture_of("open_node", {"node_id": "n-81f2"}, {"content": [{**text, "text": '{"node_id": "n-81f2"}'}]}),
        capture_of("open_node", {"node_id": "n-0"}, {"content": [{**text, "text": "Node n-0 does not exist"}],
                                                     "isError": True})]
    return learn_toolkit(from_mcp(tools, title="graph"), captures)[0]


async def real_calls(argv: list[str], env: dict[str, str], calls: list[tuple[str, dict[str, Any]]]) -> list[Any]:
    params = StdioServerParameters(command=argv[0], args=argv[1:], env=env)
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        return [await session.call_tool(tool, arguments) for tool, arguments in calls]


def records(url: str, session_id: str, toolkit: str) -> int:
    state = httpx.get(f"{url}/get-session-state", headers={"X-Session-ID": session_id}, timeout=10).json()["state"]
    return sum(len(v) for v in (state.get(toolkit) or {}).values() if isinstance(v, (dict, list)))


async def test_converted_twin_accepts_the_extra_argument_the_real_server_accepts(twins, tmp_path):
    env = {**npm_env(), "MEMORY_FILE_PATH": str(tmp_path / "m.jsonl")}
    [real] = await real_calls([twins["memory"]], env, [("search_nodes", {"query": "a", "trace_id": "t-1"})])
    assert not real.isError
    async with http_session(f"{twins['url']}/mcp/memory") as (mcp, _):
        twin = await mcp.call_tool("search_nodes", {"query": "a", "trace_id": "t-1"})
        assert not twin.isError, twin.content[0].text
        assert set(twin.structuredContent) == set(real.structuredContent)
        wrong = await mcp.call_tool("search_nodes", {"query": 3})
        assert wrong.isError, "what the source forbids is still refused"


async def test_memory_reads_by_annotation_never_create(twins):
    async with http_session(f"{twins['url']}/mcp/memory") as (mcp, session_id):
        listed = {t.name: t for t in (await mcp.list_tools()).tools}
        assert listed["open_nodes"].annotations.readOnlyHint is True
        for _ in range(3):
            assert not (await mcp.call_tool("open_nodes", {"names": ["ada"]})).isError
        assert records(twins["url"], session_id, "memory") == 0


async def test_learned_twin_returns_what_the_real_server_returns(twins, tmp_path):
    captures = twins["captures"]
    assert [c["outcome"] for c in captures] == ["ok", "ok", "ok", "ok", "error", "ok", "error", "ok", "rejected"]
    env = {**npm_env(), "OHNO_DB_PATH": str(tmp_path / "real.db")}
    real_created, = await real_calls([twins["ohno"]], env, [("create_task", {"title": "t"})])
    real_body = result_value(real_created.model_dump(mode="json", by_alias=True, exclude_none=True))

    async with http_session(f"{twins['url']}/mcp/ohno") as (plain, _):
        before = await plain.call_tool("create_task", {"title": "t"})
        assert "task_id" not in (before.structuredContent or {}), "the plain twin cannot know where the id goes"

    async with http_session(f"{twins['url']}/mcp/ohno_learned") as (mcp, session_id):
        listed = {t.name: t for t in (await mcp.list_tools()).tools}
        assert listed["get_task"].outputSchema is None, "a learned result is not the server's declared one"
        created = await mcp.call_tool("create_task", {"title": "t"})
        assert set(created.structuredContent) == set(real_body) == {"success", "task_id"}
        assert created.structuredContent["success"] is True
        task_id = created.structuredContent["task_id"]
        assert isinstance(task_id, str) and task_id
        second = (await mcp.call_tool("create_task", {"title": "u"})).structuredContent["task_id"]
        assert second != task_id, "each create issues a new id"
        count = records(twins["url"], session_id, "ohno_learned")
        got = await mcp.call_tool("get_task", {"task_id": task_id})
        assert not got.isError and got.structuredContent.get("title") == "t"
        assert {"id", "title", "status"} <= set(got.structuredContent)
        assert records(twins["url"], session_id, "ohno_learned") == count, "a read created a record"
        missing = await mcp.call_tool("get_task", {"task_id": "task-0000"})
        assert json.loads(missing.content[0].text) == {"error": "Task not found: task-0000"}, \
            "an id the twin never issued gets the server's own not-found answer"
        status = await mcp.call_tool("update_task_status", {"task_id": "task-0001", "status": "done"})
        assert "error" in json.loads(status.content[0].text)


async def test_not_found_in_the_is_error_convention(twins):
    async with http_session(f"{twins['url']}/mcp/graph") as (mcp, _):
        made = await mcp.call_tool("add_node", {"label": "b"})
        node = made.structuredContent["node_id"]
        assert not (await mcp.call_tool("open_node", {"node_id": node})).isError
        missing = await mcp.call_tool("open_node", {"node_id": "n-404"})
        assert missing.isError and missing.content[0].text == "Node n-404 does not exist"


async def test_a_hybrid_session_is_a_capture(twins, tmp_path):
    async with http_session(f"{twins['url']}/mcp/memory?mode=hybrid") as (mcp, session_id):
        assert not (await mcp.call_tool("search_nodes", {"query": "x"})).isError
        assert (await mcp.call_tool("open_nodes", {"names": "not-a-list"})).isError  # refused: never sent upstream
        assert not (await mcp.call_tool("create_entities", {"entities": []})).isError  # simulated: not captured
    out = tmp_path / "session.jsonl"
    run("-m", "gecko.twin", "capture", "--gecko", twins["url"], "--session", session_id,
        "--toolkit", str(twins["base"] / "toolkits" / "memory.json"), "-o", str(out), env=npm_env())
    captures = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(c["tool"], c["outcome"]) for c in captures] == [("search_nodes", "ok")]
    assert set(captures[0]["result"]) == {"entities", "relations"}


def test_capture_reports_a_server_that_does_not_start(tmp_path: Path) -> None:
    (tmp_path / "calls.jsonl").write_text('{"tool": "x", "arguments": {}}\n')
    done = subprocess.run([sys.executable, "-m", "gecko.twin", "capture", "--server", "/nonexistent/server",
                           "--calls", str(tmp_path / "calls.jsonl"), "-o", str(tmp_path / "c.jsonl")],
                          capture_output=True, text=True, timeout=60, cwd=REPO_ROOT)
    assert done.returncode == 1 and "/nonexistent/server" in done.stderr and not (tmp_path / "c.jsonl").exists()
