"""The scripted noisy agent through GATS on a real Gecko: lower at 0 retries; with retries every
schema-detectable error is fixed (feedback names it) while semantic errors stay (nothing names them)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from benchmarks.bfcl.loader import load_category
from benchmarks.runner import RunSummary
from inference.agents.noise import NOISE_KINDS
from tests.bfcl.bfcl_support import NOISY_SAMPLE, run_single, traces


def _run(url: str, out: Path, retries: int) -> tuple[RunSummary, dict[str, dict[str, Any]]]:
    ids = tuple(task.id for category, n in NOISY_SAMPLE.items() for task in load_category(category)[:n])
    summary = run_single(url, out, categories=tuple(NOISY_SAMPLE), model="scripted-noisy", ids=ids,
                         max_retries=retries, seed=0)
    return summary, traces(summary.run_dir)


@pytest.fixture(scope="module")
def noisy_runs(sample_gecko: str, tmp_path_factory: pytest.TempPathFactory) -> dict[int, tuple[RunSummary, dict]]:
    return {retries: _run(sample_gecko, tmp_path_factory.mktemp(f"noisy{retries}"), retries) for retries in (0, 2)}


def _corruptions(trace: dict[str, Any]) -> list[dict[str, Any]]:
    return trace["agent_info"]["corruptions"]


def test_every_error_kind_is_exercised(noisy_runs: dict) -> None:
    _, traces = noisy_runs[2]
    kinds = {c["kind"] for trace in traces.values() for c in _corruptions(trace)}
    assert kinds == set(NOISE_KINDS)


def test_no_retries_scores_lower_and_every_error_costs_the_task(noisy_runs: dict) -> None:
    base, base_traces = noisy_runs[0]
    gats, _ = noisy_runs[2]
    for before, after in zip(base.groups.values(), gats.groups.values(), strict=True):
        assert before.score < after.score, before.group
    for task_id, trace in base_traces.items():
        assert len(trace["attempts"]) == 1 and trace["status"] == "skipped"
        assert trace["valid"] is (not _corruptions(trace)), task_id


def test_retries_fix_every_schema_error_and_keep_semantic_ones(noisy_runs: dict) -> None:
    _, traces = noisy_runs[2]
    checked = {"detectable": 0, "semantic": 0}
    for task_id, trace in traces.items():
        corruptions = _corruptions(trace)
        for corruption in corruptions:
            assert corruption["fixed"] is corruption["detectable"], (task_id, corruption)
        if any(not c["detectable"] for c in corruptions):
            checked["semantic"] += 1
            assert trace["valid"] is False, task_id
        else:
            checked["detectable"] += bool(corruptions)
            assert trace["valid"] is True, task_id
    assert checked["detectable"] > 10 and checked["semantic"] > 3
