"""The half-duplex conversation loop of tau2 (text mode), with agents and users behind two small
interfaces.

The conversation opens with a fixed agent greeting. Then messages are routed one at a time: user
text goes to the agent; agent text goes to the user; tool calls go to the environment, whose results
go back to the caller. Every routed message is one step. The conversation ends when the user's text
contains `###STOP###`, `###TRANSFER###` or `###OUT-OF-SCOPE###`, or, checked after every step that
does not go to the environment, when the steps reach `max_steps` (default 200) or the tool errors
reach `max_errors` (default 10, counted over the whole conversation), as in tau2. A participant that
raises ends it with `agent_error` / `user_error`, or `infrastructure_error` for an LLM service
failure (the run is then "untested", not failed).
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Awaitable, Callable, Sequence
from enum import Enum
from typing import Optional, Protocol, Union

from benchmarks.taubench.environment import Environment
from benchmarks.taubench.messages import (
    AssistantMessage,
    Message,
    MessageToolCall,
    ToolMessage,
    UserMessage,
    now_iso,
)
from benchmarks.taubench.results import SimulationRun, TerminationReason
from benchmarks.taubench.tasks import Task

GREETING = "Hi! How can I help you today?"
"""The agent's first message: fixed, not generated."""
STOP = "###STOP###"
TRANSFER = "###TRANSFER###"
OUT_OF_SCOPE = "###OUT-OF-SCOPE###"
STOP_TOKENS = (STOP, TRANSFER, OUT_OF_SCOPE)
DEFAULT_MAX_STEPS = 200
DEFAULT_MAX_ERRORS = 10


class Agent(Protocol):
    """The agent under test."""

    async def generate(self, history: Sequence[Message]) -> AssistantMessage:
        """Return the agent's next message: text for the user, or tool calls.

        Args:
            history: the whole conversation so far (read-only), greeting first, tool results included.
        """
        ...


class User(Protocol):
    """The (simulated) customer."""

    async def generate(self, history: Sequence[Message]) -> UserMessage:
        """Return the customer's next message; include a stop token to end the conversation.

        Args:
            history: the whole conversation so far (read-only). A customer sees only the texts
                exchanged; see `user_view`.
        """
        ...


def user_view(history: Sequence[Message]) -> list[Union[AssistantMessage, UserMessage]]:
    """The texts exchanged by agent and customer: no tool calls (the customer's own, in dual control, neither) or
    tool results."""
    return [
        message
        for message in history
        if isinstance(message, (UserMessage, AssistantMessage)) and not message.tool_calls
    ]


def is_user_stop(message: UserMessage) -> bool:
    """Whether a user message ends the conversation (a stop token in its text, no tool calls)."""
    if message.is_tool_call():
        return False
    return any(token in (message.content or "") for token in STOP_TOKENS)


class _Route(Enum):
    AGENT = "agent"
    USER = "user"
    ENV = "env"


class _Ended(Exception):
    """A participant failed; carries the termination reason."""

    def __init__(self, reason: TerminationReason, detail: str) -> None:
        super().__init__(detail)
        self.reason = reason


def _default_infrastructure_errors() -> tuple[type[BaseException], ...]:
    # Imported on first run, not at module import: the LLM package pulls in the provider SDKs.
    from utils.llm import LLMInfrastructureError

    return (LLMInfrastructureError,)


def _total_cost(messages: Sequence[Message], role: type[AssistantMessage] | type[UserMessage]) -> Optional[float]:
    costs = [m.cost for m in messages if isinstance(m, role) and m.cost is not None]
    return sum(costs) if costs else None


