"""Read one JSON value out of a model's text: drop reasoning blocks and code fences, never `eval`."""

from __future__ import annotations

import json
import re
from typing import Any

from utils.llm.errors import LLMParseError

_REASONING = re.compile(r"<(think|thinking|reasoning)>.*?</\1>", re.DOTALL | re.IGNORECASE)
_UNOPENED_END = re.compile(r"^.*?</(think|thinking|reasoning)>", re.DOTALL | re.IGNORECASE)
_FENCE = re.compile(r"^```[a-zA-Z0-9_-]*\s*\n?(.*?)\n?```$", re.DOTALL)


def strip_reasoning(text: str) -> str:
    """Remove `<think>…</think>`-style blocks (and a leading block whose opening tag was cut off)."""
    text = _REASONING.sub("", text)
    return _UNOPENED_END.sub("", text, count=1)


def strip_fences(text: str) -> str:
    """Remove one outer Markdown code fence, with or without a language tag."""
    text = text.strip()
    match = _FENCE.match(text)
    return match.group(1).strip() if match else text


def clean_reply(text: str) -> str:
    """Reasoning blocks and fences removed, whitespace trimmed."""
    return strip_fences(strip_reasoning(text or "")).strip()


def parse_json_reply(text: str | None) -> Any:
    """Parse the JSON value in a reply.

    Tries the cleaned text as a whole, then the first `{…}` or `[…]` value embedded in prose.

    Raises:
        LLMParseError: no JSON value found.
    """
    if text is None or not text.strip():
        raise LLMParseError("the reply is empty; a JSON value was expected", raw=text or "")
    cleaned = clean_reply(text)
    try:
        return json.loads(cleaned)
    except ValueError as exc:
        first_error = exc
    decoder = json.JSONDecoder()
    for match in re.finditer(r"[\[{]", cleaned):
        try:
            value, _ = decoder.raw_decode(cleaned, match.start())
        except ValueError:
            continue
        return value
    raise LLMParseError(f"the reply is not valid JSON: {first_error}", raw=text)
