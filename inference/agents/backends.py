"""Planner backends: which implementation runs a model as a tool-calling agent (`--agent-backend`).

| backend   | agent                                                        | needs            |
|-----------|--------------------------------------------------------------|------------------|
| `planner` | `PlannerAgent`: our OpenAI function-calling loop over `utils.llm` (cache, retries, usage) | — |
| `camel`   | `CamelAgent`: a CAMEL `ChatAgent` driving the same tools (`inference.integrations.camel`) | the `[camel]` extra |

Both implement `Agent` and run every call through the run's `ToolExecutor`, so GATS, Gecko and the
scorers see the same thing whichever drives the model.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from inference.agents.base import Agent
from inference.agents.budget import ContextBudget
from inference.agents.llm import LLMPlannerModel
from inference.agents.planner import DEFAULT_MAX_STEPS, PlannerAgent
from utils.llm import LLMClient, Prompt
from utils.roles import PLANNER

AgentBackend = Literal["planner", "camel"]
AGENT_BACKENDS: tuple[AgentBackend, ...] = ("planner", "camel")
DEFAULT_AGENT_BACKEND: AgentBackend = "planner"


@dataclass(frozen=True)
class PlannerSpec:
    """What any backend needs to build the agent."""

    model: str
    system_prompt: Prompt | None
    max_steps: int = DEFAULT_MAX_STEPS
    temperature: float | None = 0.0
    max_tokens: int | None = None
    """Output cap of each completion (None: the planner role's default)."""


def context_budget(llm: LLMClient, model: str, max_tokens: int | None = None) -> ContextBudget | None:
    """What an attempt of `model` may spend of its context window, when its endpoint said how large it is (the
    runners probe it before any task: `LLMClient.probe`); None when it is not known."""
    context = llm.spec(model).context_tokens
    if context is None:
        return None
    return ContextBudget(context, llm.output_cap(PLANNER.name, max_tokens))


def _builtin(spec: PlannerSpec, llm: LLMClient | None) -> Agent:
    if llm is None:
        raise ValueError(f"model {spec.model!r} needs an LLM client")
    return PlannerAgent(LLMPlannerModel(llm, spec.model, temperature=spec.temperature, max_tokens=spec.max_tokens),
                        system_prompt=spec.system_prompt, max_steps=spec.max_steps,
                        budget=context_budget(llm, spec.model, spec.max_tokens))


def _camel(spec: PlannerSpec, llm: LLMClient | None) -> Agent:
    try:
        from inference.integrations.camel import CamelAgent
    except ImportError as exc:
        raise ValueError(f"--agent-backend camel needs camel-ai: pip install -e '.[camel]' ({exc})") from None
    return CamelAgent(spec.model, system_prompt=spec.system_prompt, max_steps=spec.max_steps,
                      temperature=spec.temperature, max_tokens=spec.max_tokens)


_BUILDERS: dict[str, Callable[[PlannerSpec, LLMClient | None], Agent]] = {"planner": _builtin, "camel": _camel}


def build_planner(backend: str, spec: PlannerSpec, llm: LLMClient | None = None) -> Agent:
    """The LLM agent of `backend` for `spec` (one instance serves every task: runs keep no state).

    Raises:
        ValueError: an unknown backend, its package missing, a model it cannot use, or no LLM client for `planner`.
    """
    builder = _BUILDERS.get(backend)
    if builder is None:
        raise ValueError(f"unknown agent backend {backend!r}; choose one of {', '.join(AGENT_BACKENDS)}")
    return builder(spec, llm)
