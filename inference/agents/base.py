"""The agent interface: one run = the agent working on the current user turn with a tool executor.

Every agent (the LLM planner, the scripted ones) makes its calls through the same `ToolExecutor`, so what
reaches Gecko or the real tools, and what the agent is shown, does not depend on the kind of agent.

```
AgentRequest(messages, feedback?) ──► Agent.run(request, executor) ──► AgentRun(steps[calls], final_text, usage)
                                                  │ a service failed (LLM after retries, Gecko down)
                                                  ▼
                                       AgentInfrastructureError(partial run)   ("untested", not the agent's fault)
```
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from inference.tools.execution import CallRecord, ToolExecutor

StopReason = Literal["answer", "max_steps", "max_calls", "context_full"]
"""Why a run ended: a final answer, the step limit, the call limit of an attempt, or a full context window (the
conversation the model built no longer fits: the attempt ends there and is judged on what it did)."""


@dataclass(frozen=True)
class RetryFeedback:
    """What a retry is told about the previous attempt (built by `gats.feedback`)."""

    attempt: int
    """Index of the attempt the feedback is about."""
    calls: tuple[CallRecord, ...]
    """Its calls with their results, validation errors included."""
    final_text: str | None
    remaining: tuple[str, ...]
    """Objectives the judge found unmet (and calls that never reached the judge)."""
    text: str
    """The rendered feedback message that LLM agents are given."""


@dataclass(frozen=True)
class AgentRequest:
    """Input of one agent run."""

    messages: tuple[Mapping[str, Any], ...]
    """OpenAI-format conversation ending with the current user turn (prior turns included)."""
    feedback: RetryFeedback | None = None
    """None on the first attempt of a turn."""
    attempt: int = 0


@dataclass(frozen=True)
class AgentStep:
    """One assistant message: text and/or tool calls, with their results."""

    index: int
    text: str | None
    calls: tuple[CallRecord, ...]


@dataclass(frozen=True)
class AgentRun:
    """What an agent did in one run."""

    agent: str
    steps: tuple[AgentStep, ...]
    final_text: str | None
    stop_reason: StopReason
    usage: tuple[dict[str, Any], ...] = ()
    """LLM usage records of the agent's own calls (role `planner`); empty for scripted agents."""
    latency_s: float = 0.0
    transcript: tuple[Mapping[str, Any], ...] = field(default=(), repr=False)
    """Every message of the run as sent to the model (empty for scripted agents)."""

    @property
    def calls(self) -> tuple[CallRecord, ...]:
        """Every call of the run, in order."""
        return tuple(call for step in self.steps for call in step.calls)


class AgentError(Exception):
    """An agent run that did not complete.

    Attributes:
        partial: what the agent did before the failure.
        kind: `infrastructure` (a service failed) or `request` (the model provider refused our request).
    """

    kind = "error"

    def __init__(self, message: str, partial: AgentRun | None = None) -> None:
        super().__init__(message)
        self.partial = partial


class AgentInfrastructureError(AgentError):
    """A service the agent depends on failed (LLM after retries, Gecko, real tools): "untested"."""

    kind = "infrastructure"


class AgentRequestError(AgentError):
    """The model provider refused the request as malformed: not the agent's answer, "untested"."""

    kind = "request"


class AgentContextFullError(AgentRequestError):
    """The conversation no longer fits the model's context window. An agent that grows the conversation itself (the
    planner) ends its run there with `context_full`: the attempt is its own, judged on what it did, never
    "untested"; an agent that does not catch it is untested as before.

    Attributes:
        usage: The usage records of the refused request (it was sent, and may have been paid).
    """

    def __init__(self, message: str, partial: AgentRun | None = None,
                 usage: tuple[dict[str, Any], ...] = ()) -> None:
        super().__init__(message, partial)
        self.usage = usage


class Agent(Protocol):
    """Something that works on a user turn by calling tools."""

    name: str

    async def run(self, request: AgentRequest, tools: ToolExecutor) -> AgentRun:
        """Work on the turn.

        Raises:
            AgentError: The run could not complete (carries the partial run).
        """
        ...
