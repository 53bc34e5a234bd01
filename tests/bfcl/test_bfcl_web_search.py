"""BFCL web_search (agentic) through the whole path on a real Gecko: Gecko simulates the search tool in the GATS
rehearsal, the real run calls bfcl-eval's own WebSearchAPI, whose SerpAPI base URL points at a local stub here (no
network); without SERPAPI_API_KEY every task is untested, never scored, and the leaderboard has no agentic value."""

from __future__ import annotations

import importlib.util
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlparse

import pytest
from serpapi import GoogleSearch  # type: ignore[import-untyped]  # bfcl-eval's SerpAPI client (no stubs)

from benchmarks.bfcl.benchmark import BfclMultiTurn, multi_turn_categories, multi_turn_group
from benchmarks.bfcl.leaderboard import Scored, leaderboard
from benchmarks.bfcl.loader import WebSearchTask, load_category
from benchmarks.bfcl.official import bfcl_venv
from benchmarks.bfcl.run_config import MultiTurnRunConfig
from benchmarks.bfcl.scoring import score_entry
from benchmarks.bfcl.web_search import SEARCH_KEY_ENV, missing_backend, oracle_answer
from benchmarks.runner import RunOptions, RunSummary, run_benchmark
from benchmarks.runner.checkpoint import LEDGER_FILE, read_ledger
from tests.bfcl.multi_support import multi_turn_gecko

ORACLE = "scripted-oracle"


