"""`LLMUser`: the tau2 user simulator, an LLM playing the customer.

System prompt = the official simulation guidelines (data, from the loader) + the task's scenario in a
`<scenario>` block (`prompts/user_system.md`). Roles are flipped: the agent's texts reach the model as
`user` messages and the customer's own as `assistant` messages; tool calls and results are hidden.

In a dual-control domain (telecom) the customer has tools (`tools`: the `<domain>_user` catalog) and the guidelines
are the official ones for a user with tools: the customer's own calls and their results are then in the view, and
the model's function calls become tool calls with `requestor="user"`, which the environment runs on the phone.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Optional

from benchmarks.taubench.llm_chat import (
    prompt,
    render,
    tool_calls_of,
    usage_cost,
    usage_tokens,
    user_tool_view,
)
from benchmarks.taubench.messages import AssistantMessage, Message, UserMessage
from benchmarks.taubench.orchestrator import user_view
from benchmarks.taubench.tasks import Task, render_user_scenario
from inference.tools import ToolCatalog
from utils.llm import LLMClient
from utils.roles import USER

USER_ROLE = USER.name


class LLMUser:
    """The simulated customer of one task (implements the orchestrator's `User`).

    Args:
        client: the process's LLM client.
        model: model alias or generic name.
        guidelines: the simulation guidelines text (`DataStore.user_guidelines()`).
        task: the task whose scenario the customer follows (only `user_scenario` is read).
        seed: passed to the provider.
        temperature: sampling temperature.
        tools: the customer's own tools (dual control), or None.
    """

    implementation = "user_simulator"

    def __init__(self, client: LLMClient, model: str, guidelines: str, task: Task, *,
                 seed: Optional[int] = None, temperature: float | None = 0.0,
                 tools: Optional[ToolCatalog] = None) -> None:
        self.client = client
        self.tools = tools
        self.model = model
        self.seed = seed
        self.temperature = temperature
        self._prompt = prompt("user_system")
        self.system_prompt = render(self._prompt, guidelines=guidelines.strip(),
                                    scenario=render_user_scenario(task.user_scenario))
        self.usage: list[dict[str, Any]] = []

    def messages(self, history: Sequence[Message]) -> list[dict[str, Any]]:
        """The request messages: system prompt, then the visible texts with roles flipped."""
        out: list[dict[str, Any]] = [{"role": "system", "content": self.system_prompt}]
        if self.tools is not None:
            return out + user_tool_view(history)
        for message in user_view(history):
            role = "user" if isinstance(message, AssistantMessage) else "assistant"
            out.append({"role": role, "content": message.content or ""})
        return out

    async def generate(self, history: Sequence[Message]) -> UserMessage:
        """The customer's next message (an empty reply is an error of the simulator: raised by the loop)."""
        usage: list[dict[str, Any]] = []
        tools: dict[str, Any] = {}
        if self.tools is not None:
            tools = {"tools": self.tools.openai_tools(), "tool_choice": "auto"}
        result = await self.client.chat(self.model, self.messages(history), role=USER_ROLE,
                                        temperature=self.temperature, seed=self.seed,
                                        prompt_version=self._prompt.version, usage=usage, **tools)
        self.usage.extend(usage)
        calls = tool_calls_of(result, "user") if self.tools is not None else []
        return UserMessage(content=None if calls else (result.text or ""), tool_calls=calls or None,
                           cost=usage_cost(usage), usage=usage_tokens(usage))
