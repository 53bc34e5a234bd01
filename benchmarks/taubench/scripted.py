"""Scripted participants for offline runs: no LLM anywhere.

- `oracle_agent(task)` performs the task's gold actions, one tool call per turn, then says the
  task's `communicate_info`: it scores 1.0 wherever the reward needs no judge.
- `noop_agent()` never calls a tool: the "do nothing" baseline.
- `ScriptedUser.from_task(task)` states the request, then stops as soon as the agent answers.

The oracle reads the answer key, so it is a test fixture for the runtime and the grader, never an
agent to compare with.
"""

from __future__ import annotations

from collections.abc import Sequence

from benchmarks.taubench.messages import AssistantMessage, Message, MessageToolCall, UserMessage
from benchmarks.taubench.orchestrator import STOP
from benchmarks.taubench.tasks import Task

ORACLE_DONE = "All done: your request has been handled."
NOOP_REPLY = "I'm sorry, but I cannot help with that."


class ScriptedAgent:
    """Plays a fixed list of messages, then answers every further turn with a closing text."""

    def __init__(self, script: Sequence[AssistantMessage], closing: str) -> None:
        self._script = list(script)
        self._closing = closing
        self._played = 0

    async def generate(self, history: Sequence[Message]) -> AssistantMessage:
        """Next scripted message (a fresh copy), or the closing text once the script is played."""
        if self._played < len(self._script):
            message = self._script[self._played].model_copy(deep=True)
            self._played += 1
            return message
        return AssistantMessage(content=self._closing)


def oracle_closing(task: Task) -> str:
    """The oracle's final text: the information the task requires the agent to communicate."""
    infos = (task.evaluation_criteria.communicate_info if task.evaluation_criteria else None) or []
    if not infos:
        return ORACLE_DONE
    return f"{ORACLE_DONE} The details: {'; '.join(infos)}."


def oracle_agent(task: Task) -> ScriptedAgent:
    """An agent that performs the gold actions in order and then communicates the required info."""
    actions = (task.evaluation_criteria.actions if task.evaluation_criteria else None) or []
    script = [
        AssistantMessage(
            tool_calls=[MessageToolCall(id=f"gold-{index}", name=action.name, arguments=dict(action.arguments))]
        )
        for index, action in enumerate(actions)
        if action.requestor == "assistant"
    ]
    return ScriptedAgent(script, oracle_closing(task))


def noop_agent(reply: str = NOOP_REPLY) -> ScriptedAgent:
    """An agent that never acts and always gives the same reply."""
    return ScriptedAgent([], reply)


def opening_request(task: Task) -> str:
    """The customer's first message: the reason for the call and what they know."""
    instructions = task.user_scenario.instructions
    if isinstance(instructions, str):
        return instructions
    parts = [instructions.reason_for_call.strip()]
    if instructions.known_info:
        parts.append(instructions.known_info.strip())
    return "\n\n".join(parts)


class ScriptedUser:
    """A customer who says the given lines one per turn, then sends the stop token."""

    def __init__(self, lines: Sequence[str], stop: str = STOP) -> None:
        self._lines = list(lines)
        self._stop = stop
        self._said = 0

    @classmethod
    def from_task(cls, task: Task) -> ScriptedUser:
        """A customer who states the task's request and stops once the agent has replied."""
        return cls([opening_request(task)])

    async def generate(self, history: Sequence[Message]) -> UserMessage:
        """Next line, or the stop token when the lines are used up."""
        if self._said < len(self._lines):
            self._said += 1
            return UserMessage(content=self._lines[self._said - 1])
        return UserMessage(content=self._stop)
