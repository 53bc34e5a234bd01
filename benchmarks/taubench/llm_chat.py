"""Shared pieces of the tau2 LLM participants: prompt files and conversion of tau2 messages to the
OpenAI chat format that `utils.llm.LLMClient` sends."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from string import Template
from typing import Any

from benchmarks.taubench.messages import (
    AssistantMessage,
    Message,
    MessageToolCall,
    Requestor,
    ToolMessage,
    UserMessage,
)
from utils.llm import ChatResult, Prompt, load_prompt

PROMPTS_DIR = Path(__file__).resolve().parent / "prompts"


def prompt(name: str) -> Prompt:
    """A prompt file of this package (`prompts/<name>.md`)."""
    return load_prompt(PROMPTS_DIR / f"{name}.md")


def render(template: Prompt, **values: str) -> str:
    """The prompt text with `$name` placeholders filled (others left as they are)."""
    return Template(template.text).safe_substitute(**values)


def usage_cost(usage: Sequence[dict[str, Any]]) -> float | None:
    """Total cost in dollars of usage records (None when no record has a price)."""
    costs = [cost for r in usage if isinstance(cost := r.get("cost_usd"), int | float)]
    return float(sum(costs)) if costs else None


def usage_tokens(usage: Sequence[dict[str, Any]]) -> dict[str, int]:
    """Prompt and completion tokens of usage records."""
    return {"prompt_tokens": sum(int(r.get("input_tokens") or 0) for r in usage),
            "completion_tokens": sum(int(r.get("output_tokens") or 0) for r in usage)}


def agent_view(history: Sequence[Message]) -> list[dict[str, Any]]:
    """The conversation as the agent's model reads it: its own messages as `assistant`, the customer's as
    `user`, tool results as `tool` messages paired by call id. The customer's own tool calls and their results
    (dual control) are not the agent's to see."""
    out: list[dict[str, Any]] = []
    for message in history:
        if isinstance(message, UserMessage) and message.tool_calls:
            continue
        if isinstance(message, ToolMessage) and message.requestor == "user":
            continue
        if isinstance(message, AssistantMessage):
            entry: dict[str, Any] = {"role": "assistant", "content": message.content}
            if message.tool_calls:
                entry["tool_calls"] = [
                    {"id": c.id, "type": "function",
                     "function": {"name": c.name, "arguments": json.dumps(c.arguments)}}
                    for c in message.tool_calls
                ]
            out.append(entry)
        elif isinstance(message, UserMessage):
            out.append({"role": "user", "content": message.content or ""})
        elif isinstance(message, ToolMessage):
            out.append({"role": "tool", "tool_call_id": message.id, "content": message.content or ""})
    return out


def user_tool_view(history: Sequence[Message]) -> list[dict[str, Any]]:
    """The conversation as a user simulator with tools reads it (roles flipped): the agent's texts as `user`, the
    customer's texts and own tool calls as `assistant`, the results of those calls as `tool` messages. The agent's
    tool calls and results are hidden."""
    out: list[dict[str, Any]] = []
    for message in history:
        if isinstance(message, AssistantMessage) and not message.tool_calls:
            out.append({"role": "user", "content": message.content or ""})
        elif isinstance(message, UserMessage):
            entry: dict[str, Any] = {"role": "assistant", "content": message.content}
            if message.tool_calls:
                entry["tool_calls"] = [
                    {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": json.dumps(c.arguments)}}
                    for c in message.tool_calls
                ]
            out.append(entry)
        elif isinstance(message, ToolMessage) and message.requestor == "user":
            out.append({"role": "tool", "tool_call_id": message.id, "content": message.content or ""})
    return out


def tool_calls_of(result: ChatResult, requestor: Requestor = "assistant") -> list[MessageToolCall]:
    """The model's function calls as tau2 tool calls; arguments that are not a JSON object become `{}`
    with the raw text kept under `"__raw_arguments__"` (the tool then fails, as in tau2). `requestor` is `user`
    for the calls of a user simulator with tools."""
    calls = []
    for call in result.tool_calls:
        try:
            arguments = json.loads(call.arguments) if call.arguments.strip() else {}
        except ValueError:
            arguments = None
        if not isinstance(arguments, dict):
            arguments = {"__raw_arguments__": call.arguments}
        calls.append(MessageToolCall(id=call.id, name=call.name, arguments=arguments, requestor=requestor))
    return calls
