"""Semantic validation against the stub over HTTP."""

from __future__ import annotations

import pytest

from gecko.pipeline.validate.semantic_llm import PROMPT_PATH, LLMSemanticValidator, soft_schema
from tests.pipeline.llm.llm_stage_helpers import call_context
from utils.llm import LLMClient, UnknownModelError
from utils.llm import stage_tags as tags
from utils.llm.prompts import load_prompt
from utils.llm_stub import FaultRates, StubConfig
from utils.llm_stub.testing import run_stub, stub_client


async def test_valid_call(notes, stub, client: LLMClient) -> None:
    validator = LLMSemanticValidator(client, stub.model())
    ctx = call_context(notes, "create_note", {"title": "Groceries"})
    verdict = await validator.check(ctx)
    assert verdict.outcome == "valid" and verdict.errors == []
    assert ctx.usage[0]["role"] == "validator" and ctx.usage[0]["prompt_version"] == "semantic-1"


async def test_invalid_call_lists_errors(notes, stub, client: LLMClient) -> None:
    validator = LLMSemanticValidator(client, stub.model())
    verdict = await validator.check(call_context(notes, "create_note", {"title": "stub-reject"}))
    assert verdict.outcome == "invalid" and verdict.errors


async def test_prompt_carries_tool_and_soft_schema_and_nothing_for_the_stub(notes, stub, client: LLMClient) -> None:
    validator = LLMSemanticValidator(client, stub.model())
    messages = validator.messages(call_context(notes, "create_note", {"title": "x"}))
    assert messages[0]["content"] == load_prompt(PROMPT_PATH).text  # the stage travels in a header, not the prompt
    tool = tags.read_json_section(messages[1]["content"], tags.SECTION_TOOL)
    assert tool["name"] == "create_note" and "minLength" not in str(tool["parameters"])
    assert tags.read_json_section(messages[1]["content"], tags.SECTION_ARGUMENTS) == {"title": "x"}


def test_soft_schema_keeps_meaning_and_property_names() -> None:
    schema = {"type": "object", "required": ["enum"], "additionalProperties": False,
              "properties": {"enum": {"type": "string", "enum": ["a"], "description": "d", "pattern": "x",
                                      "default": {"format": "kept"}}}}
    assert soft_schema(schema) == {"type": "object", "properties": {"enum": {
        "type": "string", "description": "d", "default": {"format": "kept"}}}}


@pytest.mark.parametrize("faults", [FaultRates(server_error=1.0), FaultRates(timeout=1.0),
                                    FaultRates(malformed=1.0), FaultRates(schema_violation=1.0),
                                    FaultRates(rate_limit=1.0)])
async def test_failed_check_is_unchecked_never_valid(notes, faults: FaultRates) -> None:
    with run_stub(StubConfig(faults=faults, retry_after_s=0)) as stub:
        client = stub_client(stub, timeout_s=0.1, max_attempts=2)
        verdict = await LLMSemanticValidator(client, stub.model()).check(call_context(notes, "create_note", {"title": "x"}))
        await client.aclose()
    assert verdict.outcome == "unchecked" and verdict.reason


def test_unknown_model_fails_at_construction(stub, client: LLMClient) -> None:
    with pytest.raises(UnknownModelError):
        LLMSemanticValidator(client, "no-such-model")
