"""Response synthesis against the stub over HTTP: schema-valid bodies, repair, rules fallback."""

from __future__ import annotations

import pytest

from gecko.pipeline.stages import CallContext, Synthesis
from gecko.pipeline.synthesize.llm import LLMResponseSynthesizer, wrap_schema
from gecko.pipeline.synthesize.rules import RulesSynthesizer
from tests.pipeline.llm.llm_stage_helpers import call_context
from utils.llm import LLMClient
from utils.llm import stage_tags as tags
from utils.llm_stub import FaultRates, StubConfig
from utils.llm_stub.testing import run_stub, stub_client


class CountingFallback:
    engine = "rules"

    def __init__(self) -> None:
        self.calls = 0
        self.rules = RulesSynthesizer()

    async def synthesize(self, ctx: CallContext) -> Synthesis:
        self.calls += 1
        return await self.rules.synthesize(ctx)


@pytest.mark.parametrize(("op", "args"), [("create_note", {"title": "Groceries", "folder": "home"}),
                                          ("list_notes", {"folder": "home"}),
                                          ("delete_note", {"note_id": "n1"})])
async def test_body_fits_schema_and_echoes_arguments(notes, stub, client: LLMClient, op: str, args: dict) -> None:
    fallback = CountingFallback()
    synth = LLMResponseSynthesizer(client, stub.model(), fallback)
    ctx = call_context(notes, op, args, state={"notes": []})
    result = await synth.synthesize(ctx)
    assert notes.operations[op].response_is_valid(result.body)
    assert result.fallback is None and result.engine == stub.model() and fallback.calls == 0
    if op == "create_note":
        assert result.body["title"] == "Groceries"
    assert ctx.usage[0]["role"] == "responder" and ctx.usage[0]["ok"]


async def test_prompt_sections(notes, stub, client: LLMClient) -> None:
    synth = LLMResponseSynthesizer(client, stub.model(), RulesSynthesizer())
    recent = [{"tool": "Notes/list_notes", "arguments": {}, "status": 200, "response": []}] * 9
    messages = synth.messages(call_context(notes, "create_note", {"title": "t"}, state={"k": 1}, recent_calls=recent))
    user = messages[1]["content"]
    assert tags.read_json_section(user, tags.SECTION_STATE) == {"k": 1}
    assert len(tags.read_json_section(user, tags.SECTION_RECENT_CALLS)) == 5
    assert tags.read_json_section(user, tags.SECTION_RESPONSE_SCHEMA)["required"] == ["id", "title"]


def test_wrap_schema_lifts_defs() -> None:
    wrapped = wrap_schema({"type": "array", "items": {"$ref": "#/$defs/X"}, "$defs": {"X": {"type": "string"}}})
    assert wrapped["$defs"] == {"X": {"type": "string"}}
    assert wrapped["properties"]["response"] == {"type": "array", "items": {"$ref": "#/$defs/X"}}
    assert wrap_schema(None)["properties"]["response"] == {}


@pytest.mark.parametrize("faults", [FaultRates(schema_violation=1.0), FaultRates(malformed=1.0),
                                    FaultRates(server_error=1.0), FaultRates(timeout=1.0)])
async def test_unfixable_output_falls_back_to_rules(notes, faults: FaultRates) -> None:
    fallback = CountingFallback()
    with run_stub(StubConfig(faults=faults)) as stub:
        client = stub_client(stub, timeout_s=0.1, max_attempts=2)
        synth = LLMResponseSynthesizer(client, stub.model(), fallback)
        ctx = call_context(notes, "create_note", {"title": "x"})
        result = await synth.synthesize(ctx)
        await client.aclose()
    assert result.fallback == "rules" and fallback.calls == 1 and result.notes
    assert notes.operations["create_note"].response_is_valid(result.body)


async def test_schema_violations_are_repaired_or_fall_back(notes) -> None:
    with run_stub(StubConfig(faults=FaultRates(schema_violation=0.5), seed=5)) as stub:
        client = stub_client(stub)
        synth = LLMResponseSynthesizer(client, stub.model(), CountingFallback())
        results = [await synth.synthesize(call_context(notes, "create_note", {"title": f"t{i}"})) for i in range(24)]
        await client.aclose()
    repaired = [r for r in results if r.fallback is None and "repaired" in " ".join(r.notes)]
    fell_back = [r for r in results if r.fallback == "rules"]
    assert repaired and fell_back and len(repaired) + len(fell_back) < len(results)
    assert all(notes.operations["create_note"].response_is_valid(r.body) for r in results)
