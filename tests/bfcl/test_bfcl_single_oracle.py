"""The scripted oracle through the whole single-turn path (real Gecko over HTTP, GATS, the runner, export,
official checker) scores 100% except exactly the five data-bug ids."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks.bfcl.categories import SINGLE_TURN_CATEGORIES
from benchmarks.bfcl.export import read_results
from tests.bfcl.bfcl_support import (
    DATA_BUG_IDS,
    SINGLE_TURN_TOOLKITS,
    require_toolkits,
    run_single,
    sample_ids,
    traces,
)
from utils.procs import gecko_server


def _failed_ids(run_dir: Path) -> set[str]:
    return {task_id for task_id, trace in traces(run_dir).items() if trace.get("valid") is not True}


def test_oracle_sample_of_every_category(sample_gecko: str, tmp_path: Path) -> None:
    ids = tuple(i for category_ids in sample_ids().values() for i in category_ids)
    summary = run_single(sample_gecko, tmp_path, categories=SINGLE_TURN_CATEGORIES, model="scripted-oracle", ids=ids)
    assert set(summary.groups) == set(SINGLE_TURN_CATEGORIES)
    assert summary.total.untested == 0 and summary.total.errored == 0
    assert _failed_ids(summary.run_dir) == set(DATA_BUG_IDS)
    categories = summary.evaluation.metrics["categories"]
    for name, group in summary.groups.items():
        records = read_results(Path(categories[name]["result_file"]))
        assert len(records) == group.selected == group.done
        assert categories[name]["accuracy"] == group.score  # the official checker agrees with the running score


@pytest.mark.slow
@pytest.mark.integration
def test_oracle_all_single_turn_categories(tmp_path: Path) -> None:
    require_toolkits()
    with gecko_server([SINGLE_TURN_TOOLKITS], workers=2, state_dir=tmp_path / "state",
                      extra=["--state-model", "none"], timeout=300) as url:
        summary = run_single(url, tmp_path / "out", categories=SINGLE_TURN_CATEGORIES, model="scripted-oracle")
    categories = summary.evaluation.metrics["categories"]
    assert summary.total.done == sum(c["dataset_size"] for c in categories.values())
    assert _failed_ids(summary.run_dir) == set(DATA_BUG_IDS)
    assert all(categories[c]["accuracy"] == 1.0
               for c in ("simple_python", "multiple", "parallel", "parallel_multiple", "irrelevance", "live_parallel",
                         "live_parallel_multiple", "live_irrelevance", "live_relevance"))
