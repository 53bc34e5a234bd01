"""`gecko bfcl-multi --faults` on a real Gecko (rules state model), offline with the scripted oracle: each task
runs clean and under the policy, on both sides (the Gecko session's policy for GATS attempts, `FaultyBackend` on
the real tool classes); the official files hold the clean arm; the robustness block; an exact replay."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from benchmarks.bfcl.benchmark import RESULT_DIR, BfclMultiTurn
from benchmarks.bfcl.export import read_results, result_path
from benchmarks.bfcl.run_config import MultiTurnRunConfig
from benchmarks.runner import RunOptions, RunSummary, build_parser, run_benchmark
from tests.bfcl.multi_support import multi_turn_gecko
from utils.faults import load_policy
from utils.settings import Settings

pytestmark = pytest.mark.integration
ORACLE = "scripted-oracle"
POLICY = {"name": "both-sides", "seed": 9, "rules": [
    {"name": "real-down", "when": {"side": "real", "calls": [1]}, "do": {"kind": "unavailable"}},
    {"name": "sim-flaky", "when": {"side": "simulated", "probability": 0.3}, "do": {"kind": "server_error",
                                                                                     "status": 502}},
]}


@pytest.fixture(scope="module")
def gecko(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with multi_turn_gecko(tmp_path_factory.mktemp("mt-faults-gecko")) as url:
        yield url


async def _run(url: str, out: Path, **settings: Any) -> RunSummary:
    config = MultiTurnRunConfig(model=ORACLE, num_tasks=3, faults=POLICY, **settings)
    options = RunOptions(output_dir=out, gecko_url=url, workers=2, progress=False)
    return await run_benchmark(BfclMultiTurn(config, options), options)


def _fault_records(run_dir: Path) -> dict[str, list[Any]]:
    """Every call's fault record (None when none) per task and side, in order."""
    out: dict[str, list[Any]] = {}
    for line in (run_dir / "traces_multi_turn_base+faults.jsonl").read_text(encoding="utf-8").splitlines():
        trace = json.loads(line)
        out[trace["id"]] = [
            [[call.get("fault") for call in attempt["calls"]] for attempt in turn["simulated"]["attempts"]]
            + [[call.get("fault") for call in (turn["real"] or {}).get("calls", [])]]
            for turn in trace["turns"]]
    return out


def test_the_flags_enter_the_config(tmp_path: Path) -> None:
    parser = build_parser(BfclMultiTurn, Settings())
    args = parser.parse_args(["--model", ORACLE, "--faults", "flaky-network", "--fault-seed", "3"])
    config = BfclMultiTurn.from_args(args, RunOptions(output_dir=tmp_path)).settings
    assert config.faults == {**load_policy("flaky-network").public(), "seed": 3}
    assert config.result_settings()["faults"]["seed"] == 3
    items = BfclMultiTurn(config.model_copy(update={"num_tasks": 2}), RunOptions(output_dir=tmp_path)).select()
    assert [i.key for i in items] == ["multi_turn_base_0", "multi_turn_base_0~faults", "multi_turn_base_1",
                                      "multi_turn_base_1~faults"]


async def test_a_run_with_faults_on_both_sides_and_its_exact_replay(gecko: str, tmp_path: Path) -> None:
    summary = await _run(gecko, tmp_path / "one")
    clean, faulted = summary.groups["multi_turn_base"], summary.groups["multi_turn_base+faults"]
    assert (clean.done, clean.score, faulted.done) == (3, 1.0, 3)
    # the official files are the clean arm's
    assert summary.evaluation.metrics["categories"]["multi_turn_base"]["scored"] == 3
    records = read_results(result_path(summary.run_dir / RESULT_DIR, ORACLE, "multi_turn_base"))
    assert sorted(r.id for r in records) == ["multi_turn_base_0", "multi_turn_base_1", "multi_turn_base_2"]
    block = summary.robustness
    assert block is not None and block["tasks"]["paired"] == 3 and block["accuracy"]["paired_clean"] == 1.0
    assert block["policy"] == {"name": "both-sides", "seed": 9}
    metrics = block["metrics"]["faults"]
    assert metrics["real"]["injected_errors"] == 3  # the first real call of each task
    assert metrics["simulated"]["injected_errors"] > 0 and block["injected"]["by_kind"]["server_error"] > 0
    assert block["metrics"]["clean"]["all"]["injected_errors"] == 0
    # the oracle does not retry a refused real call: that call did not happen, and is not in the result
    assert block["accuracy"]["paired_faults"] < 1.0
    written = json.loads((summary.run_dir / "summary.json").read_text())
    assert written["robustness"] == json.loads(json.dumps(block))
    faults = _fault_records(summary.run_dir)
    assert faults and all(key.endswith("~faults") for key in faults)  # traces are keyed like the checkpoint
    firsts = [next(f for turn in task for f in turn[-1]) for task in faults.values()]  # each task's first real call
    assert all(f is not None and f["rule"] == "real-down" for f in firsts)

    replay = await _run(gecko, tmp_path / "two")
    assert _fault_records(replay.run_dir) == faults  # the same faults at the same calls, on both sides
    assert replay.robustness is not None and replay.robustness["accuracy"] == block["accuracy"]
