"""The gating judge's rule (gats/README.md states it): rejected calls, nothing done, a plain answer where a tool
call is needed, and repeated identical calls fail; everything else passes."""

from __future__ import annotations

from typing import Any

from gecko.pipeline.judge.rules import RulesJudge, repeated_calls
from gecko.pipeline.stages import ChecklistItem, JudgeInput


def call(tool: str, status: int = 200, access: str = "read", **arguments: Any) -> dict[str, Any]:
    return {"tool": tool, "status": status, "access": access, "arguments": arguments}


async def verdict(calls: list[dict[str, Any]], answer: str | None = None, expects_tool_call: bool = False) -> str:
    data = JudgeInput("task", [ChecklistItem("1", "do it")], {}, calls, answer, [], expects_tool_call=expects_tool_call)
    return (await RulesJudge().judge(data)).items[0].status


async def test_a_plain_answer_fails_only_when_the_task_needs_a_tool_call() -> None:
    assert await verdict([], "The area is 25.", expects_tool_call=True) == "failed"
    assert await verdict([], "No tool fits this request.", expects_tool_call=False) == "success"
    assert await verdict([], None) == "failed"
    assert await verdict([call("geo/area", 422)], "25", expects_tool_call=True) == "failed"
    assert await verdict([call("geo/area", base=10)], "25", expects_tool_call=True) == "success"


async def test_repeated_identical_calls_fail_unless_a_write_came_between() -> None:
    twice = [call("geo/area", base=10), call("geo/area", base=10)]
    assert await verdict(twice) == "failed" and len(repeated_calls(twice)) == 1
    assert await verdict([call("geo/area", base=10), call("geo/area", base=11)]) == "success"
    written = [call("fs/ls"), call("fs/touch", access="write", name="a"), call("fs/ls")]
    assert await verdict(written) == "success"
    same_write = [call("fs/touch", access="write", name="a"), call("fs/touch", access="write", name="a")]
    assert await verdict(same_write) == "failed"
    undo = [call("cart/add", access="write", sku="x"), call("cart/remove", access="write", sku="x"),
            call("cart/add", access="write", sku="x")]
    assert await verdict(undo) == "success"


async def test_identical_calls_of_one_message_are_parallel_not_repeats() -> None:
    draws = [call("random/normal", mu=5, sigma=2), call("random/normal", mu=5, sigma=2),
             call("random/normal", mu=10, sigma=3), call("random/normal", mu=10, sigma=3)]
    assert repeated_calls(draws, [0, 0, 0, 0]) == []
    data = JudgeInput("task", [ChecklistItem("1", "do it")], {}, draws, None, [], call_messages=[0, 0, 0, 0])
    assert (await RulesJudge().judge(data)).items[0].status == "success"
    assert repeated_calls(draws, [0, 0, 1, 1]) == []  # each pair in its own message
    assert repeated_calls(draws, [0, 1, 1, 1]) == [draws[1]]  # the (5, 2) draw again in a later message
    assert len(repeated_calls(draws, [0, 1, 2, 3])) == 2  # one call per message: a model that loops
    assert len(repeated_calls(draws)) == 2 and len(repeated_calls(draws, [0])) == 2  # unknown or mismatched
