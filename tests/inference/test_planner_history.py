"""Malformed tool-call arguments never go back to the provider: the history carries valid JSON for the call,
and the parse error (with what the model sent) is in the tool result it reads. A real llama.cpp server
answers 500 to a history with `"arguments": "{"`; tests/integration/test_local_model.py checks it there."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from gats.turns import ConversationTurn, history_messages
from inference.agents import PlannerAgent
from inference.agents.base import AgentRequest
from inference.agents.llm import PlannerReply
from inference.tools.catalog import CatalogTool, ToolCatalog
from inference.tools.execution import ToolCallRequest, ToolExecutor, ToolOutcome


class _Backend:
    async def execute(self, tool: CatalogTool, arguments: dict[str, Any], message: str | None = None) -> ToolOutcome:
        return ToolOutcome(True, json.dumps({"area": 25}), body={"area": 25}, status=200)


class _Model:
    """Cut off at its output cap on the first step (the last call's arguments are `{`), then answers."""

    name = "scripted"

    def __init__(self) -> None:
        self.seen: list[list[dict[str, Any]]] = []

    async def complete(self, messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]]) -> PlannerReply:
        self.seen.append([dict(m) for m in messages])
        if len(self.seen) == 1:
            return PlannerReply(None, (ToolCallRequest("c1", "area", '{"base": 10}'), ToolCallRequest("c2", "area", "{")), ())
        return PlannerReply("The area is 25.", (), ())


async def test_history_has_valid_json_and_the_result_the_parse_error() -> None:
    model = _Model()
    catalog = ToolCatalog([CatalogTool("geo", "area", "area", "area")])
    run = await PlannerAgent(model).run(AgentRequest(({"role": "user", "content": "area?"},)),
                                        ToolExecutor(catalog, _Backend()))
    assistant, first, second = model.seen[1][1:4]
    assert [c["function"]["arguments"] for c in assistant["tool_calls"]] == ['{"base": 10}', "{}"]
    for call in assistant["tool_calls"]:
        json.loads(call["function"]["arguments"])
    assert first["content"] == '{"area": 25}'
    assert "not valid JSON" in second["content"] and "you sent: {" in second["content"]
    assert run.calls[1].outcome.error_kind == "malformed_arguments"
    history = history_messages(ConversationTurn("area?", ({"role": "user", "content": "area?"},)), run)
    assert [c["function"]["arguments"] for c in history[1]["tool_calls"]] == ['{"base": 10}', "{}"]
