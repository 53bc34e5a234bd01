"""LLM state updates as JSON Patches: stub over HTTP, repair of patches that do not apply, fallback."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from gecko.pipeline.stages import RealCall
from gecko.pipeline.state.llm import PROMPTS_DIR, LLMStateUpdater, PatchOutput, patch_problems
from gecko.pipeline.state.rules import RulesStateUpdater
from tests.pipeline.llm.llm_stage_helpers import call_context
from utils.llm import LLMClient
from utils.llm import stage_tags as tags
from utils.llm.prompts import load_prompt
from utils.llm.scripted import ScriptedTransport
from utils.llm_stub import FaultRates, StubConfig
from utils.llm_stub.testing import RecordedSleep, run_stub, stub_client

NOTE = {"id": "123e4567-e89b-42d3-a456-426614174000", "title": "Groceries"}


async def test_write_call_patches_state_with_the_change_only(notes, stub, client: LLMClient) -> None:
    updater = LLMStateUpdater(client, stub.model(), RulesStateUpdater())
    state = {"big": ["x" * 50] * 200}
    before = copy.deepcopy(state)
    ctx = call_context(notes, "create_note", {"title": "Groceries"}, state=state)
    change = await updater.update(ctx, NOTE)
    assert change is not None and change.fallback is None and change.engine == stub.model()
    assert change.patch == [{"op": "add", "path": "/stub_writes",
                             "value": [{"tool": "notes/create_note", "arguments": {"title": "Groceries"}}]}]
    assert change.state["stub_writes"][0]["tool"] == "notes/create_note" and change.state["big"] == state["big"]
    assert state == before, "the input state must not be mutated"
    usage = ctx.usage[0]
    assert usage["role"] == "state" and usage["output_tokens"] < usage["input_tokens"] / 10


async def test_reads_skip_the_llm_unless_recorded(notes, stub, client: LLMClient) -> None:
    updater = LLMStateUpdater(client, stub.model(), RulesStateUpdater())
    ctx = call_context(notes, "list_notes", {"folder": "a"})
    assert await updater.update(ctx, []) is None and ctx.usage == []
    recorded = call_context(notes, "list_notes", {"folder": "a"}, session_config={"record_reads": True})
    change = await updater.update(recorded, [])
    assert change is not None and "stub_writes" in change.state and recorded.usage


async def test_patch_that_does_not_apply_is_sent_back_once(notes) -> None:
    bad = {"patch": [{"op": "replace", "path": "/notes/7/title", "value": "x"}], "reasoning": "r"}
    good = {"patch": [{"op": "add", "path": "/notes/-", "value": NOTE}], "reasoning": "r"}
    transport = ScriptedTransport([json.dumps(bad), json.dumps(good)])
    client = LLMClient(transport=transport, env={}, sleep=RecordedSleep())
    updater = LLMStateUpdater(client, "openai-compatible:m@http://127.0.0.1:1/v1", RulesStateUpdater())
    change = await updater.update(call_context(notes, "create_note", {"title": "G"}, state={"notes": []}), NOTE)
    assert change is not None and change.state == {"notes": [NOTE]} and change.fallback is None
    assert "does not apply" in transport.requests[1]["messages"][-1]["content"]
    transport.assert_done()


async def test_unusable_patch_falls_back_to_rules_atomically(notes) -> None:
    bad = json.dumps({"patch": [{"op": "add", "path": "/notes/-", "value": 1},
                                {"op": "remove", "path": "/missing"}]})
    transport = ScriptedTransport([bad, bad])
    client = LLMClient(transport=transport, env={}, sleep=RecordedSleep())
    updater = LLMStateUpdater(client, "openai-compatible:m@http://127.0.0.1:1/v1", RulesStateUpdater())
    state: dict[str, Any] = {"notes": []}
    change = await updater.update(call_context(notes, "create_note", {"title": "G"}, state=state), NOTE)
    assert change is not None and change.fallback == "rules" and change.notes
    assert change.state["notes"] == [] and change.state["effects"][0]["tool"] == "notes/create_note"
    assert state == {"notes": []}


@pytest.mark.parametrize("faults", [FaultRates(server_error=1.0), FaultRates(malformed=1.0),
                                    FaultRates(schema_violation=1.0), FaultRates(timeout=1.0)])
async def test_llm_failures_fall_back(notes, faults: FaultRates) -> None:
    with run_stub(StubConfig(faults=faults)) as stub:
        client = stub_client(stub, timeout_s=0.1, max_attempts=2)
        updater = LLMStateUpdater(client, stub.model(), RulesStateUpdater())
        change = await updater.update(call_context(notes, "delete_note", {"note_id": "n1"}), {"deleted": True})
        await client.aclose()
    assert change is not None and change.fallback == "rules" and "effects" in change.state


def test_patch_problems_validation() -> None:
    missing_value = PatchOutput.model_validate({"patch": [{"op": "add", "path": "/a"}]})
    assert "needs a 'value'" in patch_problems(missing_value, {})[1][0]
    no_slash = PatchOutput.model_validate({"patch": [{"op": "add", "path": "a", "value": 1}]})
    assert "JSON Pointer" in patch_problems(no_slash, {})[1][0]
    move = PatchOutput.model_validate({"patch": [{"op": "move", "from": "/a", "path": "/b"}]})
    assert patch_problems(move, {"a": 1}) == ({"b": 1}, [])
    root = PatchOutput.model_validate({"patch": [{"op": "replace", "path": "", "value": [1]}]})
    assert "JSON object" in patch_problems(root, {})[1][0]
    null_value = PatchOutput.model_validate({"patch": [{"op": "add", "path": "/a", "value": None}]})
    assert patch_problems(null_value, {}) == ({"a": None}, [])


async def test_bootstrap_applies_the_models_patch(stub, client: LLMClient) -> None:
    updater = LLMStateUpdater(client, stub.model(), RulesStateUpdater(),
                              toolkit_info={"notes": {"description": "notes", "operations": ["create_note"]}})
    usage: list[dict] = []
    state = await updater.bootstrap({"notes": []}, ["notes"], usage)
    assert state == {"notes": [], "stub_bootstrap": True} and usage[0]["role"] == "bootstrap"


async def test_bootstrap_failure_returns_the_fallbacks_state() -> None:
    with run_stub(StubConfig(faults=FaultRates(server_error=1.0))) as stub:
        client = stub_client(stub, max_attempts=2)
        updater = LLMStateUpdater(client, stub.model(), RulesStateUpdater())
        assert await updater.bootstrap({"a": 1}, ["notes"], []) == {"a": 1}
        await client.aclose()


async def test_apply_real_records_reads_and_patches_writes(notes, stub, client: LLMClient) -> None:
    updater = LLMStateUpdater(client, stub.model(), RulesStateUpdater())
    calls = [
        RealCall("list_notes", {"folder": "a"}, [NOTE], toolkit="notes", operation=notes.operations["list_notes"],
                 access="read"),
        RealCall("create_note", {"title": "G"}, NOTE, toolkit="notes", operation=notes.operations["create_note"]),
        RealCall("list_notes", {"folder": "b"}, [], toolkit="notes", access="read"),
    ]
    usage: list[dict] = []
    change = await updater.apply_real({"x": 1}, calls, usage)
    assert change.fallback is None and change.engine == stub.model()
    # the real list's record is stored under its resource (the world model); the unplaced read is observed
    assert change.state["notes"]["notes"] == {NOTE["id"]: NOTE}
    assert [o["arguments"] for o in change.state["observed"]] == [{"folder": "b"}]
    assert change.state["stub_writes"] == [{"tool": "notes/create_note", "arguments": {"title": "G"}}]
    assert change.state["x"] == 1 and len(usage) == 1
    assert {op["path"] for op in change.patch} == {"/notes", "/observed", "/counts", "/stub_writes"}


async def test_apply_real_write_failure_falls_back_per_call(notes) -> None:
    with run_stub(StubConfig(faults=FaultRates(server_error=1.0))) as stub:
        client = stub_client(stub, max_attempts=2)
        updater = LLMStateUpdater(client, stub.model(), RulesStateUpdater())
        change = await updater.apply_real({}, [RealCall("create_note", {"title": "G"}, NOTE, toolkit="notes")], [])
        await client.aclose()
    assert change.fallback == "rules" and change.state["effects"][0]["source"] == "real" and change.notes


async def test_prompt_sections(notes, stub, client: LLMClient) -> None:
    transport = ScriptedTransport([json.dumps({"patch": []})])
    scripted = LLMClient(transport=transport, env={})
    updater = LLMStateUpdater(scripted, "openai-compatible:m@http://127.0.0.1:1/v1", RulesStateUpdater())
    assert await updater.update(call_context(notes, "create_note", {"title": "G"}, state={"k": 1}), NOTE) is None
    messages = transport.requests[0]["messages"]
    assert messages[0]["content"].startswith(load_prompt(PROMPTS_DIR / "patch.md").text)  # no stub marker
    assert transport.headers[0] == {tags.ROLE_HEADER: "state"}
    call = tags.read_json_section(messages[1]["content"], tags.SECTION_CALL)
    assert call["tool"] == "notes/create_note" and call["response"] == NOTE
    assert tags.read_json_section(messages[1]["content"], tags.SECTION_STATE) == {"k": 1}
