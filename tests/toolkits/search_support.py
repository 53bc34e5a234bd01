"""Shared by the tool search tests: OpenAI function definitions in one line each."""

from __future__ import annotations


def openai_function(name: str, description: str, **params: str) -> dict:
    """An OpenAI tool definition whose parameters are the given names, each a string with that description."""
    return {"type": "function", "function": {"name": name, "description": description, "parameters": {
        "type": "object", "properties": {p: {"type": "string", "description": d} for p, d in params.items()}}}}
