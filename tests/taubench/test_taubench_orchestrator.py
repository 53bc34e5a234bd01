"""The half-duplex loop: greeting, routing, stop tokens, step and error budgets, participant failures."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import pytest

from benchmarks.taubench.environment import DomainRuntime
from benchmarks.taubench.loader import DataStore
from benchmarks.taubench.messages import AssistantMessage, Message, MessageToolCall, ToolMessage, UserMessage
from benchmarks.taubench.orchestrator import GREETING, run_simulation, user_view
from benchmarks.taubench.results import TerminationReason
from benchmarks.taubench.scripted import ScriptedAgent, ScriptedUser, noop_agent, oracle_agent
from benchmarks.taubench.tasks import Task
from utils.llm.errors import LLMTimeoutError


@pytest.fixture(scope="module")
def task(store: DataStore) -> Task:
    return store.task("airline", "1", "v1")


def _call(name: str, **arguments: object) -> AssistantMessage:
    return AssistantMessage(tool_calls=[MessageToolCall(name=name, arguments=arguments)])


class _Raising:
    def __init__(self, exc: BaseException) -> None:
        self.exc = exc

    async def generate(self, history: Sequence[Message]) -> Any:
        raise self.exc


class _Slow:
    async def generate(self, history: Sequence[Message]) -> AssistantMessage:
        await asyncio.sleep(10)
        return AssistantMessage(content="late")


async def test_conversation_shape_and_turns(airline: DomainRuntime, task: Task) -> None:
    agent = ScriptedAgent([_call("get_user_details", user_id="raj_sanchez_7340")], "Done.")
    run = await run_simulation(task, agent, ScriptedUser(["hello"]), airline.environment(), trial=2, seed=302)
    roles = [m.role for m in run.messages]
    assert roles == ["assistant", "user", "assistant", "tool", "assistant", "user"]
    assert run.messages[0].content == GREETING
    assert [m.turn_idx for m in run.messages] == list(range(6))
    assert run.termination_reason == TerminationReason.USER_STOP
    tool = run.messages[3]
    call = run.messages[2]
    assert isinstance(call, AssistantMessage) and call.tool_calls
    assert isinstance(tool, ToolMessage) and tool.id == call.tool_calls[0].id != ""
    assert (run.trial, run.seed, run.task_id, run.reward_info) == (2, 302, "1", None)
    assert [m.content for m in user_view(run.messages)] == [GREETING, "hello", "Done.", "###STOP###"]


@pytest.mark.parametrize("token", ["###STOP###", "###TRANSFER###", "###OUT-OF-SCOPE###"])
async def test_every_stop_token_ends_the_conversation(airline: DomainRuntime, task: Task, token: str) -> None:
    run = await run_simulation(task, noop_agent(), ScriptedUser(["hi"], stop=f"ok {token}"), airline.environment())
    assert run.termination_reason == TerminationReason.USER_STOP
    assert run.messages[-1].content == f"ok {token}"


async def test_step_budget(airline: DomainRuntime, task: Task) -> None:
    chatty = ScriptedUser([f"line {i}" for i in range(100)])
    run = await run_simulation(task, noop_agent(), chatty, airline.environment(), max_steps=5)
    assert run.termination_reason == TerminationReason.MAX_STEPS
    assert len(run.messages) == 1 + 5  # greeting + five routed messages


async def test_tool_steps_are_not_checked_against_the_budget(airline: DomainRuntime, task: Task) -> None:
    agent = ScriptedAgent([_call("calculate", expression="1+1")], "ok")
    run = await run_simulation(task, agent, ScriptedUser(["hi"]), airline.environment(), max_steps=2)
    # step 1: user, step 2: agent's call (goes to the environment: no check), step 3: tool result.
    assert run.termination_reason == TerminationReason.MAX_STEPS
    assert [m.role for m in run.messages] == ["assistant", "user", "assistant", "tool"]


async def test_error_budget_counts_all_tool_errors(airline: DomainRuntime, task: Task) -> None:
    agent = ScriptedAgent([_call("get_user_details", user_id=f"nobody_{i}") for i in range(20)], "ok")
    run = await run_simulation(task, agent, ScriptedUser(["hi"]), airline.environment(), max_errors=3)
    assert run.termination_reason == TerminationReason.TOO_MANY_ERRORS
    assert sum(isinstance(m, ToolMessage) and m.error for m in run.messages) == 3


async def test_several_calls_in_one_message(airline: DomainRuntime, task: Task) -> None:
    both = AssistantMessage(tool_calls=[
        MessageToolCall(id="a", name="get_flight_status", arguments={"flight_number": "HAT001", "date": "2024-05-03"}),
        MessageToolCall(id="b", name="calculate", arguments={"expression": "2*3"}),
    ])
    run = await run_simulation(task, ScriptedAgent([both], "ok"), ScriptedUser(["hi"]), airline.environment())
    tools = [m for m in run.messages if isinstance(m, ToolMessage)]
    assert [(t.id, t.content) for t in tools] == [("a", "cancelled"), ("b", "6.0")]


async def test_participant_failures(airline: DomainRuntime, task: Task) -> None:
    broken = await run_simulation(task, _Raising(ValueError("bad output")), ScriptedUser(["hi"]), airline.environment())
    assert broken.termination_reason == TerminationReason.AGENT_ERROR and "bad output" in (broken.info or {})["error"]
    down = await run_simulation(task, _Raising(LLMTimeoutError("timed out")), ScriptedUser(["hi"]), airline.environment())
    assert down.termination_reason == TerminationReason.INFRASTRUCTURE_ERROR
    empty = await run_simulation(task, ScriptedAgent([AssistantMessage(content="  ")], "x"), ScriptedUser(["hi"]),
                                 airline.environment())
    assert empty.termination_reason == TerminationReason.AGENT_ERROR
    user_fails = await run_simulation(task, noop_agent(), _Raising(RuntimeError("x")), airline.environment())
    assert user_fails.termination_reason == TerminationReason.USER_ERROR
    late = await run_simulation(task, _Slow(), ScriptedUser(["hi"]), airline.environment(), timeout=0.05)
    assert late.termination_reason == TerminationReason.TIMEOUT


async def test_oracle_runs_on_the_environment_it_is_given(airline: DomainRuntime, store: DataStore) -> None:
    task = next(
        t for t in store.tasks("airline", "v1")
        if t.evaluation_criteria and any(airline.is_write(a.name) for a in t.evaluation_criteria.actions or [])
    )
    env = airline.environment()
    run = await run_simulation(task, oracle_agent(task), ScriptedUser.from_task(task), env)
    assert run.termination_reason == TerminationReason.USER_STOP
    assert env.writes and env.db_hash() != airline.initial_hash
    assert isinstance(run.messages[1], UserMessage) and run.messages[1].content
