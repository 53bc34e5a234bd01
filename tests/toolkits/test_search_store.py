"""A prebuilt search index (`gecko.toolkits.search_store`) and the registry served from it (`gecko.toolkits.prebuilt`):
same rankings as the index built in memory, nothing loaded until used, a stale index left unused, a faulty document
reported on first use with the start-up check's message."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
import shutil
from pathlib import Path

import pytest

from gecko.convert import from_openai
from gecko.convert.document import write_document
from gecko.toolkits.lazy import ToolkitUnavailable
from gecko.toolkits.loader import ToolkitLoadError, load_toolkits
from gecko.toolkits.registry import ToolNotFound
from gecko.toolkits.search import ToolIndex
from gecko.toolkits.search_store import INDEX_DIR, index_directory
from tests.infra import missing, require_module
from tests.toolkits.search_support import openai_function as _fn
from tests.toolkits.search_support import write_airline_and_weather

require_module("bm25s", "tool search needs the [search] extra (make setup installs it)")

QUERIES = ("book me a flight seat", "weather forecast for Paris", "cancel my reservation", "departure airport",
           "qqqq zzzz")


@pytest.fixture
def kits(tmp_path: Path) -> Path:
    root = write_airline_and_weather(tmp_path / "kits")
    index_directory(root, dense=False)
    return root


def test_the_index_is_mapped_and_ranks_as_the_one_built_in_memory(kits: Path, tmp_path: Path):
    files = {p.name for p in (kits / INDEX_DIR).rglob("*") if p.is_file()}
    assert {"catalogue.json", "dense-texts.json", "data.csc.index.npy", "vocab.index.json"} <= files
    in_memory = ToolIndex(load_toolkits([write_airline_and_weather(tmp_path / "plain")]))  # the same documents, no index
    registry = load_toolkits([kits])
    assert registry.stored is not None and len(registry.toolkits) == 2 and registry.tool_count == 5
    mapped = ToolIndex(registry)
    mapped.warm()
    assert registry.toolkits.loaded() == 0
    for query in QUERIES:
        for access in (None, "read", "write"):
            want = [h.public() for h in in_memory.search(query, 5, access=access)]
            assert [h.public() for h in mapped.search(query, 5, access=access)] == want, (query, access)
    only = [h.public() for h in mapped.search("flight weather", 5, toolkits=["weather"])]
    assert only == [h.public() for h in in_memory.search("flight weather", 5, toolkits=["weather"])] and only
    assert registry.toolkits.loaded() == 0  # searching loads nothing; the hit's tool loads its toolkit alone
    assert mapped.search("book me a flight seat", 1)[0].operation.operation_id == "book_flight"
    assert registry.toolkits.loaded() == 1 and registry.toolkits.pending("weather") is not None


def test_a_call_by_path_or_name_loads_only_its_toolkit(kits: Path):
    registry = load_toolkits([kits])
    assert registry.match_path("POST", "/nowhere") is None and registry.toolkits.loaded() == 0
    assert registry.get("weather", "get_forecast").operation_id == "get_forecast"
    assert registry.toolkits.pending("airline") is not None and registry.toolkits.loaded() == 1


def test_an_index_that_no_longer_matches_is_not_used(kits: Path, caplog: pytest.LogCaptureFixture):
    write_document(from_openai([_fn("get_tide", "Tide times of a harbour.", harbour="name")], title="Sea"),
                   kits / "sea.json")
    with caplog.at_level(logging.WARNING, logger="gecko.toolkits"):
        registry = load_toolkits([kits])
    assert registry.stored is None and registry.toolkits.loaded() == 3
    assert "not the ones it was built from" in caplog.text and "gecko pool build" in caplog.text
    assert ToolIndex(registry).search("tide times", 1)[0].operation.operation_id == "get_tide"


def _break_in_place(path: Path) -> None:
    """Make the document invalid without changing its size or time (the index cannot tell)."""
    stat = path.stat()
    text = path.read_text()
    broken = text.replace('"openapi": "3.1.0"', '"openapi": 31.0000', 1)
    assert broken != text and len(broken) == len(text)
    path.write_text(broken)
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))


def test_a_faulty_document_is_reported_when_first_used(kits: Path, tmp_path: Path):
    _break_in_place(kits / "weather.json")
    plain = tmp_path / "plain"
    shutil.copytree(kits, plain, ignore=shutil.ignore_patterns(INDEX_DIR))
    with pytest.raises(ToolkitLoadError) as at_start:  # what a start without the index says
        load_toolkits([plain])
    registry = load_toolkits([kits])  # starts: nothing is read yet
    assert registry.stored is not None
    with pytest.raises(ToolkitUnavailable) as first:
        registry.toolkit("weather")
    with pytest.raises(ToolkitUnavailable) as again:
        registry.get("weather", "get_forecast")
    start_message = str(at_start.value).split("; fix the document")[0].replace(str(plain), str(kits))
    assert start_message in str(first.value) and str(again.value) == str(first.value)
    assert registry.get("airline", "book_flight").operation_id == "book_flight"
    skipping = load_toolkits([kits], skip_invalid=True)
    assert skipping.toolkit("weather") is None and "weather" not in skipping.toolkits
    assert [t.name for t in skipping.toolkits.values()] == ["airline"]


def test_the_mapped_embeddings_rank_as_the_ones_built_in_memory(tmp_path: Path):
    from gecko.toolkits.search_encoder import EncoderUnavailable, SentenceEncoder

    try:
        SentenceEncoder.packaged()
    except EncoderUnavailable as exc:
        missing(f"no embedding model here ({exc}); `make setup` installs it")
    cache = tmp_path / "cache"
    kits = write_airline_and_weather(tmp_path / "kits")
    in_memory = ToolIndex(load_toolkits([kits]), dense=True, cache_dir=cache)
    in_memory.warm_dense()
    summary = index_directory(kits, dense=True, cache_dir=cache)
    assert summary.dense is not None and summary.embedded == 0  # the cache had every tool
    registry = load_toolkits([kits])
    mapped = ToolIndex(registry, dense=True, cache_dir=None)  # no cache: the vectors can only come from the index
    mapped.warm()
    assert mapped.dense_status["state"] == "cold"  # start-up maps BM25 only; the first dense search maps the rest
    mapped.await_dense()
    assert mapped.dense_status["state"] == "ready" and mapped.dense_build.embedded == 0
    import numpy as np

    assert isinstance(mapped._dense.vectors, np.memmap)
    for mode in ("dense", "hybrid"):
        for query in QUERIES:
            want = [h.public() for h in in_memory.search(query, 5, mode=mode)]
            assert [h.public() for h in mapped.search(query, 5, mode=mode)] == want, (mode, query)
    assert registry.toolkits.loaded() == 0


def test_mcp_names_every_tool_from_the_catalogue_and_loads_only_what_is_called(kits: Path, tmp_path: Path):
    from gecko.mcp.catalog import CatalogueMcpCatalog, McpCatalogs

    eager = McpCatalogs(load_toolkits([write_airline_and_weather(tmp_path / "plain")])).get(None)
    registry = load_toolkits([kits])
    catalog = McpCatalogs(registry).get(None)
    assert isinstance(catalog, CatalogueMcpCatalog) and registry.toolkits.loaded() == 0
    forecast = catalog.get("weather__get_forecast")
    assert forecast.operation_id == "get_forecast" and registry.toolkits.loaded() == 1
    assert catalog.name_of(forecast) == eager.name_of(eager.get("weather__get_forecast")) == "weather__get_forecast"
    with pytest.raises(ToolNotFound) as unknown:
        catalog.get("weather__get_forcast")
    assert unknown.value.suggestions[0] == "weather__get_forecast"
    assert [t.name for t in catalog.listing] == [t.name for t in eager.listing] and registry.toolkits.loaded() == 2


MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def _call_by_name(client, session: dict[str, str]):
    return client.post("/weather/get_forecast", json={"city": "Paris"}, headers=session)


def _call_by_path(client, session: dict[str, str]):
    return client.post("/get_forecast", json={"city": "Paris"}, headers=session)


def _call_over_mcp(client, session: dict[str, str]):
    reply = client.post("/mcp/weather", headers={**MCP_HEADERS, **session}, json={
        "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "get_forecast",
                                                                     "arguments": {"city": "Paris"}}})
    assert not reply.json()["result"]["isError"], reply.json()
    return reply


def _list_over_mcp(client, session: dict[str, str]):
    reply = client.post("/mcp", headers={**MCP_HEADERS, **session},
                        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    assert "weather__get_forecast" in {tool["name"] for tool in reply.json()["result"]["tools"]}
    return reply


def _list_toolkits(client, session: dict[str, str]):
    reply = client.get("/toolkits")
    assert "weather" in {toolkit["name"] for toolkit in reply.json()["toolkits"]}
    return reply


def _get_toolkit(client, session: dict[str, str]):
    reply = client.get("/toolkits/weather")
    assert "get_forecast" in {tool["name"] for tool in reply.json()["tools"]}
    return reply


@pytest.mark.parametrize("call", [_call_by_name, _call_by_path, _call_over_mcp, _list_over_mcp, _list_toolkits,
                                  _get_toolkit])
def test_a_server_loads_a_toolkit_on_its_first_call_off_the_event_loop(kits: Path, make_client, call):
    client = make_client(schemas_dirs=[kits])
    toolkits = client.app.state.gecko.registry.toolkits
    assert client.get("/health").json()["toolkits_loaded"] == 0
    stub, on_loop = toolkits.pending("weather"), []

    def load():
        try:
            asyncio.get_running_loop()
            on_loop.append(True)
        except RuntimeError:
            on_loop.append(False)
        return stub.load()

    toolkits.add_lazy(dataclasses.replace(stub, load=load))
    session = {"X-Session-ID": client.get("/session-id").json()["session_id"]}
    reply = call(client, session)
    assert reply.status_code == 200 and on_loop == [False]
    assert client.get("/health").json()["toolkits_loaded"] >= 1


def test_a_faulty_document_answers_a_problem_naming_it_on_first_use(kits: Path, make_client):
    _break_in_place(kits / "weather.json")
    client = make_client(schemas_dirs=[kits])
    session = {"X-Session-ID": client.get("/session-id").json()["session_id"]}
    for _ in range(2):
        reply = client.post("/weather/get_forecast", json={"city": "Paris"}, headers=session)
        assert reply.status_code == 503 and reply.json()["type"].endswith("toolkit-unavailable")
        assert "weather.json" in reply.json()["detail"] and "unsupported 'openapi' version" in reply.json()["detail"]
    assert client.post("/airline/book_flight", json={"flight_id": "F1"}, headers=session).status_code == 200


def test_a_listing_leaves_out_a_faulty_document_that_skip_invalid_drops_on_first_use(kits: Path, make_client):
    _break_in_place(kits / "weather.json")
    client = make_client(schemas_dirs=[kits], skip_invalid=True)
    reply = client.get("/toolkits")
    assert reply.status_code == 200
    assert [toolkit["name"] for toolkit in reply.json()["toolkits"]] == ["airline"] and reply.json()["total"] == 1
