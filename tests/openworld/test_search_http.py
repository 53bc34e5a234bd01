"""Tool search on a real 2-worker Gecko serving the small pool: `GET /tools/search` and the MCP tool `search_tools`
through the official MCP SDK client, then a call of a found tool."""

from __future__ import annotations

import shutil

import httpx
import pytest
from mcp import ClientSession
from mcp.client.streamable_http import streamablehttp_client

from gecko.toolkits.loader import load_toolkits
from gecko.toolkits.search import ToolIndex
from gecko.toolkits.search_store import INDEX_DIR
from tests.infra import require_module
from tests.openworld.conftest import POOL_QUERIES

pytestmark = pytest.mark.integration
require_module("bm25s", "tool search needs the [search] extra (make setup installs it)")


def _search(url: str, **params) -> httpx.Response:
    return httpx.get(f"{url}/tools/search", params=params, timeout=60)


def test_the_server_maps_the_pool_index_and_answers_as_an_index_built_in_memory(pool_url, small_pool, tmp_path):
    out, manifest = small_pool
    plain = tmp_path / "plain"  # the same documents without their index: what a server builds in memory
    shutil.copytree(out / "toolkits", plain, ignore=shutil.ignore_patterns(INDEX_DIR))
    in_memory = ToolIndex(load_toolkits([plain]))
    for query in POOL_QUERIES:
        for _ in range(2):  # both workers, whichever answers
            hits = _search(pool_url, q=query, k=20).json()["hits"]
            assert hits == [h.public() for h in in_memory.search(query, 20)], query
    health = httpx.get(f"{pool_url}/health", timeout=30).json()
    assert health["tools"] == manifest["counts"]["tools"] and health["toolkits"] == manifest["counts"]["toolkits"]
    assert health["toolkits_loaded"] < health["toolkits"] / 10  # searching loaded none; the tests before used a few


def test_search_finds_tools_by_what_they_do(pool_url, small_pool):
    _, manifest = small_pool
    reply = _search(pool_url, q="cancel the reservation of a flight", k=5)
    assert reply.status_code == 200
    body = reply.json()
    assert body["engine"] == "bm25" and body["indexed_tools"] == manifest["counts"]["tools"] and body["k"] == 5
    top = body["hits"][0]
    assert (top["toolkit"], top["name"]) == ("tau2-airline", "cancel_reservation")
    assert top["app"] == "tau2-airline" and top["source"] == "tau2" and top["access"] == "write"
    assert top["call"] == "POST /tau2-airline/cancel_reservation" and top["summary"]
    scores = [h["score"] for h in body["hits"]]
    assert len(scores) == 5 and scores == sorted(scores, reverse=True)


def test_every_worker_answers_the_same(pool_url):
    answers = {tuple((h["toolkit"], h["name"]) for h in _search(pool_url, q="factorial of a number", k=3).json()["hits"])
               for _ in range(6)}
    assert len(answers) == 1 and next(iter(answers))[0][1] == "math_factorial"


def test_filters_and_bad_queries(pool_url):
    reads = _search(pool_url, q="reservation", k=10, access="read").json()["hits"]
    assert reads and all(h["access"] == "read" for h in reads)
    only = _search(pool_url, q="cancel an order or a reservation", k=10, toolkit="tau2-retail").json()["hits"]
    assert only and {h["toolkit"] for h in only} == {"tau2-retail"}
    unknown = _search(pool_url, q="x", toolkit="tau2-airlin")
    assert unknown.status_code == 404 and "tau2-airline" in unknown.json()["detail"]
    for params in ({"q": ""}, {"q": "   "}, {"q": "a", "k": 0}, {"q": "a", "k": 101}, {"q": "a", "access": "delete"},
                   {"k": 3}, {"q": "x" * 2001}):
        bad = _search(pool_url, **params)
        assert bad.status_code == 422, (params, bad.text)
        assert bad.headers["content-type"].startswith("application/problem+json")
    assert _search(pool_url, q="qqqq zzzz").json()["hits"] == []


async def test_mcp_search_tools_then_call_what_was_found(pool_url):
    async with streamablehttp_client(f"{pool_url}/mcp") as (read, write, _), ClientSession(read, write) as mcp:
        await mcp.initialize()
        listed = {t.name: t for t in (await mcp.list_tools()).tools}
        assert "search_tools" in listed and listed["search_tools"].annotations.readOnlyHint is True
        found = await mcp.call_tool("search_tools", {"query": "details of a user's reservation", "k": 5})
        assert found.isError is False
        names = [t["name"] for t in found.structuredContent["tools"]]
        assert "tau2-airline__get_reservation_details" in names
        assert all(name in listed for name in names)
        result = await mcp.call_tool("tau2-airline__get_reservation_details", {"reservation_id": "ABC123"})
        assert result.meta["gecko/state_version"] >= 0
        bad = await mcp.call_tool("search_tools", {"query": "", "k": 500})
        assert bad.isError is True and "query" in bad.content[0].text


async def test_a_single_toolkit_endpoint_lists_only_its_tools(pool_url):
    async with streamablehttp_client(f"{pool_url}/mcp/tau2-airline") as (read, write, _), \
            ClientSession(read, write) as mcp:
        await mcp.initialize()
        names = {t.name for t in (await mcp.list_tools()).tools}
        assert "search_tools" not in names and "get_reservation_details" in names
