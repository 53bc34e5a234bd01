"""Small datasets of every format for the verify tests (written here; BFCL data comes from bfcl-eval)."""

from __future__ import annotations

import json
from typing import Any

WEATHER = {"type": "function", "function": {"name": "get_weather", "description": "Current weather of a city.",
                                            "parameters": {"type": "object", "properties": {
                                                "city": {"type": "string"},
                                                "unit": {"type": "string", "enum": ["c", "f"]}},
                                                "required": ["city"]}}}


def openai_row(arguments: Any, *, result: str | None = None, answer: str | None = "It is sunny.",
               name: str = "get_weather") -> dict[str, Any]:
    """An OpenAI chat sample with one call (arguments as the JSON string the API sends)."""
    messages: list[dict[str, Any]] = [
        {"role": "user", "content": "Weather in Paris?"},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function", "function": {
            "name": name, "arguments": arguments if isinstance(arguments, str) else json.dumps(arguments)}}]},
    ]
    if result is not None:
        messages.append({"role": "tool", "tool_call_id": "c1", "content": result})
    if answer is not None:
        messages.append({"role": "assistant", "content": answer})
    return {"messages": messages, "tools": [WEATHER]}


XLAM_TOOLS = [{"name": "convert_currency", "description": "Convert an amount between currencies.",
               "parameters": {"amount": {"type": "float", "description": "Amount"},
                              "source": {"type": "str", "description": "From", "default": "USD"},
                              "target": {"type": "str", "description": "To"}}}]


def xlam_row(answers: list[dict[str, Any]], row_id: int = 1) -> dict[str, Any]:
    """An xLAM row (tools and answers as JSON strings, as the dataset stores them)."""
    return {"id": row_id, "query": "Convert 10 USD to EUR", "tools": json.dumps(XLAM_TOOLS), "answers": json.dumps(answers)}


BFCL_FUNCTION = {"name": "math.hypot", "description": "Hypotenuse.", "parameters": {
    "type": "dict", "properties": {"x": {"type": "integer"}, "y": {"type": "integer"},
                                   "mode": {"type": "string", "enum": ["fast", "exact"], "default": "N/A"}},
    "required": ["x", "y"]}}


def bfcl_row(ground_truth: list[dict[str, Any]] | None, row_id: str = "demo_0") -> dict[str, Any]:
    """A BFCL question line; `ground_truth` None leaves it for the possible-answer file."""
    row: dict[str, Any] = {"id": row_id, "question": [[{"role": "user", "content": "Hypotenuse of 3 and 4?"}]],
                           "function": [BFCL_FUNCTION]}
    if ground_truth is not None:
        row["ground_truth"] = ground_truth
    return row
