"""The agents of a BFCL multi-turn task, per turn, chosen by `--model`.

| model | simulated attempts | real run |
|---|---|---|
| `scripted-oracle` | the turn's ground truth | the turn's ground truth |
| `scripted-noisy` | the ground truth with seeded errors, fixed as feedback names them | the plan replayed (`gats.PlanReplayAgent`); no plan: a fresh noisy agent |
| an LLM | the planner (`prompts/multi_turn_system.md`; `--agent-backend`) | the same planner, given the plan as a message |
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from benchmarks.bfcl.agents import SCRIPTED_MODELS, AgentSettings
from benchmarks.bfcl.loader import MultiTurnTask
from benchmarks.bfcl.oracle import multi_turn_oracle_calls
from gats.plan import Plan
from gats.replay import PlanReplayAgent
from gats.turns import TurnAgents
from inference.agents import (
    NOISY_NAME,
    ORACLE_NAME,
    Agent,
    ScriptedCall,
    ScriptedNoisyAgent,
    ScriptedOracleAgent,
)
from utils.llm import LLMClient

MULTI_TURN_SYSTEM_PROMPT = Path(__file__).resolve().parent / "prompts" / "multi_turn_system.md"
TurnAgentsFactory = Callable[[MultiTurnTask], TurnAgents]


def turn_scripts(task: MultiTurnTask) -> list[list[ScriptedCall]]:
    """The ground truth of each turn as scripts."""
    return [[ScriptedCall(c.name, c.arguments) for c in turn] for turn in multi_turn_oracle_calls(task)]


def _oracle(task: MultiTurnTask) -> TurnAgents:
    scripts = turn_scripts(task)
    return TurnAgents(simulated=lambda i: ScriptedOracleAgent(scripts[i]),
                      real=lambda i, plan: ScriptedOracleAgent(scripts[i]))


def _noisy(task: MultiTurnTask, settings: AgentSettings) -> TurnAgents:
    scripts = turn_scripts(task)

    def noisy(index: int) -> Agent:
        return ScriptedNoisyAgent(scripts[index], key=f"{task.id}:{index}", seed=settings.seed,
                                  error_rate=settings.error_rate)

    def real(index: int, plan: Plan | None) -> Agent:
        return PlanReplayAgent(plan) if plan is not None else noisy(index)

    return TurnAgents(simulated=noisy, real=real)


def multi_turn_agents(settings: AgentSettings, llm: LLMClient | None = None) -> TurnAgentsFactory:
    """A function that builds the per-turn agents of each task.

    Raises:
        ValueError: An unknown `scripted-*` name, or an LLM model without a client.
    """
    if settings.model == ORACLE_NAME:
        return _oracle
    if settings.model == NOISY_NAME:
        return lambda task: _noisy(task, settings)
    if settings.model.startswith("scripted-"):
        raise ValueError(f"unknown scripted agent {settings.model!r}; choose {' or '.join(SCRIPTED_MODELS)}")
    planner = settings.planner(llm, MULTI_TURN_SYSTEM_PROMPT)
    return lambda task: TurnAgents(simulated=lambda i: planner, real=lambda i, plan: planner)
