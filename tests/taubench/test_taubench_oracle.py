"""Offline runs with the scripted oracle and user: 1.0 wherever the reward needs no judge.

The whole loop runs (orchestrator, tool execution on the DB, grading); no LLM anywhere. The v0 sets
are also covered by the parity test; they are here so the runtime alone is checked without the
reference venv.
"""

from __future__ import annotations

import pytest

from benchmarks.taubench.environment import DomainRuntime
from benchmarks.taubench.evaluate import evaluate
from benchmarks.taubench.metrics import compute_metrics
from benchmarks.taubench.orchestrator import run_simulation
from benchmarks.taubench.results import SimulationRun
from benchmarks.taubench.scripted import ScriptedUser, noop_agent, oracle_agent


async def _run_all(runtime: DomainRuntime, agent_for: str) -> list[SimulationRun]:
    runs = []
    for task in runtime.store.tasks(runtime.name, runtime.task_set):
        agent = oracle_agent(task) if agent_for == "oracle" else noop_agent()
        run = await run_simulation(task, agent, ScriptedUser.from_task(task), runtime.environment())
        run.reward_info = evaluate(runtime, task, run.messages, run.termination_reason)
        runs.append(run)
    return runs


@pytest.mark.parametrize(
    ("task_set", "domain", "graded", "not_graded"),
    [
        ("v1", "airline", 50, 0),
        ("v1", "retail", 74, 40),  # 40 v1 retail tasks need the NL judge: reported as not graded
        pytest.param("v0", "airline", 50, 0, marks=pytest.mark.slow),
        pytest.param("v0", "retail", 114, 0, marks=pytest.mark.slow),
    ],
)
async def test_oracle_scores_one(
    runtimes: dict[tuple[str, str], DomainRuntime], task_set: str, domain: str, graded: int, not_graded: int
) -> None:
    runs = await _run_all(runtimes[(task_set, domain)], "oracle")
    infos = [(run.task_id, run.reward_info) for run in runs if run.reward_info is not None]
    failures = [(task_id, info.reward_breakdown) for task_id, info in infos if info.graded and info.reward != 1.0]
    assert failures == []
    metrics = compute_metrics(runs)
    assert (metrics.num_graded, metrics.num_not_graded) == (graded, not_graded)
    assert metrics.avg_reward == 1.0 and metrics.pass_hat_ks == {1: 1.0}


@pytest.mark.parametrize(
    ("task_set", "domain", "expected"),
    [
        ("v1", "airline", 0.46),  # 23 of 50 tasks are "correctly do nothing"
        pytest.param("v0", "airline", 0.38, marks=pytest.mark.slow),
        pytest.param("v0", "retail", 0.061, marks=pytest.mark.slow),
    ],
)
async def test_do_nothing_baseline(
    runtimes: dict[tuple[str, str], DomainRuntime], task_set: str, domain: str, expected: float
) -> None:
    metrics = compute_metrics(await _run_all(runtimes[(task_set, domain)], "noop"))
    assert metrics.avg_reward == pytest.approx(expected, abs=5e-4)
