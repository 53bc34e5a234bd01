"""Average reward and pass^k over trials, as tau2 computes them.

A run is a success iff its reward is 1 (within 1e-6). pass^k of a task with n graded trials of which
c succeeded is C(c, k) / C(n, k); the metric is its mean over tasks, for k up to the smallest number
of graded trials of any task. Runs that were not graded (infrastructure errors, NL assertions without
a judge) are left out entirely: they are neither passes nor failures.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable

from pydantic import BaseModel, Field

from benchmarks.taubench.results import SimulationRun, TerminationReason


def is_success(reward: float) -> bool:
    """Whether a reward counts as a pass."""
    return abs(reward - 1.0) <= 1e-6


def pass_hat_k(num_trials: int, successes: int, k: int) -> float:
    """pass^k of one task: the chance that k trials drawn without replacement all succeed.

    Raises:
        ValueError: if k exceeds the number of trials.
    """
    if k > num_trials:
        raise ValueError(f"k={k} exceeds the number of trials ({num_trials})")
    return math.comb(successes, k) / math.comb(num_trials, k)


class Metrics(BaseModel):
    """Summary metrics of a set of simulations."""

    num_simulations: int = Field(description="All simulations given")
    num_graded: int = Field(description="Simulations counted in the metrics")
    num_not_graded: int = Field(description="Left out: NL assertions without a judge, judge failures")
    num_untested: int = Field(description="Left out: infrastructure errors")
    num_tasks: int = Field(description="Tasks with at least one graded simulation")
    avg_reward: float | None = Field(description="Mean reward of the graded simulations")
    pass_hat_ks: dict[int, float] = Field(description="pass^k for k = 1 .. the fewest graded trials of a task")


def compute_metrics(simulations: Iterable[SimulationRun]) -> Metrics:
    """Average reward and pass^k of graded simulations.

    Args:
        simulations: simulations with their `reward_info` set (those without one are not graded).

    Returns:
        The metrics.
    """
    total = untested = not_graded = 0
    rewards: list[float] = []
    per_task: dict[str, list[bool]] = defaultdict(list)
    for simulation in simulations:
        total += 1
        if simulation.termination_reason == TerminationReason.INFRASTRUCTURE_ERROR:
            untested += 1
            continue
        info = simulation.reward_info
        if info is None or not info.graded:
            not_graded += 1
            continue
        rewards.append(info.reward)
        per_task[simulation.task_id].append(is_success(info.reward))
    max_k = min((len(trials) for trials in per_task.values()), default=0)
    pass_hat = {
        k: sum(pass_hat_k(len(t), sum(t), k) for t in per_task.values()) / len(per_task)
        for k in range(1, max_k + 1)
    }
    return Metrics(
        num_simulations=total,
        num_graded=len(rewards),
        num_not_graded=not_graded,
        num_untested=untested,
        num_tasks=len(per_task),
        avg_reward=sum(rewards) / len(rewards) if rewards else None,
        pass_hat_ks=pass_hat,
    )
