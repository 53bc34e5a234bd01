"""The BFCL V4 overall score (`gecko score --overall [--official] RUN_DIR…`): the leaderboard's rows and weights,
categories not run listed as missing and never counted as 0%, and the official leaderboard code's values equal to
ours on every complete row."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.bfcl.leaderboard import LEADERBOARD_CATEGORIES, OVERALL_WEIGHTS, Scored, leaderboard
from benchmarks.bfcl.official import bfcl_venv
from gecko_cli.main import main as gecko_main
from tests.bfcl.bfcl_support import run_single


def _all(accuracy: float) -> dict[str, Scored]:
    return {category: Scored(accuracy, 10) for category in LEADERBOARD_CATEGORIES}


def test_the_v4_weights_and_rows() -> None:
    assert OVERALL_WEIGHTS == {"non_live": 10, "live": 10, "irrelevance": 10, "multi_turn": 30, "agentic": 40}
    assert len(LEADERBOARD_CATEGORIES) == 22 and "live_relevance" in LEADERBOARD_CATEGORIES
    scores = _all(1.0) | {"multi_turn_base": Scored(0.0, 10)}  # multi_turn row = 0.75
    scores |= {"live_simple": Scored(0.5, 30)}  # live row weighted by entries: (0.5*30 + 3*10) / 60 = 0.75
    board = leaderboard(scores)
    rows = {row.name: row.accuracy for row in board.rows}
    assert rows["multi_turn"] == 0.75 and rows["live"] == 0.75 and rows["non_live"] == 1.0
    assert board.missing == () and board.overall == pytest.approx((10 + 7.5 + 10 + 22.5 + 40) / 100)


def test_a_category_not_run_is_missing_never_zero() -> None:
    scores = _all(1.0)
    del scores["simple_java"]
    board = leaderboard(scores)
    rows = {row.name: row for row in board.rows}
    assert board.missing == ("simple_java",) and board.overall is None
    assert rows["non_live"].accuracy is None and rows["non_live"].missing == ("simple_java",)
    assert rows["live"].accuracy == 1.0 and rows["multi_turn"].accuracy == 1.0


def test_score_overall_lists_what_was_not_run(sample_gecko: str, tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    run = run_single(sample_gecko, tmp_path, categories=("irrelevance", "live_irrelevance"), model="scripted-oracle",
                     num_tasks=3)
    capsys.readouterr()
    assert gecko_main(["score", "--overall", str(run.run_dir)]) == 0
    out = capsys.readouterr().out
    assert "not run (no value, never counted as 0%): simple_python," in out
    lines = {line.split()[0]: line.split() for line in out.splitlines() if line.strip()}
    assert lines["irrelevance"][:3] == ["irrelevance", "10", "100.00%"]
    assert lines["overall"][:3] == ["overall", "100", "n/a"]
    assert gecko_main(["score", "--overall", str(run.run_dir), str(run.run_dir)]) == 1  # a category given twice


@pytest.mark.slow
@pytest.mark.integration
@pytest.mark.timeout(1200)
def test_the_official_leaderboard_code_agrees_on_complete_rows(sample_gecko: str, tmp_path: Path,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    bfcl_venv().ensure()
    live = ("live_simple", "live_multiple", "live_parallel", "live_parallel_multiple", "live_relevance")
    first = run_single(sample_gecko, tmp_path / "a", categories=(*live, "parallel_multiple"), model="scripted-noisy",
                       num_tasks=4, max_retries=0)
    second = run_single(sample_gecko, tmp_path / "b", categories=("irrelevance", "live_irrelevance"),
                        model="scripted-noisy", num_tasks=4, max_retries=0)
    capsys.readouterr()
    assert gecko_main(["score", "--official", str(first.run_dir)]) == 0  # per category: bfcl evaluate's counts
    assert "the official tools agree with our figures" in capsys.readouterr().out
    code = gecko_main(["score", "--official", "--overall", str(first.run_dir), str(second.run_dir)])
    out = capsys.readouterr().out
    assert code == 0, out
    assert "the official leaderboard code agrees with our rows" in out
    lines = {line.split()[0]: line.split() for line in out.splitlines() if line.strip()}
    for row in ("live", "irrelevance", "relevance"):
        assert lines[row][2] == lines[row][3] and lines[row][2] != "n/a", out
    assert lines["overall"][2:4] == ["n/a", "n/a"]  # the official CSV's overall counts the missing as 0: not shown
