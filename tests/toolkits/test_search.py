"""The tool index: documents, BM25 ranking, filters, determinism."""

from __future__ import annotations

from pathlib import Path

import pytest

from gecko.convert import from_openai
from gecko.convert.document import write_document
from gecko.toolkits.loader import load_toolkits
from gecko.toolkits.search import Tokenizer, ToolIndex, call_route
from tests.infra import require_module
from tests.toolkits.search_support import openai_function as _fn
from tests.toolkits.search_support import write_airline_and_weather

require_module("bm25s", "tool search needs the [search] extra (make setup installs it)")


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> ToolIndex:
    return ToolIndex(load_toolkits([write_airline_and_weather(tmp_path_factory.mktemp("kits"))]))


def test_tokenizer_splits_names_and_stems():
    from bm25s.stopwords import STOPWORDS_EN
    from Stemmer import Stemmer

    tokenize = Tokenizer(Stemmer("english"), frozenset(STOPWORDS_EN))
    assert tokenize("cancelReservation") == ["cancel", "reserv"]
    assert tokenize("math.factorial of 5 flights") == ["math", "factori", "5", "flight"]


def test_the_best_tool_comes_first(index):
    assert [h.operation.operation_id for h in index.search("book me a flight seat", 2)][0] == "book_flight"
    assert index.search("will it rain in Paris this week? weather forecast", 1)[0].operation.operation_id == "get_forecast"
    assert index.search("cancel my reservation", 1)[0].operation.operation_id == "cancelReservation"
    assert index.search("departure airport", 1)[0].operation.operation_id == "search_flights"  # argument docs count


def test_filters_k_and_no_match(index):
    hits = index.search("flight weather city", 10, toolkits=["weather"])
    assert hits and {h.toolkit.name for h in hits} == {"weather"}
    assert all(h.operation.access == "read" for h in index.search("flight", 10, access="read"))
    assert len(index.search("flight weather city reservation", 2)) == 2
    assert index.search("zzzz qqqq", 5) == []
    assert index.search("the of and", 5) == []  # stop words only


def test_ranking_is_deterministic_and_hits_are_public(index):
    first = [h.public() for h in index.search("flight", 5)]
    assert first == [h.public() for h in index.search("flight", 5)]
    assert [h["score"] for h in first] == sorted((h["score"] for h in first), reverse=True)
    hit = first[0]
    assert hit["call"] == f"POST /{hit['toolkit']}/{hit['name']}" and hit["app"] == hit["toolkit"]


def test_call_route_uses_the_callable_name(index):
    op = index.search("flight", 1)[0]
    assert call_route(op.toolkit, op.operation).startswith("POST /airline/")
    from dataclasses import replace
    slashed = replace(op.operation, operation_id="issues/create", alias="issues_create")
    assert call_route(op.toolkit, slashed) == "POST /airline/issues_create"


def test_an_empty_registry_answers_nothing(tmp_path: Path):
    assert ToolIndex(load_toolkits([tmp_path])).search("anything", 3) == []


def test_without_the_search_extra_the_endpoint_says_how_to_install_it(make_client, monkeypatch):
    import gecko.toolkits.search as search

    def missing() -> None:
        raise search.SearchUnavailable("tool search needs the 'search' extra: pip install 'gecko-gats[search]'")

    monkeypatch.setattr(search, "_load_backend", missing)
    client = make_client()
    reply = client.get("/tools/search", params={"q": "notes"})
    assert reply.status_code == 501 and "gecko-gats[search]" in reply.json()["detail"]
    assert client.get("/health").status_code == 200  # the server itself runs on


def test_other_methods_get_405_and_the_document_lists_every_status(make_client):
    client = make_client()
    for method in ("PUT", "POST", "DELETE"):
        reply = client.request(method, "/tools/search", params={"q": "notes"})
        assert reply.status_code == 405, (method, reply.text)
        assert reply.headers["allow"] == "GET"
    operation = client.get("/openapi.json").json()["paths"]["/tools/search"]["get"]
    assert {"200", "404", "422", "501", "503"} <= set(operation["responses"])
    assert operation["responses"]["200"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/ToolSearchPublic"}


def test_a_dense_index_being_built_is_a_503_with_retry_after(make_client, monkeypatch):
    import gecko.toolkits.search as search

    def building(self, *args, **kwargs):
        raise search.SearchIndexBuilding("the dense search index of 9 tools is being built (3 of 9 tools embedded)", 10)

    monkeypatch.setattr(search.ToolIndex, "search", building)
    reply = make_client().get("/tools/search", params={"q": "notes"})
    assert reply.status_code == 503 and reply.headers["retry-after"] == "10"
    assert "3 of 9 tools embedded" in reply.json()["detail"]


def test_bm25s_logs_nothing_below_the_process_level(tmp_path: Path) -> None:
    import logging

    write_document(from_openai([_fn("get_weather", "Current weather for a city.", city="city name")], title="W"),
                   tmp_path / "weather.json")
    records: list[logging.LogRecord] = []

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            records.append(record)

    handler = Collect()
    root = logging.getLogger()
    level = root.level
    root.addHandler(handler)
    root.setLevel(logging.INFO)  # what `gecko serve` and the runners configure by default
    try:
        assert ToolIndex(load_toolkits([tmp_path])).search("weather")
    finally:
        root.removeHandler(handler)
        root.setLevel(level)
    assert not [r.getMessage() for r in records if r.name.startswith("bm25s") and r.levelno < logging.INFO]
