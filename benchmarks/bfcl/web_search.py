"""The web_search categories (BFCL V4 agentic): the real search backend, the agents, and when tasks are untested.

```
WebSearchTask (loader) → per-turn GATS on Gecko: the WebSearchAPI toolkit is SIMULATED in the attempts
                       → the real run on bfcl-eval's WebSearchAPI (SerpAPI's DuckDuckGo engine, real page fetches)
                       → result [[step calls…, final answer]] → the official agentic checker (scoring.score_agentic)
```

The real tool reads its key from `SERPAPI_API_KEY`, as the official runner does. Without it no task can be executed
for real, so every web_search task is `untested` (never scored 0): the leaderboard's web_search and agentic rows and
the overall then have no value. Untested for want of a key is not an outage: the run's circuit breaker ignores it.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from benchmarks.bfcl.loader import MultiTurnTask, WebSearchTask
from gats.turns import TurnAgents
from inference.agents import (
    NOISY_NAME,
    ORACLE_NAME,
    Agent,
    AgentRequest,
    AgentRun,
    ScriptedCall,
    ScriptedNoisyAgent,
    ScriptedOracleAgent,
)
from inference.tools import ToolExecutor

SEARCH_KEY_ENV = "SERPAPI_API_KEY"
"""The environment variable bfcl-eval's WebSearchAPI reads its SerpAPI key from."""
SEARCH_TOOL = "search_engine_query"


TOOL_MODULES: tuple[str, ...] = ("serpapi", "html2text", "bs4")
"""What bfcl-eval's WebSearchAPI imports (the `bfcl` extra installs them)."""


def missing_backend() -> str | None:
    """Why web_search tasks cannot run for real (no key, or the real tool's modules missing), or None when the search
    backend is configured."""
    if not os.environ.get(SEARCH_KEY_ENV, "").strip():
        return (f"{SEARCH_KEY_ENV} is not set: web_search runs the real search backend (SerpAPI), so its tasks are "
                "untested, never scored 0")
    absent = [name for name in TOOL_MODULES if importlib.util.find_spec(name) is None]
    if absent:
        return (f"the real WebSearchAPI needs {', '.join(absent)}: pip install 'gecko-gats[bfcl]' (its tasks are "
                "untested, never scored 0)")
    return None


def oracle_answer(task: WebSearchTask) -> str:
    """The final message of the scripted oracle, in the official answer format, holding the first accepted answer."""
    return repr({"answer": task.answers[0], "context": "the scripted oracle answers with the ground truth"})


class AnsweringAgent:
    """A scripted agent whose final message is a fixed answer (its calls are the wrapped agent's).

    Args:
        agent: The scripted agent that makes the calls.
        answer: The final message.
    """

    def __init__(self, agent: Agent, answer: str) -> None:
        self.agent = agent
        self.answer = answer
        self.name = agent.name

    async def run(self, request: AgentRequest, tools: ToolExecutor) -> AgentRun:
        """The wrapped agent's run, with the answer as its last step's text and its final text."""
        run = await self.agent.run(request, tools)
        steps = run.steps[:-1] + (replace(run.steps[-1], text=self.answer),) if run.steps else run.steps
        return replace(run, steps=steps, final_text=self.answer)


def _question(task: WebSearchTask) -> str:
    return " ".join(m.content for m in task.turns[0] if m.role == "user")


def scripted_agents(task: WebSearchTask, model: str, *, seed: int, error_rate: float) -> TurnAgents:
    """The scripted agents of a web_search task: one search with the question (`scripted-noisy`: with seeded
    errors), then the ground-truth answer; the real run makes the same calls on the real backend."""
    script = [ScriptedCall(SEARCH_TOOL, {"keywords": _question(task)})]
    answer = oracle_answer(task)

    def agent(index: int) -> Agent:
        inner: Agent = (ScriptedOracleAgent(script) if model == ORACLE_NAME else
                        ScriptedNoisyAgent(script, key=f"{task.id}:{index}", seed=seed, error_rate=error_rate))
        return AnsweringAgent(inner, answer)

    return TurnAgents(simulated=agent, real=lambda index, plan: AnsweringAgent(ScriptedOracleAgent(script), answer))


def with_web_search(factory: Callable[[MultiTurnTask], TurnAgents], model: str, *, seed: int,
                    error_rate: float) -> Callable[[MultiTurnTask], TurnAgents]:
    """`factory` for multi-turn tasks; web_search tasks of a scripted model get `scripted_agents` (an LLM's
    planner is the same for both: the official answer-format prompt is the task's system message)."""
    if model not in (ORACLE_NAME, NOISY_NAME):
        return factory

    def agents(task: MultiTurnTask) -> TurnAgents:
        if isinstance(task, WebSearchTask):
            return scripted_agents(task, model, seed=seed, error_rate=error_rate)
        return factory(task)

    return agents


def agentic_result(turns: list[list[Any]], final_text: str | None) -> list[list[Any]]:
    """The `result` of an agentic line: the one turn's call steps, then the final answer as the last step (the
    step the official agentic checker reads)."""
    steps = list(turns[0]) if turns else []
    return [[*steps, final_text or ""]]
