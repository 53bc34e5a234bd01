"""The scripted oracle through the whole single-turn path (real Gecko over HTTP, GATS, export, official
checker) scores 100% except exactly the five data-bug ids."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from bfcl_support import DATA_BUG_IDS, SINGLE_TURN_TOOLKITS, require_toolkits, sample_ids

from benchmarks.bfcl.batch import SingleTurnRunConfig, run_single_turn
from benchmarks.bfcl.categories import SINGLE_TURN_CATEGORIES
from benchmarks.bfcl.export import read_results
from utils.procs import gecko_server


def _failed_ids(run_dir: Path) -> set[str]:
    failed = set()
    for path in run_dir.glob("traces_*.jsonl"):
        for line in path.read_text(encoding="utf-8").splitlines():
            trace = json.loads(line)
            if trace.get("valid") is not True:
                failed.add(trace["id"])
    return failed


def _run(url: str, out: Path, categories: tuple[str, ...], ids: tuple[str, ...] | None) -> object:
    config = SingleTurnRunConfig(categories=categories, model="scripted-oracle", gecko_url=url, output_dir=out,
                                 ids=ids, workers=16, max_retries=2, progress=False)
    return asyncio.run(run_single_turn(config))


def test_oracle_sample_of_every_category(sample_gecko: str, tmp_path: Path) -> None:
    ids = tuple(i for category_ids in sample_ids().values() for i in category_ids)
    report = _run(sample_gecko, tmp_path, SINGLE_TURN_CATEGORIES, ids)
    assert {c.category for c in report.categories} == set(SINGLE_TURN_CATEGORIES)
    assert all(c.untested == 0 and c.crashed == 0 for c in report.categories)
    assert _failed_ids(report.run_dir) == set(DATA_BUG_IDS)
    for category in report.categories:
        records = read_results(Path(category.result_file))
        assert len(records) == category.selected


@pytest.mark.slow
@pytest.mark.integration
def test_oracle_all_seven_categories(tmp_path: Path) -> None:
    require_toolkits()
    with gecko_server([SINGLE_TURN_TOOLKITS], workers=2, state_dir=tmp_path / "state",
                      extra=["--state-model", "none"], timeout=300) as url:
        report = _run(url, tmp_path / "out", SINGLE_TURN_CATEGORIES, None)
    assert sum(c.finished for c in report.categories) == sum(c.dataset_size for c in report.categories)
    assert _failed_ids(report.run_dir) == set(DATA_BUG_IDS)
    accuracy = {c.category: c.accuracy for c in report.categories}
    assert all(accuracy[c] == 1.0 for c in ("simple_python", "multiple", "parallel", "irrelevance", "live_irrelevance"))
