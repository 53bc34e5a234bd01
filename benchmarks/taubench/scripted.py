"""Scripted participants for offline runs: no LLM anywhere.

- `oracle_agent(task)` performs the task's gold actions, one tool call per turn, then says the
  task's `communicate_info`: it scores 1.0 wherever the reward needs no judge.
- `noop_agent()` never calls a tool: the "do nothing" baseline.
- `ScriptedUser.from_task(task)` states the request, then stops as soon as the agent answers.
- `gold_pair(task)`: the oracle for dual-control tasks (telecom): an agent and a user that share the gold action
  list and play it in order, each its own side's calls (the user's with `requestor="user"`); whoever is not next
  hands the turn over with a short text.

The oracle reads the answer key, so it is a test fixture for the runtime and the grader, never an
agent to compare with.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from benchmarks.taubench.messages import AssistantMessage, Message, MessageToolCall, UserMessage
from benchmarks.taubench.orchestrator import STOP
from benchmarks.taubench.tasks import Action, Task

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


ORACLE_HANDOVER = "Please do the next step on your phone."
USER_HANDOVER = "Done. What next?"


@dataclass
class GoldScript:
    """The gold actions of a task with a cursor shared by the oracle agent and the oracle user.

    Attributes:
        actions: the gold actions, in order (both sides').
        done: how many have been played.
    """

    actions: list[Action]
    done: int = 0

    def next_for(self, requestor: str) -> MessageToolCall | None:
        """The next gold call if it is `requestor`'s (the cursor moves on), else None."""
        if self.done >= len(self.actions) or self.actions[self.done].requestor != requestor:
            return None
        action = self.actions[self.done]
        self.done += 1
        return MessageToolCall(
            id=f"gold-{self.done - 1}", name=action.name, arguments=dict(action.arguments), requestor=requestor
        )

    @property
    def finished(self) -> bool:
        """Whether every gold action was played."""
        return self.done >= len(self.actions)


class GoldAgent:
    """The oracle agent of a dual-control task: its gold calls in turn, a hand-over text while the user's are due."""

    def __init__(self, script: GoldScript, closing: str) -> None:
        self.script = script
        self.closing = closing

    async def generate(self, history: Sequence[Message]) -> AssistantMessage:
        """The next gold agent call, or a hand-over text, or the closing text once every action was played."""
        call = self.script.next_for("assistant")
        if call is not None:
            return AssistantMessage(tool_calls=[call])
        return AssistantMessage(content=self.closing if self.script.finished else ORACLE_HANDOVER)


class GoldUser:
    """The oracle user of a dual-control task: the request, its gold calls in turn, then the stop token."""

    def __init__(self, script: GoldScript, request: str) -> None:
        self.script = script
        self.request = request
        self.asked = False

    async def generate(self, history: Sequence[Message]) -> UserMessage:
        """The request first; then the next gold user call, a hand-over text, or the stop token when all is played."""
        if not self.asked:
            self.asked = True
            return UserMessage(content=self.request)
        call = self.script.next_for("user")
        if call is not None:
            return UserMessage(tool_calls=[call])
        return UserMessage(content=STOP if self.script.finished else USER_HANDOVER)


def gold_pair(task: Task) -> tuple[GoldAgent, GoldUser]:
    """The oracle agent and user of a dual-control task, sharing one gold script."""
    actions = (task.evaluation_criteria.actions if task.evaluation_criteria else None) or []
    script = GoldScript(list(actions))
    return GoldAgent(script, oracle_closing(task)), GoldUser(script, opening_request(task))
