"""A conversation, turn by turn: GATS in simulation, then real execution, then the real results synced into
the simulator so the next turn starts from them. Independent of any benchmark.

```
base session (seeded by the caller, e.g. /init-session-state)
for each user turn:
    simulated = run_turn(turn, on forks of the base session)            (checklist, attempts, judge, best)
    plan      = build_plan(simulated.best)                                (advice; None when nothing to follow)
    real      = real agent on the real tools, given the plan as a message (its calls are the turn's answer)
    sync      = POST /update-state-from-real (real calls + results) on the base session → next turn's start
```

Failures of the machinery never pass silently: a turn whose simulation is `untested`, whose real run hit an
infrastructure error, or whose sync failed is `untested`, and the conversation stops there (`untested`).
The agent's history for later turns is the real history (user messages, real calls and results, answers).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from gats.loop import run_turn
from gats.model import GatsConfig, TurnInput, TurnResult, TurnStatus
from gats.plan import Divergence, Plan, build_plan, divergence, load_plan_prompt
from gats.ports import Sandbox
from inference.agents.base import Agent, AgentError, AgentRequest, AgentRun
from inference.gecko.client import GeckoClient
from inference.gecko.errors import GeckoError
from inference.tools.catalog import ToolCatalog
from inference.tools.execution import CallRecord, ToolBackend, ToolExecutor, assistant_message, tool_messages
from utils.llm import Prompt

ConversationStatus = Literal["completed", "untested"]


class StateSync(Protocol):
    """Where real calls and results are folded into the simulator's state."""

    async def push(self, session_id: str, calls: Sequence[Mapping[str, Any]]) -> int:
        """Apply `calls` (`{name, arguments, result, toolkit}`) to the session; returns the new state version.

        Raises:
            GeckoError: The simulator refused or failed.
        """
        ...


class GeckoStateSync:
    """`StateSync` over Gecko's `POST /update-state-from-real`.

    Args:
        client: The Gecko client.
    """

    def __init__(self, client: GeckoClient) -> None:
        self.client = client

    async def push(self, session_id: str, calls: Sequence[Mapping[str, Any]]) -> int:
        """See `StateSync.push`."""
        reply = await self.client.update_state_from_real(session_id, calls)
        return reply.version


def sync_payload(calls: Sequence[CallRecord]) -> list[dict[str, Any]]:
    """The real calls that reached the real tools, as `/update-state-from-real` items (original names); a call an
    injected fault answered instead of the tool did not run and is left out."""
    return [{"name": c.name, "arguments": dict(c.arguments or {}), "result": c.outcome.content,
             "toolkit": c.tool.toolkit if c.tool is not None else None}
            for c in calls if c.outcome.reached_backend and c.tool is not None and not c.outcome.blocked_by_fault]


@dataclass(frozen=True)
class ConversationTurn:
    """One user turn of a conversation."""

    task: str
    """The request as text (checklist and judge)."""
    messages: tuple[Mapping[str, Any], ...]
    """This turn's user messages (OpenAI format)."""
    catalog: ToolCatalog | None = None
    """Tools offered at this turn when they differ from the conversation's (held-out tools); None: the same."""


@dataclass(frozen=True)
class TurnAgents:
    """Builds the agents of each turn (scripted agents hold per-turn state, so one per turn)."""

    simulated: Callable[[int], Agent]
    """Turn index → the agent of the simulated attempts."""
    real: Callable[[int, Plan | None], Agent]
    """Turn index and plan → the agent of the real run."""


@dataclass(frozen=True)
class RealTurnResult:
    """One turn: the simulated attempts, the plan, the real run, the sync."""

    index: int
    status: TurnStatus
    """The simulation's status, or `untested` when the real run or the sync failed."""
    simulated: TurnResult
    plan: Plan | None
    real: AgentRun | None
    """The real run (a partial run when it failed)."""
    divergence: Divergence | None
    state_version: int | None
    """Session state version after the sync (None: nothing to sync, or it failed)."""
    error: str | None = None
    latency_s: float = 0.0

    @property
    def real_calls(self) -> tuple[CallRecord, ...]:
        """The calls made on the real tools: the turn's answer."""
        return self.real.calls if self.real is not None else ()


@dataclass(frozen=True)
class ConversationResult:
    """Every turn that ran; `untested` when one of them was (the later turns did not run)."""

    status: ConversationStatus
    turns: tuple[RealTurnResult, ...]
    error: str | None = None


