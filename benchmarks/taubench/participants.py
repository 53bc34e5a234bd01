"""Build the participants of one conversation from a `Tau2RunConfig`: agent, user, GATS rollout agent.

Scripted choices (offline): agent `scripted-oracle` (gold actions, then the required info) or
`scripted-noop`; user `scripted`. Anything else is a model name for `utils.llm`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any, Optional

from benchmarks.taubench.environment import DomainRuntime
from benchmarks.taubench.llm_agent import LLMAgent
from benchmarks.taubench.llm_chat import prompt, render
from benchmarks.taubench.llm_user import LLMUser
from benchmarks.taubench.messages import AssistantMessage, Message
from benchmarks.taubench.run_config import SCRIPTED_NOOP, SCRIPTED_ORACLE, SCRIPTED_USER, Tau2RunConfig
from benchmarks.taubench.scripted import ScriptedUser, gold_pair, noop_agent, oracle_agent
from benchmarks.taubench.tasks import Task
from inference.agents import Agent as RolloutAgent
from inference.agents import ScriptedCall, ScriptedOracleAgent
from inference.agents.backends import PlannerSpec, build_planner
from inference.tools import ToolCatalog
from utils.llm import LLMClient, Prompt


class TimedAgent:
    """Bounds every reply of an agent to `timeout` seconds (`--agent-timeout`); passes references on."""

    def __init__(self, inner: Any, timeout: float) -> None:
        self.inner = inner
        self.timeout = timeout
        self.accepts_reference = getattr(inner, "accepts_reference", False)

    async def generate(self, history: Sequence[Message], reference: Optional[str] = None) -> AssistantMessage:
        """The inner agent's reply, or `asyncio.TimeoutError` (the run ends as `timeout`)."""
        call = self.inner.generate(history, reference) if self.accepts_reference else self.inner.generate(history)
        return await asyncio.wait_for(call, self.timeout)


def build_agent(config: Tau2RunConfig, task: Task, runtime: DomainRuntime, catalog: ToolCatalog,
                client: Optional[LLMClient], seed: int) -> Any:
    """The real agent of one conversation."""
    if config.agent_llm == SCRIPTED_ORACLE:
        return oracle_agent(task)
    if config.agent_llm == SCRIPTED_NOOP:
        return noop_agent()
    assert client is not None
    return LLMAgent(client, config.agent_llm, runtime.policy, catalog, seed=seed)


def build_user(config: Tau2RunConfig, task: Task, guidelines: str, client: Optional[LLMClient], seed: int,
               tools: Optional[ToolCatalog] = None) -> Any:
    """The simulated customer of one conversation (`tools`: the customer's own tools in a dual-control domain)."""
    if config.user_llm == SCRIPTED_USER:
        return ScriptedUser.from_task(task)
    assert client is not None
    return LLMUser(client, config.user_llm, guidelines, task, seed=seed, tools=tools)


def build_participants(config: Tau2RunConfig, task: Task, runtime: DomainRuntime, catalog: ToolCatalog,
                       user_catalog: Optional[ToolCatalog], client: Optional[LLMClient], seed: int) -> tuple[Any, Any]:
    """The agent and the customer of one conversation.

    In a dual-control domain the scripted oracle agent and the scripted user are one oracle (`gold_pair`): they
    share the gold actions and each plays its own side's; an LLM user gets the user tools and the guidelines for a
    user with tools.
    """
    if runtime.dual_control and config.agent_llm == SCRIPTED_ORACLE and config.user_llm == SCRIPTED_USER:
        return gold_pair(task)
    store = runtime.store
    guidelines = store.user_guidelines_tools() if runtime.dual_control else store.user_guidelines()
    agent = build_agent(config, task, runtime, catalog, client, seed)
    return agent, build_user(config, task, guidelines, client, seed, user_catalog)


def _gold_script(task: Task) -> list[ScriptedCall]:
    actions = (task.evaluation_criteria.actions if task.evaluation_criteria else None) or []
    return [ScriptedCall(a.name, dict(a.arguments)) for a in actions if a.requestor == "assistant"]


def rollout_factory(config: Tau2RunConfig, task: Task, runtime: DomainRuntime, client: Optional[LLMClient]) -> Any:
    """Builds the GATS rehearsal agent of a turn, given the conversation so far.

    LLM agents rehearse with the same model and system prompt as the real agent. The scripted oracle is
    an offline fixture: it rehearses its own remaining gold calls (its calls reach Gecko as tool calls;
    no grading criterion reaches a checklist, judge or agent prompt).
    """
    if config.agent_llm == SCRIPTED_ORACLE:
        script = _gold_script(task)

        def oracle(history: Sequence[Message]) -> RolloutAgent:
            done = sum(len(m.tool_calls or []) for m in history if isinstance(m, AssistantMessage))
            return ScriptedOracleAgent(script[done:])
        return oracle
    if config.agent_llm == SCRIPTED_NOOP:
        return lambda history: ScriptedOracleAgent([])
    template = prompt("agent_system")
    system = Prompt(template.name, template.version, render(template, policy=runtime.policy))
    planner = build_planner(config.agent_backend, PlannerSpec(config.agent_llm, system), client)
    return lambda history: planner
