"""`run_taubench.py` and the batch runner: offline scripted runs (GATS on and off), the output files,
untested runs left out of the metrics and rerun by `--resume`."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

import run_taubench
from benchmarks.taubench.batch import run_batch
from benchmarks.taubench.results import Results
from benchmarks.taubench.run_config import RunConfig
from tests.taubench._hybrid_support import GENERIC, rules_gecko, scripted_client
from utils.llm import LLMConnectionError


@pytest.fixture(scope="module")
def gecko_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with rules_gecko(tmp_path_factory.mktemp("gecko-state")) as url:
        yield url


def test_cli_flags_build_the_config() -> None:
    args = run_taubench.parse_args(["--domain", "retail", "--task-ids", "1,2", "3", "--gats-mode", "none",
                                    "--num-trials", "2", "--seed", "7", "--task-set", "v0", "--split", "test"])
    config = run_taubench.config_from(args)
    assert config.task_ids == ("1", "2", "3") and config.gats_mode == "none" and config.num_trials == 2
    assert (config.seed, config.task_set, config.split, config.gats_retries, config.max_steps) == (7, "v0", "test", 2, 200)
    assert config.agent_llm == "scripted-oracle" and config.effective_judge is None


@pytest.mark.integration
@pytest.mark.parametrize("domain, ids", [("airline", ["14", "19", "0"]), ("retail", ["0", "1"])])
def test_offline_hybrid_run_end_to_end(gecko_url: str, tmp_path: Path, domain: str, ids: list[str],
                                       capsys: pytest.CaptureFixture[str]) -> None:
    assert run_taubench.main(["--domain", domain, "--task-ids", *ids, "--gecko-url", gecko_url,
                              "--output-dir", str(tmp_path), "--task-set", "v0"]) == 0
    printed = json.loads(capsys.readouterr().out)
    run_dir = Path(printed["run_dir"])
    assert run_dir.name.endswith(f"_{domain}_scripted-oracle_user-scripted_hybrid")
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["metrics"]["avg_reward"] == 1.0 and summary["metrics"]["num_graded"] == len(ids)
    assert all(row["gats"]["turns"] == 1 and row["gats"]["attempts"] >= 1 for row in summary["rows"])
    results = Results.model_validate_json((run_dir / "results.json").read_text())
    assert sorted(s.task_id for s in results.simulations) == sorted(ids)
    assert {t.id for t in results.tasks} == set(ids)
    assert results.info.agent_info.implementation == "gats_hybrid_scripted-oracle"
    assert all("rehearsals" in (s.info or {}).get("gats", {}) for s in results.simulations)
    assert not list(run_dir.glob(".*.tmp"))  # atomic writes leave no temporary files


async def test_untested_runs_are_excluded_then_rerun_on_resume(tmp_path: Path) -> None:
    config = RunConfig(domain="airline", agent_llm=GENERIC, task_ids=("0", "1"), gats_mode="none",
                       output_dir=tmp_path)
    failing, _ = scripted_client([LLMConnectionError("down"), "Sorry, I cannot help with that."])
    run_dir = await run_batch(config, client=failing, progress=None)
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["untested"] == ["0#0"]
    assert summary["metrics"]["num_untested"] == 1 and summary["metrics"]["num_graded"] == 1
    assert [r["status"] for r in summary["rows"]] == ["untested", "graded"]
    assert summary["rows"][0]["reward"] is None

    working, transport = scripted_client(["Sorry, I cannot help with that."])
    resumed = dataclasses.replace(config, resume=run_dir)
    assert await run_batch(resumed, client=working, progress=None) == run_dir
    transport.assert_done()  # exactly one agent reply: only the untested task ran again
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["untested"] == [] and summary["metrics"]["num_graded"] == 2
    assert [r["task_id"] for r in summary["rows"]] == ["0", "1"]
    results = Results.model_validate_json((run_dir / "results.json").read_text())
    assert len(results.simulations) == 2
    with pytest.raises(ValueError, match="seed was 300"):
        await run_batch(dataclasses.replace(resumed, seed=1), client=working, progress=None)
