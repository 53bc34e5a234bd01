"""The BFCL V4 single-turn categories the paper's slice skipped (parallel_multiple, live_parallel,
live_parallel_multiple, live_relevance): loaded, scored as `bfcl evaluate` scores them, and run by the scripted
oracle over HTTP at accuracy 1.0."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.bfcl.benchmark import BfclMultiTurn, BfclSingleTurn
from benchmarks.bfcl.categories import (
    LIVE_CATEGORIES,
    MULTI_TURN_CATEGORIES,
    NON_LIVE_CATEGORIES,
    category_group,
    is_relevance,
)
from benchmarks.bfcl.loader import SingleTurnTask, load_category
from benchmarks.bfcl.oracle import single_turn_oracle_calls
from benchmarks.bfcl.parse import format_calls
from benchmarks.bfcl.scoring import score_single_turn
from gecko_cli.main import main as gecko_main
from tests.bfcl.bfcl_support import run_single

V4_CATEGORIES = ("parallel_multiple", "live_parallel", "live_parallel_multiple", "live_relevance")


def _relevance_task() -> SingleTurnTask:
    task = load_category("live_relevance")[0]
    assert isinstance(task, SingleTurnTask)
    return task


def test_live_relevance_is_correct_iff_a_call_is_made() -> None:
    task = _relevance_task()
    assert is_relevance("live_relevance") and category_group("live_relevance") == "live"
    assert task.ground_truth is None and len(load_category("live_relevance")) == 16
    prose = score_single_turn(task, "I cannot create images.")
    assert not prose.valid and prose.error_type == "relevance_error:decoder_failed"
    assert not score_single_turn(task, "[]").valid  # an empty call list is not a call (as bfcl evaluate)
    assert not score_single_turn(task, "[search_engine.query(prompt=open('x'))]").valid  # refused: fails closed
    calls = single_turn_oracle_calls(task)
    assert [c.name for c in calls] == ["search_engine.query"] and calls[0].arguments == {"prompt": "example"}
    assert score_single_turn(task, format_calls(calls)).valid


def test_the_oracle_passes_every_task_of_the_new_categories() -> None:
    for category in V4_CATEGORIES:
        for task in load_category(category):
            assert isinstance(task, SingleTurnTask)
            score = score_single_turn(task, format_calls(single_turn_oracle_calls(task)))
            assert score.valid, (task.id, score.errors)


def test_the_scripted_oracle_over_http_scores_1_on_each_new_category(sample_gecko: str, tmp_path: Path) -> None:
    summary = run_single(sample_gecko, tmp_path, categories=V4_CATEGORIES, model="scripted-oracle", num_tasks=4)
    assert set(summary.groups) == set(V4_CATEGORIES)
    assert summary.total.untested == 0 and summary.total.errored == 0
    categories = summary.evaluation.metrics["categories"]
    for category in V4_CATEGORIES:
        assert summary.groups[category].done == 4
        assert categories[category]["accuracy"] == 1.0, category


def test_group_selects_a_leaderboard_group(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert BfclSingleTurn.group_categories("non_live") == NON_LIVE_CATEGORIES
    assert "parallel_multiple" in NON_LIVE_CATEGORIES and "live_relevance" in LIVE_CATEGORIES
    assert BfclSingleTurn.group_categories("live") == LIVE_CATEGORIES
    assert BfclMultiTurn.group_categories("multi_turn") == MULTI_TURN_CATEGORIES
    for command, group, message in (("bfcl-multi", "live", "gecko bfcl --group live"),):
        capsys.readouterr()
        assert gecko_main([command, "--group", group, "--model", "scripted-oracle", "--output-dir",
                           str(tmp_path)]) == 2
        err = capsys.readouterr().err
        assert message in err and "Traceback" not in err, err
    assert gecko_main(["bfcl", "--group", "live", "--category", "live_simple", "--model", "scripted-oracle",
                       "--output-dir", str(tmp_path)]) == 2
    assert "not both" in capsys.readouterr().err
    assert not any(tmp_path.iterdir())


def test_a_sweep_prints_the_leaderboard_rows(sample_gecko: str, tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    assert gecko_main(["bfcl", "--group", "live", "--model", "scripted-oracle", "--num-tasks", "2", "--gecko-url",
                       sample_gecko, "--output-dir", str(tmp_path), "--no-progress", "--no-cache"]) == 0
    out = capsys.readouterr().out
    assert "BFCL V4 leaderboard" in out
    rows = {line.split()[0]: line.split() for line in out.splitlines() if line.strip()}
    assert rows["live"][1:3] == ["10", "100.00%"] and rows["relevance"][1:3] == ["-", "100.00%"]
    assert rows["overall"][1:3] == ["100", "n/a"] and rows["non_live"][2] == "n/a"
