"""`gecko bfcl --faults` (single-turn) on a real Gecko: each task runs clean and under the policy; the policy
rides on the task's Gecko session, so every GATS attempt (a fork) meets it; the official files are the clean
arm's and the summary's robustness block counts the simulated side."""

from __future__ import annotations

from pathlib import Path

from benchmarks.bfcl.export import read_results
from tests.bfcl.bfcl_support import DATA_BUG_IDS, run_single, sample_ids

POLICY = {"name": "first-call-down", "seed": 2, "rules": [
    {"name": "first-call-down", "when": {"calls": [1]}, "do": {"kind": "unavailable"}}]}


def test_single_turn_tasks_under_faults(sample_gecko: str, tmp_path: Path) -> None:
    ids = tuple(i for i in sample_ids()["simple_python"] if i not in DATA_BUG_IDS)[:4]
    summary = run_single(sample_gecko, tmp_path, categories=("simple_python",), model="scripted-oracle", ids=ids,
                         max_retries=1, faults=POLICY)
    clean, faulted = summary.groups["simple_python"], summary.groups["simple_python+faults"]
    assert (clean.done, clean.score, faulted.done) == (len(ids), 1.0, len(ids))
    records = read_results(Path(summary.evaluation.metrics["categories"]["simple_python"]["result_file"]))
    assert sorted(r.id for r in records) == sorted(ids)  # the official file holds the clean arm only
    block = summary.robustness
    assert block is not None and block["tasks"]["paired"] == len(ids)
    simulated = block["metrics"]["faults"]["simulated"]
    # every attempt is a fork that inherits the session's policy and count: its first call is refused
    assert simulated["injected_errors"] == simulated["episodes"] >= len(ids)
    assert "real" not in block["metrics"]["faults"] and block["metrics"]["clean"]["all"]["injected_errors"] == 0