def history_messages(turn: ConversationTurn, run: AgentRun | None) -> list[dict[str, Any]]:
    """This turn as the agent's history: the user messages, then each real step (calls, results, text)."""
    messages: list[dict[str, Any]] = [dict(m) for m in turn.messages]
    for step in run.steps if run is not None else ():
        if step.calls:
            messages.append(assistant_message(step.text, step.calls))
            messages.extend(tool_messages(step.calls))
        elif step.text:
            messages.append({"role": "assistant", "content": step.text})
    return messages


@dataclass(frozen=True)
class RealTurnSetup:
    """What every turn of a conversation shares."""

    agents: TurnAgents
    sandbox: Sandbox
    catalog: ToolCatalog
    real_backend: ToolBackend
    sync: StateSync
    config: GatsConfig
    context: tuple[str, ...] = ()
    """Texts whose literals the plan marks `keep` besides the user's messages (e.g. the initial state)."""
    plan_prompt: Prompt | None = None
    feedback_prompt: Prompt | None = None


async def run_real_turn(
    index: int, turn: ConversationTurn, history: Sequence[Mapping[str, Any]], session_id: str,
    setup: RealTurnSetup, previous_tasks: Sequence[str] = (),
) -> RealTurnResult:
    """Simulate, plan, execute for real, sync: one turn (see the module docstring).

    Args:
        index: Turn index.
        turn: The user turn.
        history: Earlier turns as messages (real history).
        session_id: The turn-start session (attempts fork it; the sync lands on it).
        setup: Agents, simulator, tools, real backend, sync, configuration.
        previous_tasks: Earlier requests (checklist context).
    """
    started = time.perf_counter()
    catalog = turn.catalog or setup.catalog
    messages = (*history, *turn.messages)
    turn_input = TurnInput(turn.task, tuple(messages), session_id, tuple(previous_tasks))
    simulated = await run_turn(turn_input, setup.agents.simulated(index), setup.sandbox, catalog, setup.config,
                               feedback_prompt=setup.feedback_prompt)

    def result(status: TurnStatus, plan: Plan | None = None, real: AgentRun | None = None,
               version: int | None = None, error: str | None = None) -> RealTurnResult:
        diverged = divergence(plan, real.calls) if real is not None else None
        return RealTurnResult(index, status, simulated, plan, real, diverged, version, error,
                              time.perf_counter() - started)

    if simulated.status == "untested":
        return result("untested", error=f"simulation failed for infrastructure reasons: {simulated.failure}")
    user_text = [str(m.get("content") or "") for m in messages if m.get("role") == "user"]
    plan = build_plan(simulated.best, [*user_text, *setup.context], setup.plan_prompt or load_plan_prompt())
    real_messages = (*messages, *([{"role": "user", "content": plan.text}] if plan is not None else []))
    try:
        real = await setup.agents.real(index, plan).run(AgentRequest(tuple(real_messages)),
                                                         ToolExecutor(catalog, setup.real_backend))
    except AgentError as exc:
        return result("untested", plan, exc.partial, error=f"real run: {exc.kind}: {exc}")
    payload = sync_payload(real.calls)
    version: int | None = None
    if payload:
        try:
            version = await setup.sync.push(session_id, payload)
        except GeckoError as exc:
            return result("untested", plan, real, error=f"sync of the real results failed: {exc}")
    return result(simulated.status, plan, real, version)


async def run_conversation(
    turns: Sequence[ConversationTurn], base_session_id: str, setup: RealTurnSetup
) -> ConversationResult:
    """Run every turn on the same session (synced after each); stop at the first `untested` turn.

    Args:
        turns: The user turns in order.
        base_session_id: The seeded session of the conversation (initial state in place).
        setup: What the turns share.
    """
    done: list[RealTurnResult] = []
    history: list[dict[str, Any]] = []
    for index, turn in enumerate(turns):
        outcome = await run_real_turn(index, turn, history, base_session_id, setup,
                                      previous_tasks=[t.task for t in turns[:index]])
        done.append(outcome)
        if outcome.status == "untested":
            return ConversationResult("untested", tuple(done), f"turn {index}: {outcome.error}")
        history.extend(history_messages(turn, outcome.real))
    return ConversationResult("completed", tuple(done))