class _StubSerpApi(BaseHTTPRequestHandler):
    """SerpAPI's `/search` (DuckDuckGo engine) with one organic result; records each query."""

    queries: list[dict[str, list[str]]] = []

    def do_GET(self) -> None:
        query = parse_qs(urlparse(self.path).query)
        type(self).queries.append(query)
        body = json.dumps({"organic_results": [{"title": "Stub result", "link": "http://127.0.0.1/page",
                                                "snippet": "a stub snippet"}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        """Quiet."""


@pytest.fixture
def stub_serpapi(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[dict[str, list[str]]]]:
    """A local SerpAPI: the official tool's client (`serpapi.GoogleSearch`) sends its searches here."""
    _StubSerpApi.queries = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _StubSerpApi)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    monkeypatch.setattr(GoogleSearch, "BACKEND", f"http://127.0.0.1:{server.server_address[1]}")
    monkeypatch.setenv(SEARCH_KEY_ENV, "stub-key")
    try:
        yield _StubSerpApi.queries
    finally:
        server.shutdown()
        server.server_close()


def test_web_search_tasks_load_as_the_official_generator_builds_them() -> None:
    base, no_snippet = load_category("web_search_base"), load_category("web_search_no_snippet")
    assert len(base) == len(no_snippet) == 100
    task = no_snippet[0]
    assert isinstance(task, WebSearchTask) and task.id == "web_search_no_snippet_0"
    assert task.initial_config == {"WebSearchAPI": {"show_snippet": False}}
    assert base[0].initial_config == {"WebSearchAPI": {"show_snippet": True}}
    assert task.turns[0][0].role == "system" and "'answer'" in task.turns[0][0].content
    assert task.answers == ("Zhang Yiming",)


def test_agentic_scoring_reads_the_last_message_without_a_call() -> None:
    task = load_category("web_search_base")[0]
    assert isinstance(task, WebSearchTask)
    call = "[search_engine_query(keywords='tea')]"
    assert score_entry(task, [[call, oracle_answer(task)]]).valid
    assert score_entry(task, [[call, "{'answer': 'I do not know', 'context': '-'}"]]).error_type == \
        "agentic:answer_not_found"
    assert score_entry(task, [[call]]).error_type == "agentic:no_last_message"
    assert score_entry(task, [[call], ["x"]]).error_type == "agentic:inference_error"


def test_a_key_without_the_real_tools_modules_is_still_untested(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SEARCH_KEY_ENV, "a-key")
    assert missing_backend() is None
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None if name == "html2text" else real(name))
    assert "html2text" in (missing_backend() or "")


def test_agentic_group_is_run_by_the_multi_turn_runner() -> None:
    assert {"web_search_base", "web_search_no_snippet"} <= set(multi_turn_group("agentic"))
    assert multi_turn_categories("web_search_no_snippet") == ("web_search_no_snippet",)


def test_untested_web_search_leaves_the_agentic_row_and_overall_without_value() -> None:
    scores = {c: Scored(1.0, 10) for c in ("simple_python", "memory_kv")}
    board = leaderboard(scores)
    agentic = next(row for row in board.rows if row.name == "agentic")
    assert agentic.accuracy is None and "web_search_base" in agentic.missing and board.overall is None


@pytest.fixture(scope="module")
def gecko(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with multi_turn_gecko(tmp_path_factory.mktemp("ws-gecko")) as url:
        yield url


async def _run(url: str, out: Path, categories: tuple[str, ...], num_tasks: int) -> RunSummary:
    config = MultiTurnRunConfig(categories=categories, model=ORACLE, num_tasks=num_tasks)
    options = RunOptions(output_dir=out, gecko_url=url, workers=2, progress=False, stop_after_untested=3)
    return await run_benchmark(BfclMultiTurn(config, options), options)


@pytest.mark.integration
async def test_without_a_key_every_task_is_untested_and_the_breaker_does_not_trip(
        gecko: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(SEARCH_KEY_ENV, raising=False)
    summary = await _run(gecko, tmp_path, ("web_search_base", "multi_turn_base"), 5)
    group = summary.groups["web_search_base"]
    assert (group.done, group.untested, group.errored) == (0, 5, 0)
    assert summary.groups["multi_turn_base"].done == 5  # 5 untested in a row (limit 3) stopped nothing
    assert "web_search_base" not in summary.evaluation.metrics["categories"]


@pytest.mark.integration
async def test_with_a_key_gecko_rehearses_and_the_official_tool_runs_for_real(
        gecko: str, tmp_path: Path, stub_serpapi: list[dict[str, list[str]]]) -> None:
    summary = await _run(gecko, tmp_path, ("web_search_base", "web_search_no_snippet"), 2)
    for category in ("web_search_base", "web_search_no_snippet"):
        group = summary.groups[category]
        assert (group.done, group.untested, group.score) == (2, 0, 1.0)
        assert summary.evaluation.metrics["categories"][category]["accuracy"] == 1.0
    assert len(stub_serpapi) == 4 and all(q["engine"] == ["duckduckgo"] and q["api_key"] == ["stub-key"]
                                          for q in stub_serpapi)
    traces = [json.loads(line) for line in (summary.run_dir / "traces_web_search_no_snippet.jsonl").open()]
    turn = traces[0]["turns"][0]
    simulated = turn["simulated"]["attempts"][0]["calls"][0]
    real = turn["real"]["calls"][0]
    assert simulated["name"] == real["name"] == "search_engine_query"
    assert "Stub result" not in json.dumps(simulated) and "Stub result" in json.dumps(real)
    assert "a stub snippet" not in json.dumps(real)  # no_snippet: the real tool hides the snippet


@pytest.mark.slow
@pytest.mark.integration
@pytest.mark.timeout(1200)
async def test_bfcl_evaluate_scores_our_web_search_files_as_we_do(
        gecko: str, tmp_path: Path, stub_serpapi: list[dict[str, list[str]]]) -> None:
    bfcl_venv().ensure()  # the official CLI's venv (built on first use)
    summary = await _run(gecko, tmp_path, ("web_search_base", "web_search_no_snippet"), 3)
    config = MultiTurnRunConfig(categories=("web_search_base", "web_search_no_snippet"), model=ORACLE, num_tasks=3)
    bench = BfclMultiTurn(config, RunOptions(output_dir=tmp_path, progress=False))
    check = bench.official_check(read_ledger(summary.run_dir / LEDGER_FILE), summary.run_dir)
    assert check.agrees and not check.problems, check
    assert dict((figure, ours) for figure, ours, _ in check.rows) == {
        "web_search_base correct": 3, "web_search_base scored": 3,
        "web_search_no_snippet correct": 3, "web_search_no_snippet scored": 3}