async def run_simulation(
    task: Task,
    agent: Agent,
    user: User,
    environment: Environment,
    *,
    max_steps: int = DEFAULT_MAX_STEPS,
    max_errors: int = DEFAULT_MAX_ERRORS,
    timeout: Optional[float] = None,
    trial: Optional[int] = None,
    seed: Optional[int] = None,
    infrastructure_errors: Optional[tuple[type[BaseException], ...]] = None,
    respond: Optional[Callable[[MessageToolCall], Awaitable[ToolMessage]]] = None,
) -> SimulationRun:
    """Run one conversation on a task, executing the agent's tool calls on `environment`.

    Args:
        task: the task (only its id is used here; the user and agent were built for it).
        agent: the agent under test.
        user: the simulated customer.
        environment: a fresh environment of the task's domain; it holds the final DB afterwards.
        max_steps: step budget (every routed message is a step).
        max_errors: tool-error budget for the whole conversation.
        timeout: wall-time budget in seconds for the whole conversation, or None.
        trial: trial number, recorded.
        seed: seed given to the participants, recorded.
        infrastructure_errors: exception types meaning "service unavailable" (default: the LLM
            layer's `LLMInfrastructureError`); they end the run as `infrastructure_error`.
        respond: answers a tool call instead of `environment.respond` (the state controller's `ToolResponder`,
            which runs the call on `environment` too).

    Returns:
        The simulation run, not yet graded (`reward_info` is None). Its `info` holds the failure
        text when a participant raised.
    """
    infra = infrastructure_errors if infrastructure_errors is not None else _default_infrastructure_errors()
    started_at, started = now_iso(), time.perf_counter()
    deadline = None if timeout is None else started + timeout
    history: list[Message] = [AssistantMessage(content=GREETING, cost=0.0)]
    route, caller = _Route.USER, _Route.AGENT
    steps = errors = 0
    reason: Optional[TerminationReason] = None
    info: dict[str, str] = {}

    async def ask(
        participant: Agent | User, expected: type[AssistantMessage] | type[UserMessage], failure: TerminationReason
    ) -> AssistantMessage | UserMessage:
        remaining = None if deadline is None else max(0.0, deadline - time.perf_counter())
        try:
            message = await asyncio.wait_for(participant.generate(list(history)), remaining)
        except infra as exc:
            raise _Ended(TerminationReason.INFRASTRUCTURE_ERROR, f"{type(exc).__name__}: {exc}") from exc
        except Exception as exc:  # the participant misbehaved: the run ends, graded as a failure
            if isinstance(exc, TimeoutError) and deadline is not None and time.perf_counter() >= deadline:
                raise _Ended(TerminationReason.TIMEOUT, "conversation timed out") from None
            raise _Ended(failure, f"{type(exc).__name__}: {exc}") from exc
        if not isinstance(message, expected):
            raise _Ended(failure, f"expected a {expected.__name__}, got {type(message).__name__}")
        if message.tool_calls == []:
            message.tool_calls = None
        if not message.has_text() and not message.is_tool_call():
            raise _Ended(failure, "empty message: neither text nor tool calls")
        for index, call in enumerate(message.tool_calls or []):
            if not call.id:
                call.id = f"call-{len(history)}-{index}"
        return message

    pending: list[MessageToolCall] = []
    while reason is None:
        try:
            if route is _Route.ENV:
                if respond is None:
                    results: list[ToolMessage] = [environment.respond(call) for call in pending]
                else:
                    results = [await respond(call) for call in pending]
                errors += sum(result.error for result in results)
                history.extend(results)
                route = caller
            else:
                if route is _Route.USER:
                    message = await ask(user, UserMessage, TerminationReason.USER_ERROR)
                else:
                    message = await ask(agent, AssistantMessage, TerminationReason.AGENT_ERROR)
                history.append(message)
                if isinstance(message, UserMessage) and is_user_stop(message):
                    reason = TerminationReason.USER_STOP
                pending = list(message.tool_calls or [])
                caller = route
                route = _Route.ENV if pending else (_Route.AGENT if route is _Route.USER else _Route.USER)
        except _Ended as ended:
            reason, info["error"] = ended.reason, str(ended)
            break
        steps += 1
        environment.sync()  # tau2 syncs the two sides after every step (a no-op without dual control)
        if route is _Route.ENV:
            continue
        if steps >= max_steps:
            reason = TerminationReason.MAX_STEPS
        if errors >= max_errors:
            reason = TerminationReason.TOO_MANY_ERRORS

    for index, routed in enumerate(history):
        routed.turn_idx = index
    return SimulationRun(
        id=str(uuid.uuid4()),
        task_id=task.id,
        start_time=started_at,
        end_time=now_iso(),
        duration=time.perf_counter() - started,
        termination_reason=reason,
        agent_cost=_total_cost(history, AssistantMessage),
        user_cost=_total_cost(history, UserMessage),
        messages=history,
        trial=trial,
        seed=seed,
        info=info or None,
    )
