"""Reading actions and episode specs (no server)."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from inference.env import EpisodeSpec, RewardConfig, parse_action


def test_tool_call_shapes() -> None:
    plain = parse_action({"tool_calls": [{"name": "create_note", "arguments": {"title": "t"}}]})
    openai = parse_action({"role": "assistant", "content": None, "tool_calls": [
        {"id": "c9", "type": "function", "function": {"name": "create_note", "arguments": '{"title": "t"}'}}]})
    text = parse_action(json.dumps({"tool_calls": [{"name": "create_note", "arguments": {"title": "t"}}]}))
    for action in (plain, openai, text):
        assert [(c.name, c.arguments) for c in action.tool_calls] == [("create_note", {"title": "t"})]
        assert action.answer is None and not action.problems
    assert openai.tool_calls[0].id == "c9"


def test_answers() -> None:
    assert parse_action({"answer": "Done."}).answer == "Done."
    assert parse_action({"role": "assistant", "content": "Done."}).answer == "Done."
    assert parse_action("The note is created.").answer == "The note is created."


@pytest.mark.parametrize(("action", "problem"), [
    ({}, "needs tool_calls or an answer"),
    (42, "must be an object or text"),
    ({"tool_calls": [{"arguments": {}}]}, "has no name"),
    ({"tool_calls": [{"name": "f", "arguments": "{oops"}]}, "not JSON"),
])
def test_unreadable_actions_say_why(action: object, problem: str) -> None:
    assert problem in " ".join(parse_action(action).problems)


def test_spec_and_reward_validation() -> None:
    spec = EpisodeSpec(task="t", toolkits=["notes"])
    assert spec.max_steps == 16 and spec.checklist is None and spec.state == {}
    assert RewardConfig().mode == "success" and RewardConfig().valid_call == 0.0
    with pytest.raises(ValidationError):
        EpisodeSpec(task="", toolkits=["notes"])
    with pytest.raises(ValidationError):
        EpisodeSpec(task="t", toolkits=[])
    with pytest.raises(ValidationError):
        RewardConfig(mode="bonus")
