"""BFCL multi-turn through the whole path on a real Gecko (rules state model): per turn, simulated attempts
on forks, real execution on fresh tool-class instances, sync with /update-state-from-real, the result line,
and the official multi-turn checker. The oracle must score 100%; a failed sync makes a task untested."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from benchmarks.bfcl.agents import AgentSettings
from benchmarks.bfcl.benchmark import RESULT_DIR, BfclMultiTurn
from benchmarks.bfcl.export import read_results, result_path
from benchmarks.bfcl.loader import MultiTurnTask, load_tasks
from benchmarks.bfcl.multi_agents import multi_turn_agents
from benchmarks.bfcl.multi_turn import run_multi_task
from benchmarks.bfcl.preflight import check_multi_turn_health
from benchmarks.bfcl.run_config import MultiTurnRunConfig
from benchmarks.bfcl.scoring import score_multi_turn
from benchmarks.runner import PreflightError, ResumeError, RunOptions, RunSummary, run_benchmark
from gats import GatsConfig
from gats.turns import TurnAgents
from gecko_cli.main import main as gecko_main
from inference.agents import Agent, ScriptedCall, ScriptedOracleAgent
from inference.gecko import GeckoClient, GeckoUnavailableError
from tests.bfcl.multi_support import multi_turn_gecko

pytestmark = pytest.mark.integration
ORACLE = "scripted-oracle"


@pytest.fixture(scope="module")
def gecko(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with multi_turn_gecko(tmp_path_factory.mktemp("mt-gecko")) as url:
        yield url


async def _run(url: str, out: Path, categories: Sequence[str] = ("multi_turn_base",), *, workers: int = 4,
               resume: Path | None = None, **settings: Any) -> RunSummary:
    config = MultiTurnRunConfig(categories=tuple(categories), model=ORACLE, **settings)
    options = RunOptions(output_dir=out, gecko_url=url, workers=workers, progress=False, resume=resume)
    return await run_benchmark(BfclMultiTurn(config, options), options)


@pytest.mark.parametrize("category", ["multi_turn_base", "multi_turn_miss_func", "multi_turn_miss_param",
                                      "multi_turn_long_context"])
async def test_oracle_sample_scores_100_in_every_category(gecko: str, tmp_path: Path, category: str) -> None:
    summary = await _run(gecko, tmp_path, [category], num_tasks=8)
    group = summary.groups[category]
    assert (group.done, group.untested, group.errored, group.score) == (8, 0, 0, 1.0)
    official = summary.evaluation.metrics["categories"][category]
    assert official["accuracy"] == 1.0 and official["scored"] == 8
    log = (summary.run_dir / "run.log").read_text()  # multi-turn runs log too: one line per task
    assert log.count(f"task {category}_") == 8 and ": done" in log
    records = read_results(result_path(summary.run_dir / RESULT_DIR, ORACLE, category))
    assert all(isinstance(turn, list) and all(isinstance(step, str) for step in turn)
               for r in records for turn in r.result)
    trace_file = summary.run_dir / f"traces_{category}.jsonl"
    traces = [json.loads(line) for line in trace_file.read_text(encoding="utf-8").splitlines()]
    turns = [turn for trace in traces for turn in trace["turns"]]
    assert all(turn["simulated"]["attempts"] and turn["real"] is not None for turn in turns)
    synced = [turn for turn in turns if turn["real"]["calls"]]
    assert synced and all(turn["state_version"] is not None for turn in synced)
    assert any(turn["simulated"]["checklist"] for turn in turns)  # the dynamic checklist of a turn


async def test_oracle_passes_all_200_multi_turn_base(gecko: str, tmp_path: Path) -> None:
    summary = await _run(gecko, tmp_path, workers=8)
    group = summary.groups["multi_turn_base"]
    assert (group.done, group.score, group.untested, group.errored) == (200, 1.0, 0, 0)
    assert summary.evaluation.metrics["categories"]["multi_turn_base"]["scored"] == 200


async def test_resume_skips_done_tasks_and_refuses_other_settings(gecko: str, tmp_path: Path) -> None:
    first = await _run(gecko, tmp_path, num_tasks=2)
    with pytest.raises(ResumeError, match="max_retries was 2, now 1"):
        await _run(gecko, tmp_path, num_tasks=3, max_retries=1, resume=first.run_dir)
    summary = await _run(gecko, tmp_path, num_tasks=3, resume=first.run_dir)
    group = summary.groups["multi_turn_base"]
    assert summary.run_dir == first.run_dir and (group.skipped, group.done) == (2, 1)
    assert summary.evaluation.metrics["categories"]["multi_turn_base"]["scored"] == 3


class FailingSync:
    """`/update-state-from-real` that fails on the second turn."""

    def __init__(self) -> None:
        self.pushes = 0

    async def push(self, session_id: str, calls: Sequence[Mapping[str, Any]]) -> int:
        self.pushes += 1
        if self.pushes == 2:
            raise GeckoUnavailableError("503 from /update-state-from-real")
        return self.pushes


async def test_sync_failure_marks_the_task_untested(gecko: str) -> None:
    task = load_tasks("multi_turn_base", ids=["multi_turn_base_0"])[0]
    assert isinstance(task, MultiTurnTask)
    agents = multi_turn_agents(AgentSettings(model=ORACLE))(task)
    async with GeckoClient(gecko) as client:
        outcome = await run_multi_task(task, agents, client, GatsConfig(max_retries=1), sync=FailingSync())
        ok = await run_multi_task(task, multi_turn_agents(AgentSettings(model=ORACLE))(task), client,
                                  GatsConfig(max_retries=1))
    assert outcome.status == "untested" and outcome.record is None
    assert "turn 1" in outcome.trace["error"] and "sync" in outcome.trace["error"]
    assert len(outcome.trace["turns"]) == 2
    assert ok.status == "completed" and score_multi_turn(task, ok.record.result).valid


async def test_a_wrong_real_call_is_what_gets_scored(gecko: str) -> None:
    """The real run's calls are exported, whatever the plan said: a real agent that skips `mkdir` fails."""
    task = load_tasks("multi_turn_base", ids=["multi_turn_base_0"])[0]
    base = multi_turn_agents(AgentSettings(model=ORACLE))(task)

    def real(index: int, plan: Any) -> Agent:
        if index == 0:
            return ScriptedOracleAgent([ScriptedCall("cd", {"folder": "document"}),
                                        ScriptedCall("mv", {"source": "final_report.pdf", "destination": "temp"})])
        return base.real(index, plan)

    async with GeckoClient(gecko) as client:
        outcome = await run_multi_task(task, TurnAgents(base.simulated, real), client, GatsConfig(max_retries=1))
    first = outcome.trace["turns"][0]
    assert first["divergence"]["skipped"] == ['mkdir({"dir_name":"temp"})'] and first["divergence"]["diverged"]
    assert outcome.record.result[0] == ["[cd(folder='document'), mv(source='final_report.pdf', destination='temp')]"]
    assert not score_multi_turn(task, outcome.record.result).valid


async def test_preflight_refuses_gecko_without_state_model(gecko: str) -> None:
    async with GeckoClient(gecko) as client:
        health = await client.health()
    check_multi_turn_health(health)
    with pytest.raises(PreflightError, match="state model"):
        check_multi_turn_health(health.model_copy(update={"state_model_enabled": False}))


def test_cli_refuses_a_category_that_is_not_multi_turn(capsys: pytest.CaptureFixture[str]) -> None:
    assert gecko_main(["bfcl-multi", "--category", "simple_python", "--model", ORACLE]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "not a multi-turn or agentic category" in err
