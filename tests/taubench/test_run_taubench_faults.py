"""`gecko tau2 --faults`: offline end to end (scripted agent and user, no network): each job runs clean and under
the policy, the conversation's tool calls meet the real side's faults, the summary's robustness block, the
fault arm's own results file, an exact replay, and a resume that must keep the same policy."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from benchmarks.runner import ResumeError, RunOptions, build_parser, read_ledger, run_benchmark
from benchmarks.taubench.agent_tools import load_catalog
from benchmarks.taubench.benchmark import FAULT_RESULTS_FILE, RESULTS_FILE, Tau2Benchmark
from benchmarks.taubench.environment import DomainRuntime
from benchmarks.taubench.loader import DataStore
from benchmarks.taubench.messages import MessageToolCall
from benchmarks.taubench.results import Results
from benchmarks.taubench.run_config import Tau2RunConfig
from benchmarks.taubench.tool_responder import ToolResponder
from gecko_cli.main import main as gecko_main
from utils.faults import load_policy, parse_policy
from utils.settings import Settings

IDS = ["1", "2", "4", "14"]  # each makes tool calls
POLICY = {"name": "first-call-down", "seed": 5, "rules": [
    {"name": "first-call-down", "when": {"calls": [1]}, "do": {"kind": "unavailable", "retry_after": 2}},
    {"name": "coin", "when": {"probability": 0.3}, "do": {"kind": "delay", "seconds": 0.001}},
]}


def _run(tmp_path: Path, *extra: str) -> Path:
    out = tmp_path / "out"
    assert gecko_main(["tau2", "--domain", "airline", "--task-ids", ",".join(IDS), "--gats-mode", "none",
                       "--task-set", "v0", "--output-dir", str(out), "--no-progress", *extra]) == 0
    return max(out.iterdir())


def _faults_by_key(run_dir: Path) -> dict[str, Any]:
    return {e.key: (e.record.get("info") or {}).get("faults") for e in read_ledger(run_dir / "tasks.jsonl")}


def test_the_faults_flags_enter_the_run_config(tmp_path: Path) -> None:
    parser = build_parser(Tau2Benchmark, Settings())
    args = parser.parse_args(["--domain", "airline", "--faults", "stale-reads", "--fault-seed", "4"])
    config = Tau2Benchmark.from_args(args, RunOptions(output_dir=tmp_path)).settings
    assert config.faults == {**load_policy("stale-reads").public(), "seed": 4}
    assert config.result_settings()["faults"] == config.faults
    assert Tau2Benchmark.from_args(parser.parse_args(["--domain", "airline"]), RunOptions(output_dir=tmp_path)
                                   ).settings.faults is None


def test_a_bad_policy_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # the runners' bad-value convention: one line on stderr, exit 2 (returned, no SystemExit), nothing written
    assert gecko_main(["tau2", "--domain", "airline", "--faults", "no-such-profile", "--output-dir",
                       str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "no fault policy file 'no-such-profile'" in err
    assert not (tmp_path / "out").exists()


def test_offline_run_with_faults_end_to_end_and_its_replay(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    policy_file = tmp_path / "policy.json"
    policy_file.write_text(json.dumps(POLICY))
    run_dir = _run(tmp_path / "one", "--faults", str(policy_file))
    out = capsys.readouterr().out
    assert "robustness under faults (policy first-call-down, seed 5; 4 tasks done in both arms)" in out
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["groups"]["airline"]["done"] == summary["groups"]["airline+faults"]["done"] == len(IDS)
    block = summary["robustness"]
    assert block["tasks"] == {"clean_done": 4, "faults_done": 4, "paired": 4}
    assert block["accuracy"]["paired_clean"] == 1.0  # the oracle passes clean
    # every conversation's first call is refused with 503 (the scripted oracle does not retry it)
    assert block["injected"]["by_kind"]["unavailable"] == 4 and block["injected"]["errors"] == 4
    assert block["metrics"]["faults"]["real"]["injected_errors"] == 4
    assert block["metrics"]["clean"]["all"]["injected_errors"] == 0
    assert block["extra"]["calls_per_task"]["extra"] == 0.0  # the oracle makes the same calls either way
    rows = {row["key"]: row for row in summary["tasks"]}
    assert rows["1#0~faults"]["fault_policy"] == {"name": "first-call-down", "seed": 5}
    assert "fault_policy" not in rows["1#0"] and rows["1#0"]["robustness"]["all"]["calls"] >= 1
    clean = Results.model_validate_json((run_dir / RESULTS_FILE).read_text())
    faulted = Results.model_validate_json((run_dir / FAULT_RESULTS_FILE).read_text())
    assert len(clean.simulations) == len(faulted.simulations) == len(IDS)
    assert summary["evaluation"]["faults"]["num_graded"] == len(IDS)
    first_tool_messages = [next(m for m in s.messages if m.role == "tool") for s in faulted.simulations]
    assert all(m.error and '"status":503' in (m.content or "") for m in first_tool_messages)
    assert all(not (s.info or {}).get("faults") for s in clean.simulations)
    faults = _faults_by_key(run_dir)
    assert all(faults[f"{i}#0~faults"][0]["rule"] == "first-call-down" for i in IDS)

    replay = _run(tmp_path / "two", "--faults", str(policy_file))
    assert _faults_by_key(replay) == faults  # the same faults at the same calls
    again = json.loads((replay / "summary.json").read_text())["robustness"]
    assert again["accuracy"] == block["accuracy"] and again["injected"] == block["injected"]

    options = RunOptions(output_dir=tmp_path, workers=1, progress=False, resume=run_dir)
    other = Tau2RunConfig(domain="airline", task_set="v0", gats_mode="none", task_ids=tuple(IDS),
                          faults={**POLICY, "seed": 6})
    with pytest.raises(ResumeError, match="faults"):
        asyncio.run(run_benchmark(Tau2Benchmark(other, options), options))


async def test_the_responder_answers_like_the_environment_in_the_clean_arm() -> None:
    runtime = DomainRuntime("airline", DataStore(), "v0")
    catalog = load_catalog(runtime)
    call = MessageToolCall(id="c1", name="get_user_details", arguments={"user_id": "mia_li_3668"})
    expected = runtime.environment().respond(call)
    clean = ToolResponder(runtime.environment(), catalog)
    got = await clean.respond(call)
    assert (got.content, got.error) == (expected.content, expected.error)
    assert clean.records[0].outcome.ok and clean.records[0].tool is not None and clean.injections == []
    policy = parse_policy({"seed": 1, "rules": [{"name": "down", "when": {"calls": [1]}, "do": {"kind": "unavailable"}}]})
    faulty = ToolResponder(runtime.environment(), catalog, policy)
    refused = await faulty.respond(call)
    assert refused.error and '"status":503' in (refused.content or "")
    assert faulty.injections[0]["rule"] == "down" and faulty.records[0].outcome.fault is not None
    assert (await faulty.respond(call)).content == expected.content  # the second call runs
