"""The agent for a BFCL task, chosen by `--model`: `scripted-oracle`, `scripted-noisy`, or an LLM planner.

Scripted agents play the task's ground truth (`oracle.py`): the oracle as is, the noisy one with seeded
errors (`inference.agents.noise`). Any other name is a model of the LLM layer (an alias, `openai:<model>`,
or `openai-compatible:<model>@<base_url>`), run with `prompts/single_turn_system.md` by the agent backend
(`--agent-backend`: our planner, or a CAMEL `ChatAgent`; see `inference.agents.backends`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from benchmarks.bfcl.loader import SingleTurnTask
from benchmarks.bfcl.oracle import single_turn_oracle_calls
from inference.agents import (
    DEFAULT_MAX_STEPS,
    NOISY_NAME,
    ORACLE_NAME,
    Agent,
    ScriptedCall,
    ScriptedNoisyAgent,
    ScriptedOracleAgent,
)
from inference.agents.backends import DEFAULT_AGENT_BACKEND, PlannerSpec, build_planner
from inference.agents.noise import DEFAULT_ERROR_RATE
from utils.llm import LLMClient, load_prompt

SCRIPTED_MODELS: tuple[str, ...] = (ORACLE_NAME, NOISY_NAME)
SYSTEM_PROMPT = Path(__file__).resolve().parent / "prompts" / "single_turn_system.md"
AgentFactory = Callable[[SingleTurnTask], Agent]


@dataclass(frozen=True)
class AgentSettings:
    """How agents are built for a run."""

    model: str
    seed: int = 0
    """Seed of the noisy agent's errors."""
    error_rate: float = DEFAULT_ERROR_RATE
    """Probability that the noisy agent corrupts a call."""
    max_steps: int = DEFAULT_MAX_STEPS
    temperature: float | None = 0.0
    max_tokens: int | None = None
    """Output cap of each planner completion (None: the planner role's default)."""
    system_prompt: Path = SYSTEM_PROMPT
    agent_backend: str = DEFAULT_AGENT_BACKEND
    """What drives an LLM model (`planner` or `camel`)."""

    def planner(self, llm: LLMClient | None, system_prompt: Path | None = None) -> Agent:
        """The LLM agent of these settings (one instance serves every task).

        Raises:
            ValueError: see `inference.agents.backends.build_planner`.
        """
        spec = PlannerSpec(self.model, load_prompt(system_prompt or self.system_prompt), self.max_steps,
                           self.temperature, self.max_tokens)
        return build_planner(self.agent_backend, spec, llm)


def is_scripted(model: str) -> bool:
    """Whether `model` names a scripted agent (no LLM)."""
    return model in SCRIPTED_MODELS


def script_of(task: SingleTurnTask) -> list[ScriptedCall]:
    """The task's ground truth as a script (no call for irrelevance tasks)."""
    return [ScriptedCall(call.name, call.arguments) for call in single_turn_oracle_calls(task)]


def agent_factory(settings: AgentSettings, llm: LLMClient | None = None) -> AgentFactory:
    """A function that builds the agent of each task.

    Raises:
        ValueError: An unknown `scripted-*` name, or an LLM model without a client.
    """
    if settings.model == ORACLE_NAME:
        return lambda task: ScriptedOracleAgent(script_of(task))
    if settings.model == NOISY_NAME:
        return lambda task: ScriptedNoisyAgent(script_of(task), key=task.id, seed=settings.seed,
                                               error_rate=settings.error_rate)
    if settings.model.startswith("scripted-"):
        raise ValueError(f"unknown scripted agent {settings.model!r}; choose {' or '.join(SCRIPTED_MODELS)}")
    planner = settings.planner(llm)
    return lambda task: planner
