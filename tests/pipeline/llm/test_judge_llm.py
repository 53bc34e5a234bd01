"""Checklist and judge against the stub over HTTP; failures raise JudgeFailure, never success."""

from __future__ import annotations

import json

import pytest

from gecko.pipeline.judge.llm import PROMPTS_DIR, LLMTaskJudge
from gecko.pipeline.stages import ChecklistItem, JudgeFailure, JudgeInput
from utils.llm import LLMClient
from utils.llm import stage_tags as tags
from utils.llm.prompts import load_prompt
from utils.llm.scripted import ScriptedTransport
from utils.llm_stub import FaultRates, StubConfig
from utils.llm_stub.testing import RecordedSleep, run_stub, stub_client

GENERIC = "openai-compatible:m@http://127.0.0.1:1/v1"


def judge_input(items: list[ChecklistItem], **kw: object) -> JudgeInput:
    base = dict(task="Create a note A", checklist=items, state={"notes": []},
                calls=[{"tool": "notes/create_note", "arguments": {"title": "A"}, "status": 200, "response": {}}],
                agent_response="Created.", tools=[{"name": "create_note"}])
    base.update(kw)
    return JudgeInput(**base)


async def test_checklist_items_from_the_task(stub, client: LLMClient) -> None:
    judge = LLMTaskJudge(client, stub.model())
    usage: list[dict] = []
    items = await judge.checklist("Create a note called A and then delete note B.", ["earlier"], [], usage)
    assert [(i.id, i.description) for i in items] == [("1", "Create a note called A"), ("2", "Delete note B")]
    assert usage[0]["role"] == "checklist"


async def test_judge_verdicts_per_item(stub, client: LLMClient) -> None:
    judge = LLMTaskJudge(client, stub.model())
    items = [ChecklistItem("1", "Note A exists"), ChecklistItem("2", "stub-fail: note B deleted"),
             ChecklistItem("3", "stub-unknown: user told")]
    data = judge_input(items)
    result = await judge.judge(data)
    assert [(v.id, v.status) for v in result.items] == [("1", "success"), ("2", "failed"), ("3", "unknown")]
    assert not result.success and result.remaining == [items[1].description, items[2].description]
    assert all(v.reasoning for v in result.items) and data.usage[0]["role"] == "judge"
    only_ok = await judge.judge(judge_input(items[:1]))
    assert only_ok.success and only_ok.engine == stub.model()


async def test_judge_prompt_sections(stub, client: LLMClient) -> None:
    judge = LLMTaskJudge(client, stub.model())
    messages = judge.messages(judge_input([ChecklistItem("1", "x")], calls=[{"response": "y" * 100_000}]))
    user = messages[1]["content"]
    assert messages[0]["content"] == load_prompt(PROMPTS_DIR / "judge.md").text  # no stub marker
    assert tags.read_json_section(user, tags.SECTION_CHECKLIST) == [{"id": "1", "description": "x"}]
    assert tags.read_section(user, tags.SECTION_AGENT_RESPONSE) == "Created."
    assert len(tags.read_section(user, tags.SECTION_CALLS)) < 20_000


async def test_missing_item_is_repaired_then_accepted() -> None:
    items = [ChecklistItem("1", "a"), ChecklistItem("2", "b")]
    partial = {"items": [{"id": "1", "status": "success", "reasoning": "ok"}]}
    full = {"items": [{"id": "1", "status": "success", "reasoning": "ok"},
                      {"id": "2", "status": "failed", "reasoning": "b missing"}]}
    transport = ScriptedTransport([json.dumps(partial), json.dumps(full)])
    judge = LLMTaskJudge(LLMClient(transport=transport, env={}, sleep=RecordedSleep()), GENERIC)
    result = await judge.judge(judge_input(items))
    assert [v.status for v in result.items] == ["success", "failed"]
    assert "no verdict for checklist item '2'" in transport.requests[1]["messages"][-1]["content"]


async def test_incomplete_verdict_after_repair_raises() -> None:
    partial = json.dumps({"items": [{"id": "9", "status": "success"}]})
    judge = LLMTaskJudge(LLMClient(transport=ScriptedTransport([partial, partial]), env={}, sleep=RecordedSleep()),
                         GENERIC)
    with pytest.raises(JudgeFailure):
        await judge.judge(judge_input([ChecklistItem("1", "a")]))


async def test_invalid_status_raises_after_repair() -> None:
    bad = json.dumps({"items": [{"id": "1", "status": "completed"}]})
    judge = LLMTaskJudge(LLMClient(transport=ScriptedTransport([bad, bad]), env={}, sleep=RecordedSleep()), GENERIC)
    with pytest.raises(JudgeFailure):
        await judge.judge(judge_input([ChecklistItem("1", "a")]))


async def test_empty_checklist_is_a_failure_not_a_success(stub, client: LLMClient) -> None:
    with pytest.raises(JudgeFailure):
        await LLMTaskJudge(client, stub.model()).judge(judge_input([]))


@pytest.mark.parametrize("faults", [FaultRates(server_error=1.0), FaultRates(timeout=1.0),
                                    FaultRates(malformed=1.0), FaultRates(schema_violation=1.0)])
async def test_infrastructure_and_output_failures_raise(faults: FaultRates) -> None:
    with run_stub(StubConfig(faults=faults)) as stub:
        client = stub_client(stub, timeout_s=0.1, max_attempts=2)
        judge = LLMTaskJudge(client, stub.model())
        with pytest.raises(JudgeFailure):
            await judge.judge(judge_input([ChecklistItem("1", "a")]))
        with pytest.raises(JudgeFailure):
            await judge.checklist("do a thing", [], [], [])
        await client.aclose()
