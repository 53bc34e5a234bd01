"""The planner's one dependency on the LLM layer: `PlannerModel`, and its implementation over `utils.llm`.

Keeping the `utils.llm` calls here means a change of that API touches this module only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from inference.agents.base import AgentContextFullError, AgentInfrastructureError, AgentRequestError
from inference.tools.execution import ToolCallRequest
from utils.llm import LLMClient, LLMContextOverflowError, LLMError, LLMInfrastructureError, LLMUsageError
from utils.roles import PLANNER

PLANNER_ROLE = PLANNER.name


@dataclass(frozen=True)
class PlannerReply:
    """One assistant message."""

    text: str | None
    tool_calls: tuple[ToolCallRequest, ...]
    usage: tuple[dict[str, Any], ...]


class PlannerModel(Protocol):
    """A chat model with function calling."""

    name: str

    async def complete(
        self, messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]]
    ) -> PlannerReply:
        """One completion.

        Raises:
            AgentInfrastructureError: The service failed after retries.
            AgentContextFullError: The messages do not fit the model's context window.
            AgentRequestError: The provider refused the request.
        """
        ...


class LLMPlannerModel:
    """`PlannerModel` over the shared `utils.llm.LLMClient`.

    Args:
        client: The process's LLM client (retries, cache, usage).
        model: Model alias or generic name (`openai-compatible:<model>@<base_url>`).
        temperature: Sampling temperature (0 makes replies cacheable and repeatable).
        max_tokens: Output limit per completion (None: the provider's default).
    """

    def __init__(self, client: LLMClient, model: str, *, temperature: float | None = 0.0,
                 max_tokens: int | None = None) -> None:
        self.client = client
        self.name = model
        self.temperature = temperature
        self.max_tokens = max_tokens

    async def complete(
        self, messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]]
    ) -> PlannerReply:
        """One chat completion with the tools offered (none: a plain answer)."""
        usage: list[dict[str, Any]] = []
        try:
            result = await self.client.chat(self.name, messages, role=PLANNER_ROLE, tools=tools or None,
                                            temperature=self.temperature, max_tokens=self.max_tokens, usage=usage)
        except LLMInfrastructureError as exc:
            raise AgentInfrastructureError(f"planner model {self.name}: {exc}") from exc
        except LLMContextOverflowError as exc:
            raise AgentContextFullError(f"planner model {self.name}: {exc}", usage=tuple(usage)) from exc
        except LLMUsageError as exc:
            raise AgentRequestError(f"planner model {self.name}: {exc}") from exc
        except LLMError as exc:
            raise AgentRequestError(f"planner model {self.name}: {exc}") from exc
        calls = tuple(ToolCallRequest(call.id, call.name, call.arguments) for call in result.tool_calls)
        return PlannerReply(result.text, calls, tuple(usage))
