"""`gecko bfcl --category all | --group G`: the V4 leaderboard's categories in one run directory (single-turn tasks on
the stateless Gecko, multi-turn and agentic ones on a stateful Gecko the run starts itself), and one leaderboard table
where what was not scored (web_search without a search key, format_sensitivity) has no value, never 0%."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.bfcl.categories import (
    MEMORY_CATEGORIES,
    MULTI_TURN_CATEGORIES,
    SINGLE_TURN_CATEGORIES,
    WEB_SEARCH_CATEGORIES,
)
from benchmarks.bfcl.leaderboard import (
    FORMAT_SENSITIVITY_NOTE,
    LEADERBOARD_CATEGORIES,
    format_leaderboard,
    leaderboard,
)
from benchmarks.bfcl.overall import OverallReport, overall_report
from benchmarks.bfcl.sweep import BfclSweep, SweepRunConfig, sweep_categories, sweep_group
from benchmarks.bfcl.web_search import SEARCH_KEY_ENV
from benchmarks.registry import load_benchmark
from benchmarks.runner import RunOptions
from benchmarks.runner.summary import EXIT_UNSCORED
from gecko_cli.main import main as gecko_main
from tests.bfcl.multi_support import MULTI_TURN_TOOLKITS


def _scored(report: OverallReport) -> set[str]:
    return set(LEADERBOARD_CATEGORIES) - set(report.board.missing)


def test_all_is_the_leaderboards_all_and_every_group_is_selectable() -> None:
    every = sweep_categories("all")
    assert set(every) == set(LEADERBOARD_CATEGORIES)  # every V4 scoring category
    assert sweep_group("multi_turn") == MULTI_TURN_CATEGORIES
    assert set(sweep_group("agentic")) == set(WEB_SEARCH_CATEGORIES) | set(MEMORY_CATEGORIES)
    assert set(sweep_group("non_live")) | set(sweep_group("live")) == set(SINGLE_TURN_CATEGORIES)
    command = load_benchmark("bfcl")
    options = RunOptions(output_dir=Path("unused"))
    assert isinstance(command.from_config({"categories": ["multi_turn_base"], "model": "scripted-oracle"},
                                          options), BfclSweep)
    with pytest.raises(ValueError, match="not a BFCL category"):
        sweep_categories("memory_everything")


def test_format_sensitivity_is_reported_apart_and_never_counts_as_missing() -> None:
    board = leaderboard({})
    apart = next(row for row in board.rows if row.name == "format_sensitivity")
    assert apart.weight == 0 and apart.accuracy is None and "format_sensitivity" not in board.missing
    assert "not run (reported apart)" in format_leaderboard(board)


def test_a_sweep_keeps_the_stateful_runners_own_step_and_checklist_defaults() -> None:
    config = SweepRunConfig(categories=("simple_python", "multi_turn_base"), model="scripted-oracle", max_steps=7)
    sweep = BfclSweep(config, RunOptions(output_dir=Path("unused")))
    assert sweep.single is not None and sweep.stateful is not None
    assert sweep.single.settings.max_steps == 7 and not sweep.single.settings.generate_checklist
    assert sweep.stateful.settings.max_steps == 20 and sweep.stateful.settings.generate_checklist


@pytest.mark.integration
def test_a_sweep_runs_every_kind_in_one_run_and_prints_one_leaderboard_table(
        sample_gecko: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    if not (MULTI_TURN_TOOLKITS / "WebSearchAPI.json").exists():
        pytest.fail("the BFCL multi-turn toolkits are not built (make toolkits)")
    monkeypatch.delenv(SEARCH_KEY_ENV, raising=False)
    code = gecko_main(["bfcl", "--ids", "simple_python_0", "live_simple_0-0-0", "multi_turn_base_0",
                       "web_search_base_0", "memory_kv_0-customer-0", "--category", "all", "--model", "scripted-oracle", "--workers", "2",
                       "--gecko-url", sample_gecko, "--output-dir", str(tmp_path), "--no-progress",
                       "--stop-after-untested", "1"])
    out = capsys.readouterr().out
    assert code == EXIT_UNSCORED, out  # the untested web_search task: not scored, --resume with a key runs it
    run_dir = next(tmp_path.iterdir())
    summary = json.loads((run_dir / "summary.json").read_text())
    categories = summary["evaluation"]["categories"]
    assert {c: categories[c]["accuracy"] for c in categories} == {
        "simple_python": 1.0, "live_simple": 1.0, "multi_turn_base": 1.0, "memory_kv": 1.0}
    assert out.count("BFCL V4 leaderboard") == 1 and out.count("\nrow ") == 1
    assert "untested (no value, never 0%): web_search_base 1 task(s): SERPAPI_API_KEY is not set" in out
    assert FORMAT_SENSITIVITY_NOTE in out
    agentic = next(line for line in out.splitlines() if line.startswith("agentic "))
    assert "n/a" in agentic and "0.00%" not in agentic
    overall = next(line for line in out.splitlines() if line.startswith("overall "))
    assert "n/a" in overall
    environment = json.loads((run_dir / "config.json").read_text())["environment"]
    assert environment["bfcl-multi"]["gecko_url"] != sample_gecko  # its own stateful Gecko (auto)
    assert environment["bfcl-multi"]["settings"]["max_steps"] == 20
    assert environment["bfcl-memory"]["gecko_url"] not in (sample_gecko, environment["bfcl-multi"]["gecko_url"])
    assert (run_dir / "result" / "scripted-oracle" / "agentic" / "memory" / "kv").is_dir()
    report = overall_report([run_dir])  # gecko score --overall: memory's nested files found, its prerequisites not
    assert _scored(report) == {"simple_python", "live_simple", "multi_turn_base", "memory_kv"}
    assert "web_search_base" in report.board.missing and report.board.overall is None


def test_a_part_that_cannot_run_the_model_is_listed_as_not_run() -> None:
    config = SweepRunConfig(categories=("simple_python", "memory_kv"), model="scripted-noisy")
    sweep = BfclSweep(config, RunOptions(output_dir=Path("unused")))
    assert sweep.memory is None and [part.name for part in sweep.parts()] == ["bfcl"]
    assert "no memory script" in sweep.not_run["memory_kv"]
