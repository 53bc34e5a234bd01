"""`run_taubench.py` (a shim over `gecko tau2`) and the tau2 benchmark on the shared runner: offline scripted
runs (GATS on and off), the output files, untested runs left out of the metrics and rerun by `--resume`."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchmarks.registry import load_details
from benchmarks.runner import ResumeError, RunOptions, build_parser, read_ledger, run_benchmark
from benchmarks.runner.report import load_run
from benchmarks.runner.run_view import RunView
from benchmarks.taubench.benchmark import Tau2Benchmark
from benchmarks.taubench.results import Results
from benchmarks.taubench.run_config import Tau2RunConfig
from gecko_cli.main import main as gecko_main
from tests.taubench._hybrid_support import GENERIC, rules_gecko, scripted_client
from utils.llm import LLMConnectionError
from utils.settings import Settings


@pytest.fixture(scope="module")
def gecko_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with rules_gecko(tmp_path_factory.mktemp("gecko-state")) as url:
        yield url


def test_cli_flags_build_the_config(tmp_path: Path) -> None:
    parser = build_parser(Tau2Benchmark, Settings())
    args = parser.parse_args(["--domain", "retail", "--task-ids", "1,2", "3", "--gats-mode", "none",
                              "--num-trials", "2", "--seed", "7", "--task-set", "v0", "--split", "test"])
    config = Tau2Benchmark.from_args(args, RunOptions(output_dir=tmp_path)).settings
    assert config.task_ids == ("1", "2", "3") and config.gats_mode == "none" and config.num_trials == 2
    assert (config.seed, config.task_set, config.split, config.gats_retries, config.max_steps) == (7, "v0", "test", 2, 200)
    assert config.agent_llm == "scripted-oracle" and config.effective_judge is None
    assert args.gecko_url == "auto" and args.workers == 1


@pytest.mark.integration
@pytest.mark.parametrize("domain, ids", [("airline", ["14", "19", "0"]), ("retail", ["0", "1"])])
def test_offline_hybrid_run_end_to_end(gecko_url: str, tmp_path: Path, domain: str, ids: list[str],
                                       capsys: pytest.CaptureFixture[str]) -> None:
    assert gecko_main(["tau2", "--domain", domain, "--task-ids", *ids, "--gecko-url", gecko_url,
                       "--output-dir", str(tmp_path), "--task-set", "v0", "--no-progress"]) == 0
    (run_dir,) = tmp_path.iterdir()
    assert str(run_dir) in capsys.readouterr().out
    assert run_dir.name.endswith(f"_{domain}_scripted-oracle_user-scripted_hybrid")
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["evaluation"]["avg_reward"] == 1.0 and summary["evaluation"]["num_graded"] == len(ids)
    assert all(row["gats"]["turns"] == 1 and row["gats"]["attempts"] >= 1 for row in summary["tasks"])
    results = Results.model_validate_json((run_dir / "results.json").read_text())
    assert sorted(s.task_id for s in results.simulations) == sorted(ids)
    assert {t.id for t in results.tasks} == set(ids)
    assert results.info.agent_info.implementation == "gats_hybrid_scripted-oracle"
    assert all("rehearsals" in (s.info or {}).get("gats", {}) for s in results.simulations)
    report = load_run(run_dir)  # the rehearsals as per-turn attempts (traces_<domain>.jsonl): the budget curve
    assert all(t.attempt_count >= 1 and len(t.turns) == 1 for t in report.tasks)
    assert report.budget[0].accuracy == 1.0 and report.budget[0].tasks == len(ids)
    page = RunView(run_dir, load_details("tau2")).task(f"{ids[0]}#0")  # what `gecko view` shows of one task
    assert page is not None and page["official"]["reward"] == 1.0 and page["ground_truth"]["actions"] is not None
    assert page["real"]["messages"] and page["turns"][0]["attempts"][0]["calls"] is not None
    assert not list(run_dir.glob(".*.tmp"))  # atomic writes leave no temporary files
    assert (run_dir / "results.json").stat().st_mode & 0o777 == 0o600  # the runners create files with --umask 077 by default


async def test_untested_runs_are_excluded_then_rerun_on_resume(tmp_path: Path) -> None:
    config = Tau2RunConfig(domain="airline", agent_llm=GENERIC, task_ids=("0", "1"), gats_mode="none")
    options = RunOptions(output_dir=tmp_path, workers=1, progress=False, probe_models=False)
    failing, _ = scripted_client([LLMConnectionError("down"), "Sorry, I cannot help with that."])
    first = await run_benchmark(Tau2Benchmark(config, options), options, llm=failing)
    run_dir = first.run_dir
    summary = json.loads((run_dir / "summary.json").read_text())
    assert [(u["key"], u["reason"]) for u in summary["untested"]] == [("0#0", "LLMConnectionError: down")]
    assert summary["evaluation"]["num_untested"] == 1 and summary["evaluation"]["num_graded"] == 1
    assert [(r["key"], r["status"], r["graded"]) for r in summary["tasks"]] == [("0#0", "untested", False),
                                                                                ("1#0", "done", True)]
    assert summary["tasks"][0]["reward"] is None and summary["groups"]["airline"]["untested"] == 1
    written = json.loads((run_dir / "results.json").read_text())  # the official file holds results only
    assert [(s["task_id"], s["termination_reason"]) for s in written["simulations"]] == [("1", "user_stop")]
    assert read_ledger(run_dir / "tasks.jsonl")[0].record["termination_reason"] == "infrastructure_error"

    working, transport = scripted_client(["Sorry, I cannot help with that."])
    resumed = RunOptions(output_dir=tmp_path, workers=1, progress=False, resume=run_dir, probe_models=False)
    again = await run_benchmark(Tau2Benchmark(config, resumed), resumed, llm=working)
    assert again.run_dir == run_dir
    transport.assert_done()  # exactly one agent reply: only the untested task ran again
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["untested"] == [] and summary["evaluation"]["num_graded"] == 2
    assert summary["groups"]["airline"]["skipped"] == 1 and summary["groups"]["airline"]["done"] == 1
    assert [r["key"] for r in summary["tasks"]] == ["0#0", "1#0"]
    results = Results.model_validate_json((run_dir / "results.json").read_text())
    assert len(results.simulations) == 2
    assert [e.status for e in read_ledger(run_dir / "tasks.jsonl")] == ["untested", "done", "done"]
    other = Tau2RunConfig(domain="airline", agent_llm=GENERIC, task_ids=("0", "1"), gats_mode="none", seed=1)
    with pytest.raises(ResumeError, match="seed was 300, now 1"):
        await run_benchmark(Tau2Benchmark(other, resumed), resumed, llm=working)
