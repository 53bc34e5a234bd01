"""Reading JSON out of model text."""

from __future__ import annotations

import pytest

from utils.llm import LLMParseError, clean_reply, parse_json_reply


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ('{"a": 1}', {"a": 1}),
        ('```json\n{"a": 1}\n```', {"a": 1}),
        ('```\n[1, 2]\n```', [1, 2]),
        ('<think>maybe {"a": 0}</think>\n{"a": 1}', {"a": 1}),
        ('<THINKING>x</THINKING>```json\n{"a": 2}\n```', {"a": 2}),
        ('reasoning cut off here</think>{"a": 3}', {"a": 3}),
        ('Sure! Here it is: {"a": {"b": [1]}} Hope it helps.', {"a": {"b": [1]}}),
    ],
)
def test_parse(text: str, value: object) -> None:
    assert parse_json_reply(text) == value


@pytest.mark.parametrize("text", ["", None, "no json here", '{"a": tru'])
def test_unparseable(text: str | None) -> None:
    with pytest.raises(LLMParseError):
        parse_json_reply(text)


def test_clean_reply_keeps_plain_text() -> None:
    assert clean_reply("<think>x</think> hello ") == "hello"
