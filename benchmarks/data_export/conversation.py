"""An attempt as OpenAI chat messages: one assistant message per agent step (its calls, arguments as the JSON
text the API sends), one `tool` message per call (what the model was shown), the final answer last.

This is how the planner's loop (`inference.agents.planner`) builds its history, rebuilt from the trace.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import replace
from itertools import groupby
from typing import Any

from benchmarks.data_export.model import Attempt, Call


def call_arguments(call: Call) -> str:
    """The call's arguments as JSON text (the model's own text when it was not JSON)."""
    if call.arguments is None and call.raw_arguments is not None:
        return call.raw_arguments
    return json.dumps(call.arguments if call.arguments is not None else {}, ensure_ascii=False)


def step_messages(calls: Iterable[Call]) -> list[dict[str, Any]]:
    """The assistant message of one step's calls, then their tool messages."""
    calls = list(calls)
    assistant = {"role": "assistant", "content": None, "tool_calls": [
        {"id": c.call_id, "type": "function", "function": {"name": c.name, "arguments": call_arguments(c)}}
        for c in calls]}
    return [assistant, *({"role": "tool", "tool_call_id": c.call_id, "content": c.result} for c in calls)]


def attempt_messages(attempt: Attempt, *, first_action_only: bool = False) -> list[dict[str, Any]]:
    """The attempt's messages after the prompt; with `first_action_only`, its first assistant message alone."""
    if attempt.messages is not None:
        recorded = [dict(m) for m in attempt.messages]
        return recorded[:1] if first_action_only else recorded
    messages: list[dict[str, Any]] = []
    for _, calls in groupby(sorted(attempt.calls, key=lambda c: c.step), key=lambda c: c.step):
        step = step_messages(calls)
        if first_action_only:
            return step[:1]
        messages += step
    if attempt.final_text is not None or not messages:
        messages.append({"role": "assistant", "content": attempt.final_text or ""})
    return messages[:1] if first_action_only else messages


def uniquely_identified(attempt: Attempt, prefix: str) -> Attempt:
    """The attempt with call ids made unique under `prefix` (two attempts in one conversation reuse ids)."""
    return replace(attempt, calls=tuple(replace(c, call_id=f"{prefix}{c.call_id}") for c in attempt.calls))
