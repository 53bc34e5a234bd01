"""Planner replies of the stub: tool calls from a scripted plan, or a default one-call plan.

A plan is `{"match"?: "text", "steps": [step, ...]}`; a step is `{"tool_calls": [{"name", "arguments"}]}`
or `{"content": "final answer"}`. The step played is the number of assistant messages after the last
user message, so every new user turn (and every fresh attempt) starts at step 0. The first plan whose
`match` occurs in the user messages (or that has no `match`) is used; a request may carry its own plan
in the `stub_plan` field, which wins. Past the last step the stub answers "Done.".

Without any plan: if tools are offered and none was called in this turn, call the forced tool (or the
first one) with arguments generated from its parameter schema; otherwise answer "Done.".
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from utils.schema.instance import UnsatisfiableSchema, generate_instance

FINAL_TEXT = "Done."


def _turn_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    last_user = max((i for i, m in enumerate(messages) if m.get("role") == "user"), default=-1)
    return messages[last_user + 1:]


def _user_text(messages: list[dict[str, Any]]) -> str:
    return "\n".join(str(m.get("content") or "") for m in messages if m.get("role") == "user")


def choose_plan(plans: list[dict[str, Any]], messages: list[dict[str, Any]]) -> dict[str, Any] | None:
    """The first plan that matches the conversation."""
    text = _user_text(messages)
    for plan in plans:
        match = plan.get("match")
        if not match or str(match) in text:
            return plan
    return None


def _call_id(messages: list[dict[str, Any]], index: int, name: str) -> str:
    digest = hashlib.sha256(json.dumps(messages, sort_keys=True, default=str).encode()).hexdigest()[:12]
    return f"call_{digest}_{index}_{name}"[:64]


def _tool_calls(calls: list[dict[str, Any]], messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for index, call in enumerate(calls):
        name = str(call.get("name", ""))
        arguments = call.get("arguments", {})
        out.append({
            "id": _call_id(messages, index, name), "type": "function",
            "function": {"name": name, "arguments": arguments if isinstance(arguments, str) else json.dumps(arguments)},
        })
    return out


def _forced_name(tool_choice: Any) -> str | None:
    if isinstance(tool_choice, dict):
        function = tool_choice.get("function")
        if isinstance(function, dict) and function.get("name"):
            return str(function["name"])
    return None


def planner_reply(
    messages: list[dict[str, Any]], tools: list[dict[str, Any]], tool_choice: Any, plans: list[dict[str, Any]],
    request_plan: dict[str, Any] | None,
) -> tuple[str | None, list[dict[str, Any]]]:
    """(content, tool_calls) for a planner request."""
    plan = request_plan if isinstance(request_plan, dict) else choose_plan(plans, messages)
    turn = _turn_messages(messages)
    if plan is not None:
        step_index = sum(1 for m in turn if m.get("role") == "assistant")
        steps = plan.get("steps") or []
        if step_index >= len(steps):
            return FINAL_TEXT, []
        step = steps[step_index]
        if step.get("tool_calls"):
            return step.get("content"), _tool_calls(list(step["tool_calls"]), messages)
        return str(step.get("content", FINAL_TEXT)), []
    if not tools or any(m.get("role") == "tool" for m in turn) or tool_choice == "none":
        return FINAL_TEXT, []
    forced = _forced_name(tool_choice)
    functions = [t.get("function", {}) for t in tools if isinstance(t, dict)]
    chosen = next((f for f in functions if f.get("name") == forced), functions[0] if functions else {})
    try:
        arguments = generate_instance(chosen.get("parameters") or {"type": "object"}, _user_text(messages))
    except UnsatisfiableSchema:
        arguments = {}
    return None, _tool_calls([{"name": chosen.get("name", ""), "arguments": arguments}], messages)
