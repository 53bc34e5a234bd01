"""LLMClient with a scripted transport: request shaping, structured output, repair, cache, usage."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx2
import openai
import pytest
from pydantic import BaseModel

from utils.llm import (
    ClientConfig,
    LLMCache,
    LLMClient,
    LLMParseError,
    LLMSchemaError,
    LLMServerError,
    LLMToolCall,
    LLMUsageError,
    RawReply,
    RetryPolicy,
)
from utils.llm import stage_tags as tags
from utils.llm.scripted import ScriptedTransport
from utils.llm_stub.testing import RecordedSleep

GENERIC = "openai-compatible:m@http://127.0.0.1:1/v1"
SCHEMA_MODEL = "gpt-4o-mini"
ENV = {"OPENAI_API_KEY": "sk-test"}
REQUEST = httpx2.Request("POST", "http://test/v1/chat/completions")


class Verdict(BaseModel):
    valid: bool
    errors: list[str] = []


def make(steps: list[Any], cache: LLMCache | None = None, **config: Any) -> tuple[LLMClient, ScriptedTransport, list]:
    transport = ScriptedTransport(steps)
    sink: list[dict[str, Any]] = []
    client = LLMClient(transport=transport, cache=cache, env=ENV, sleep=RecordedSleep(),
                       config=ClientConfig(**config), usage_sink=sink.append)
    return client, transport, sink


MESSAGES = [{"role": "system", "content": "Check the call."}, {"role": "user", "content": "check"}]


async def test_chat_returns_text_tool_calls_and_usage() -> None:
    reply = RawReply(text=None, tool_calls=(LLMToolCall("c1", "f", '{"a": 1}'),), input_tokens=12, output_tokens=3,
                     finish_reason="tool_calls", model="gpt-4o-mini-2024")
    client, transport, sink = make([reply])
    usage: list[dict[str, Any]] = []
    result = await client.chat(SCHEMA_MODEL, MESSAGES, role="planner", tools=[{"type": "function", "function": {
        "name": "f", "parameters": {"type": "object"}}}], usage=usage, prompt_version="p1")
    assert result.tool_calls[0].parsed_arguments() == {"a": 1}
    assert (result.input_tokens, result.output_tokens, result.cached, result.attempts) == (12, 3, False, 1)
    request = transport.requests[0]
    assert request["model"] == "gpt-4o-mini" and request["temperature"] == 0.0 and "tools" in request
    assert usage == sink and usage[0]["role"] == "planner" and usage[0]["ok"] and usage[0]["prompt_version"] == "p1"
    assert usage[0]["cost_usd"] == pytest.approx((12 * 0.15 + 3 * 0.60) / 1e6)
    assert set(usage[0]) == {"role", "model", "api_model", "provider", "input_tokens", "output_tokens", "latency_s",
                             "cached", "cost_usd", "attempts", "ok", "error", "prompt_version", "purpose"}


async def test_role_travels_in_a_header_and_unknown_roles_are_refused() -> None:
    client, transport, sink = make(["ok"])
    await client.chat(GENERIC, MESSAGES, role="judge")
    assert transport.headers == [{tags.ROLE_HEADER: "judge"}] and sink[0]["role"] == "judge"
    with pytest.raises(LLMUsageError, match="unknown usage role 'validation'"):
        await client.chat(GENERIC, MESSAGES, role="validation")
    with pytest.raises(LLMUsageError, match="unknown usage role"):
        await client.structured(GENERIC, MESSAGES, Verdict, role="semantic")
    assert len(transport.requests) == 1


async def test_reasoning_model_gets_no_temperature_and_completion_token_param() -> None:
    client, transport, _ = make(["hi"])
    await client.chat("gpt-5-mini", MESSAGES, role="judge", max_tokens=100)
    request = transport.requests[0]
    assert "temperature" not in request and "max_completion_tokens" not in request
    capped, capped_transport, _ = make(["hi", "again"], max_tokens=5000)
    await capped.chat("gpt-5-mini", MESSAGES, role="judge", max_tokens=100)
    assert capped_transport.requests[0]["max_completion_tokens"] == 5000
    await capped.chat("gpt-4.1", MESSAGES, role="judge", max_tokens=100)
    assert capped_transport.requests[1]["max_completion_tokens"] == 100


async def test_tools_refused_for_models_without_tool_support() -> None:
    client, _, _ = make([])
    with pytest.raises(LLMUsageError, match="tool"):
        await client.chat("deepseek-reasoner", MESSAGES, role="planner",
                          tools=[{"type": "function", "function": {"name": "f"}}])


async def test_structured_uses_json_schema_format_when_supported() -> None:
    client, transport, _ = make(['{"valid": true, "errors": []}'])
    result = await client.structured(SCHEMA_MODEL, MESSAGES, Verdict, role="validator", name="gecko_x")
    assert result.value == Verdict(valid=True) and not result.repaired
    rf = transport.requests[0]["response_format"]
    assert rf["type"] == "json_schema" and rf["json_schema"]["name"] == "gecko_x"
    assert rf["json_schema"]["schema"]["required"] == ["valid"]


async def test_structured_falls_back_to_json_mode_with_schema_in_prompt() -> None:
    client, transport, _ = make(['```json\n{"valid": false, "errors": ["x"]}\n```'])
    result = await client.structured(GENERIC, MESSAGES, Verdict, role="validator")
    assert result.value.errors == ["x"]
    request = transport.requests[0]
    assert request["response_format"] == {"type": "json_object"}
    system = request["messages"][0]["content"]
    assert system.startswith("Check the call.")
    assert json.loads(tags.read_section(system, tags.SCHEMA_SECTION))["properties"]["valid"]["type"] == "boolean"


async def test_one_repair_round_sends_errors_back() -> None:
    client, transport, sink = make(['{"valid": "maybe"}', '<think>oops</think>{"valid": false, "errors": ["e"]}'])
    result = await client.structured(GENERIC, MESSAGES, Verdict, role="validator")
    assert result.repaired and result.value.errors == ["e"]
    repair = transport.requests[1]["messages"]
    assert repair[-2] == {"role": "assistant", "content": '{"valid": "maybe"}'}
    assert "valid" in repair[-1]["content"] and "Problems found" in repair[-1]["content"]
    assert [r["purpose"] for r in sink] == ["call", "repair"]


async def test_repair_is_bounded_to_one_round() -> None:
    client, transport, _ = make(['{"valid": 3}', '{"valid": []}'])
    with pytest.raises(LLMSchemaError) as info:
        await client.structured(GENERIC, MESSAGES, Verdict, role="validator")
    assert len(transport.requests) == 2 and info.value.errors
    transport.assert_done()


async def test_unparseable_twice_is_a_parse_error() -> None:
    client, _, _ = make(["not json", "still not"])
    with pytest.raises(LLMParseError):
        await client.structured(GENERIC, MESSAGES, Verdict, role="validator")


async def test_extra_check_goes_through_the_repair_round() -> None:
    client, transport, _ = make(['{"valid": false, "errors": []}', '{"valid": false, "errors": ["why"]}'])

    def needs_reason(v: Verdict) -> list[str]:
        return [] if v.valid or v.errors else ["errors: give at least one reason when valid is false"]

    result = await client.structured(GENERIC, MESSAGES, Verdict, role="validator", extra_check=needs_reason)
    assert result.value.errors == ["why"] and "at least one reason" in transport.requests[1]["messages"][-1]["content"]


async def test_transient_errors_are_retried_without_real_waits() -> None:
    failure = openai.APIStatusError("boom", response=httpx2.Response(503, request=REQUEST), body=None)
    client, transport, sink = make([failure, failure, "ok"], retry=RetryPolicy(max_attempts=3))
    result = await client.chat(GENERIC, MESSAGES, role="user")
    assert result.text == "ok" and result.attempts == 3 and len(transport.requests) == 3
    assert sink[0]["attempts"] == 3


async def test_exhausted_retries_record_a_failed_usage_record() -> None:
    failure = openai.APIStatusError("boom", response=httpx2.Response(500, request=REQUEST), body=None)
    client, _, sink = make([failure, failure], retry=RetryPolicy(max_attempts=2))
    with pytest.raises(LLMServerError):
        await client.chat(GENERIC, MESSAGES, role="responder")
    assert sink[0]["ok"] is False and sink[0]["error"] == "server" and sink[0]["attempts"] == 2


async def test_cache_hit_costs_nothing_and_repeats_the_reply(tmp_path: Path) -> None:
    cache = LLMCache(tmp_path / "c.db")
    client, transport, sink = make(['{"valid": true}'], cache=cache)
    first = await client.structured(GENERIC, MESSAGES, Verdict, role="validator", prompt_version="v1")
    second = await client.structured(GENERIC, MESSAGES, Verdict, role="validator", prompt_version="v1")
    assert first.value == second.value and second.cached and len(transport.requests) == 1
    assert sink[1]["cached"] and sink[1]["input_tokens"] == 0 and sink[1]["cost_usd"] == 0.0
    transport.add('{"valid": false, "errors": ["new prompt"]}')
    third = await client.structured(GENERIC, MESSAGES, Verdict, role="validator", prompt_version="v2")
    assert not third.cached and third.value.errors == ["new prompt"]
    cache.close()


async def test_cache_stores_the_repaired_reply_not_the_broken_one(tmp_path: Path) -> None:
    cache = LLMCache(tmp_path / "c.db")
    client, transport, _ = make(["garbage", '{"valid": true}'], cache=cache)
    await client.structured(GENERIC, MESSAGES, Verdict, role="validator")
    again = await client.structured(GENERIC, MESSAGES, Verdict, role="validator")
    assert again.cached and again.value.valid and len(transport.requests) == 2
    cache.close()


async def test_errors_are_never_cached(tmp_path: Path) -> None:
    cache = LLMCache(tmp_path / "c.db")
    failure = openai.APIStatusError("boom", response=httpx2.Response(500, request=REQUEST), body=None)
    client, transport, _ = make([failure, "recovered"], cache=cache, retry=RetryPolicy(max_attempts=1))
    with pytest.raises(LLMServerError):
        await client.chat(GENERIC, MESSAGES, role="user")
    assert len(cache) == 0
    assert (await client.chat(GENERIC, MESSAGES, role="user")).text == "recovered"
    assert len(cache) == 1
    cache.close()


async def test_cache_only_for_temperature_zero_and_can_be_disabled(tmp_path: Path) -> None:
    cache = LLMCache(tmp_path / "c.db")
    client, transport, _ = make(["a", "b"], cache=cache)
    await client.chat(GENERIC, MESSAGES, role="user", temperature=0.7)
    await client.chat(GENERIC, MESSAGES, role="user", temperature=0.7)
    assert len(transport.requests) == 2 and len(cache) == 0
    off, off_transport, _ = make(["a", "b"], cache=cache, cache_enabled=False)
    await off.chat(GENERIC, MESSAGES, role="user")
    await off.chat(GENERIC, MESSAGES, role="user")
    assert len(off_transport.requests) == 2 and len(cache) == 0
    cache.close()
