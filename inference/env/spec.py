"""What an episode is (`EpisodeSpec`), how it is rewarded (`RewardConfig`), and what an action is (`Action`)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field


class RewardConfig(BaseModel):
    """The reward of an episode. Defaults: 1.0 when the judge finds the task done at the end, else 0.0, and
    nothing per step.

    `mode="success"` pays `1.0` for a judged success; `mode="fraction"` pays the fraction of checklist items the
    judge marks `success`. Per-step shaping (added to that step's reward): `valid_call` for each call Gecko
    accepted, `invalid_call` (usually negative) for each call it rejected. A judge failure pays 0 and sets
    `info["judge_error"]`: an infrastructure failure is never a reward.
    """

    model_config = ConfigDict(extra="forbid")

    mode: Literal["success", "fraction"] = "success"
    valid_call: float = 0.0
    invalid_call: float = 0.0


class EpisodeSpec(BaseModel):
    """One task as an episode (`reset(options=…)` takes it, or a dict of its fields)."""

    model_config = ConfigDict(extra="forbid")

    task: str = Field(min_length=1)
    """The user's request: the first message of the episode and what the judge checks."""
    toolkits: list[str] = Field(min_length=1)
    """Gecko toolkits the episode may use (the session's toolkit subset; their tools are the action space)."""
    state: dict[str, Any] = Field(default_factory=dict)
    """Initial task state, merged over the toolkits' declared default states (each under its toolkit's name)."""
    checklist: list[str] | None = None
    """The items the judge checks; None: Gecko writes the checklist from the task at reset."""
    max_steps: int = Field(default=16, ge=1)
    """Steps before the episode is truncated (each step is one action: a set of parallel calls or an answer)."""

    @property
    def requests(self) -> str:
        """Every user request of the episode, one per line (what the judge checks)."""
        return "\n".join([self.task, *self.follow_ups])
    follow_ups: list[str] = Field(default_factory=list)
    """Later user turns: each is sent when the agent answers the one before; the answer to the last ends the
    episode, and the judge checks the whole conversation's requests."""
    system_prompt: str | None = None
    id: str | None = None
    """A name for the episode (suites set it to the task id)."""


@dataclass(frozen=True)
class ToolCallAction:
    """One tool call: the name as the tools list shows it (or the tool's original name) and its arguments."""

    name: str
    arguments: Any
    id: str = ""


@dataclass(frozen=True)
class Action:
    """A step's action: parallel tool calls, or a final answer (which ends the episode)."""

    tool_calls: tuple[ToolCallAction, ...] = ()
    answer: str | None = None
    problems: list[str] = field(default_factory=list)
    """Why parts of the action could not be read (their calls are answered with the error)."""


def _call(raw: Any, index: int) -> tuple[ToolCallAction | None, str]:
    if not isinstance(raw, Mapping):
        return None, f"tool call {index} is not an object"
    nested = raw.get("function")
    function: Mapping[str, Any] = nested if isinstance(nested, Mapping) else raw
    name = function.get("name")
    if not isinstance(name, str) or not name:
        return None, f"tool call {index} has no name"
    arguments = function.get("arguments", {})
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except ValueError as exc:
            return ToolCallAction(name, arguments, str(raw.get("id") or "")), f"arguments of {name} are not JSON: {exc}"
    return ToolCallAction(name, arguments, str(raw.get("id") or "")), ""


def parse_action(action: Any) -> Action:
    """Read an action: `{"tool_calls": [{name, arguments}, …]}` (OpenAI-shaped calls too), `{"answer": text}`,
    an assistant message `{"role": "assistant", "content", "tool_calls"}`, a JSON text of any of these, or plain
    text (an answer)."""
    if isinstance(action, str):
        try:
            parsed = json.loads(action)
        except ValueError:
            return Action(answer=action)
        if not isinstance(parsed, Mapping):
            return Action(answer=action)
        action = parsed
    if isinstance(action, Action):
        return action
    if not isinstance(action, Mapping):
        return Action(answer=None, problems=[f"an action must be an object or text, not {type(action).__name__}"])
    raw_calls = action.get("tool_calls") or []
    if raw_calls:
        if not isinstance(raw_calls, list):
            return Action(problems=["tool_calls must be a list"])
        calls, problems = [], []
        for index, raw in enumerate(raw_calls):
            call, problem = _call(raw, index)
            if call is not None:
                calls.append(call)
            if problem:
                problems.append(problem)
        return Action(tool_calls=tuple(calls), problems=problems)
    answer = action.get("answer", action.get("content"))
    if answer is None:
        return Action(problems=["an action needs tool_calls or an answer"])
    return Action(answer=str(answer))
