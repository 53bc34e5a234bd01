"""`LLMAgent`: the tau2 agent under test, an LLM with the domain policy and tools.

Each turn the model gets the system prompt (`prompts/agent_system.md` with the policy), the whole
conversation, and the tools; it answers with text or tool calls. With GATS hybrid mode a reference text
(the rehearsals, see `gats_hybrid.py`) is appended as a last system message for that one reply; it never
enters the conversation that is graded.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Optional

from benchmarks.taubench.llm_chat import agent_view, prompt, render, tool_calls_of, usage_cost, usage_tokens
from benchmarks.taubench.messages import AssistantMessage, Message
from inference.tools import ToolCatalog
from utils.llm import LLMClient
from utils.roles import AGENT

AGENT_ROLE = AGENT.name
"""Usage role of the real agent (GATS rehearsals are `planner`, so the two costs stay apart)."""


class LLMAgent:
    """The agent under test (implements the orchestrator's `Agent` and accepts a GATS reference).

    Args:
        client: the process's LLM client.
        model: model alias or generic name.
        policy: the domain policy text.
        catalog: the tools offered (see `tool_defs.load_catalog`).
        seed: passed to the provider.
        temperature: sampling temperature (0: cacheable, repeatable).
    """

    implementation = "llm_agent"
    accepts_reference = True

    def __init__(self, client: LLMClient, model: str, policy: str, catalog: ToolCatalog, *,
                 seed: Optional[int] = None, temperature: float | None = 0.0) -> None:
        self.client = client
        self.model = model
        self.catalog = catalog
        self.seed = seed
        self.temperature = temperature
        self._prompt = prompt("agent_system")
        self.system_prompt = render(self._prompt, policy=policy)
        self.usage: list[dict[str, Any]] = []

    def messages(self, history: Sequence[Message], reference: Optional[str] = None) -> list[dict[str, Any]]:
        """The request messages for the next reply."""
        messages = [{"role": "system", "content": self.system_prompt}, *agent_view(history)]
        if reference:
            messages.append({"role": "system", "content": reference})
        return messages

    async def generate(self, history: Sequence[Message], reference: Optional[str] = None) -> AssistantMessage:
        """The agent's next message.

        Raises:
            LLMInfrastructureError: the model service failed (the run is then untested).
        """
        usage: list[dict[str, Any]] = []
        result = await self.client.chat(self.model, self.messages(history, reference), role=AGENT_ROLE,
                                        tools=self.catalog.openai_tools(), tool_choice="auto",
                                        temperature=self.temperature, seed=self.seed,
                                        prompt_version=self._prompt.version, usage=usage)
        self.usage.extend(usage)
        calls = tool_calls_of(result)
        return AssistantMessage(content=None if calls else (result.text or ""), tool_calls=calls or None,
                                cost=usage_cost(usage), usage=usage_tokens(usage))
