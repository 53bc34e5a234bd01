"""Capability probing, tool-support checks, output caps and deadlines, with a scripted transport (the same
paths run against a real llama.cpp server in tests/integration/test_local_model.py)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from utils.llm import (
    ClientConfig,
    LLMClient,
    LLMTimeoutError,
    LLMToolCall,
    LLMUsageError,
    RawReply,
    RetryPolicy,
    check_tool_support,
    resolve_model,
)
from utils.llm.probe import props_url
from utils.llm.scripted import ScriptedTransport
from utils.llm_stub.testing import RecordedSleep

DOWN = "http://127.0.0.1:9/v1"
"""Nothing listens there: /props is absent, as on any server that is not llama.cpp."""


def make(steps: list[Any], **config: Any) -> tuple[LLMClient, ScriptedTransport, list[dict[str, Any]]]:
    transport = ScriptedTransport(steps)
    sink: list[dict[str, Any]] = []
    return LLMClient(transport=transport, env={}, sleep=RecordedSleep(), config=ClientConfig(**config),
                     usage_sink=sink.append), transport, sink


def test_capabilities_declared_in_the_name_are_not_probed() -> None:
    spec = resolve_model(f"openai-compatible:m@{DOWN}#json_schema,tools=off", env={})
    assert spec.capabilities.json_schema and not spec.capabilities.tools
    assert spec.source_of("json_schema") == "declared" and spec.source_of("json_mode") == "assumed"
    full = resolve_model(f"openai-compatible:m@{DOWN}#json_schema,tools,json_mode,temperature=off", env={})
    assert not full.needs_probe and not full.capabilities.temperature
    with pytest.raises(LLMUsageError, match="cannot declare"):
        resolve_model(f"openai-compatible:m@{DOWN}#grammar", env={})
    assert props_url("http://h:8080/v1") == "http://h:8080/props"


async def test_a_json_schema_request_that_is_accepted_turns_json_schema_on() -> None:
    client, transport, sink = make(["{}"])
    spec = await client.probe(f"openai-compatible:m@{DOWN}")
    assert spec.capabilities.json_schema and spec.source_of("json_schema").startswith("probed")
    assert transport.requests[0]["response_format"]["type"] == "json_schema"
    assert transport.requests[0]["max_tokens"] == 1
    assert sink[0]["role"] == "probe" and sink[0]["ok"]
    assert await client.probe(f"openai-compatible:m@{DOWN}") is spec  # once per process
    assert spec.public()["capability_sources"]["json_schema"].startswith("probed")


async def test_a_refused_json_schema_request_keeps_it_off_and_an_unreachable_one_says_why() -> None:
    from utils.llm.retry import HTTPStatusFailure

    client, _, _ = make([HTTPStatusFailure(500, "response_format type not supported")])
    spec = await client.probe(f"openai-compatible:m@{DOWN}")
    assert not spec.capabilities.json_schema and "refused" in spec.source_of("json_schema")
    client, _, _ = make([ConnectionRefusedError("refused")])
    spec = await client.probe(f"openai-compatible:m@{DOWN}")
    assert not spec.capabilities.json_schema and "did not answer" in (spec.probe_error or "")


async def test_tool_support_needs_a_tool_call_back_from_a_forced_request() -> None:
    text_only = RawReply(text="I cannot do that.", finish_reason="stop")
    client, transport, _ = make(["{}", text_only])
    support = await check_tool_support(client, f"openai-compatible:m@{DOWN}")
    assert not support.supported and support.how == "probe request" and "ignores `tools`" in support.detail
    assert transport.requests[1]["tool_choice"]["function"]["name"] == "gecko_probe"
    called = RawReply(text=None, tool_calls=(LLMToolCall("c", "gecko_probe", '{"ok": true}'),))
    client, _, _ = make(["{}", called])
    assert (await check_tool_support(client, f"openai-compatible:m@{DOWN}")).supported
    client, transport, _ = make([])
    declared = await check_tool_support(client, f"openai-compatible:m@{DOWN}#tools,json_schema")
    assert declared.supported and declared.how == "declared" and not transport.requests
    refused = await check_tool_support(client, f"openai-compatible:m@{DOWN}#tools=off,json_schema")
    assert not refused.supported


async def test_every_call_is_capped_by_its_role_unless_configured() -> None:
    client, transport, _ = make(["a", "b", "c"], role_max_tokens={"planner": 99})
    await client.chat(f"openai-compatible:m@{DOWN}", [{"role": "user", "content": "x"}], role="planner")
    await client.chat(f"openai-compatible:m@{DOWN}", [{"role": "user", "content": "x"}], role="user")
    await client.chat(f"openai-compatible:m@{DOWN}", [{"role": "user", "content": "x"}], role="user", max_tokens=7)
    assert [r["max_tokens"] for r in transport.requests] == [99, 256, 7]


async def test_the_deadline_bounds_every_attempt_and_back_off(monkeypatch: pytest.MonkeyPatch) -> None:
    """Timeouts used to be retried 4 × 60 s; the deadline ends the whole call, and it is accounted."""

    transport = ScriptedTransport()
    started: list[float] = []

    async def complete(spec: Any, key: str, request: dict[str, Any], timeout: float, headers: Any = None) -> RawReply:
        started.append(timeout)
        await asyncio.sleep(timeout)
        raise TimeoutError

    monkeypatch.setattr(transport, "complete", complete)
    usage: list[dict[str, Any]] = []
    client = LLMClient(transport=transport, env={}, config=ClientConfig(
        timeout_s=60, retry=RetryPolicy(max_attempts=4, base_delay=0.01)))
    loop = asyncio.get_running_loop()
    t0 = loop.time()
    with pytest.raises(LLMTimeoutError):
        await client.chat(f"openai-compatible:m@{DOWN}", [{"role": "user", "content": "x"}], role="responder",
                          deadline_s=0.3, usage=usage)
    assert loop.time() - t0 < 1.0
    assert started and all(t <= 0.3 for t in started)
    assert usage[-1]["ok"] is False and usage[-1]["error"] == "timeout" and usage[-1]["attempts"] == len(started)


async def test_a_cancelled_call_is_accounted(monkeypatch: pytest.MonkeyPatch) -> None:
    transport = ScriptedTransport()

    async def hang(spec: Any, key: str, request: dict[str, Any], timeout: float, headers: Any = None) -> RawReply:
        await asyncio.sleep(30)
        raise AssertionError

    monkeypatch.setattr(transport, "complete", hang)
    usage: list[dict[str, Any]] = []
    client = LLMClient(transport=transport, env={})
    task = asyncio.create_task(client.chat(f"openai-compatible:m@{DOWN}", [{"role": "user", "content": "x"}],
                                           role="responder", usage=usage))
    await asyncio.sleep(0.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert len(usage) == 1 and usage[0]["error"] == "cancelled" and usage[0]["ok"] is False
