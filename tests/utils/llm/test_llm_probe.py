"""Capability probing, tool-support checks and the runners' preflight (`probe_models`), output caps and deadlines:
with a scripted transport, and the preflight against the local stub set up as a real server would be (a key, the
models it serves, tool calling on or off) and against a port where nothing listens (the same paths run against a
real llama.cpp server in tests/integration/test_local_model.py)."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from utils.llm import (
    ClientConfig,
    LLMClient,
    LLMTimeoutError,
    LLMToolCall,
    LLMUsageError,
    MissingAPIKeyError,
    ModelProbeError,
    RawReply,
    RetryPolicy,
    UnknownModelError,
    check_tool_support,
    probe_models,
    resolve_model,
)
from utils.llm.probe import props_url
from utils.llm.scripted import ScriptedTransport
from utils.llm_stub.config import StubConfig
from utils.llm_stub.testing import RecordedSleep, run_stub
from utils.procs import free_port

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


def _client(env: dict[str, str] | None = None) -> LLMClient:
    async def no_wait(_: float) -> None:
        return None
    return LLMClient(config=ClientConfig(timeout_s=5.0, retry=RetryPolicy(max_attempts=2)), env=env or {},
                     sleep=no_wait)


async def test_a_served_model_passes_and_tool_roles_are_probed_with_a_tool() -> None:
    with run_stub(StubConfig(models=("m",), strict_models=True)) as stub:
        client = _client()
        model = stub.model("m")
        reports = await probe_models(client, {"planner": model, "user": model, "validator": "rules"})
        await client.aclose()
        assert [(r.model, r.roles, r.tools) for r in reports] == [(model, ("planner", "user"), "probe request")]
        assert reports[0].served_model == "m" and reports[0].capabilities.json_schema
        # per distinct model, engines skipped: the json_schema capability probe, then the forced tool call, which
        # is the preflight's request too (no third one)
        assert stub.stats()["requests"] == 2


async def test_a_model_with_declared_capabilities_gets_exactly_one_request_and_each_judge_of_a_panel_its_own(
        ) -> None:
    with run_stub(StubConfig(models=("a", "b"), strict_models=True)) as stub:
        client = _client()
        first, second = stub.model("a") + "#json_schema,tools", stub.model("b") + "#json_schema,tools=off"
        reports = await probe_models(client, {"judge": f"{first},{second}", "agent": first})
        await client.aclose()
        assert [(r.model, r.roles, r.tools) for r in reports] == [(first, ("judge", "agent"), "declared"),
                                                                  (second, ("judge",), None)]
        assert stub.stats()["requests"] == 2
        assert reports[0].public()["capabilities"]["tools"] and not reports[1].public()["capabilities"]["tools"]


async def test_a_tool_role_whose_endpoint_ignores_tools_or_declares_none_is_refused() -> None:
    client, transport, sink = make(["{}", RawReply(text="OK", finish_reason="stop")])
    with pytest.raises(ModelProbeError, match=r"\(planner\) cannot call tools: .*ignores `tools`.*tool-capable"):
        await probe_models(client, {"planner": f"openai-compatible:m@{DOWN}"})
    assert transport.requests[1]["tool_choice"]["function"]["name"] == "gecko_probe"
    assert {entry["role"] for entry in sink} == {"probe"}
    client, transport, _ = make([])
    with pytest.raises(ModelProbeError, match="does not support tool calls"):
        await probe_models(client, {"agent": f"openai-compatible:m@{DOWN}#tools=off,json_schema"})
    assert not transport.requests  # refused on the declaration alone
    client, transport, _ = make(["OK"])
    assert await probe_models(client, {"user": f"openai-compatible:m@{DOWN}#tools=off,json_schema"})
    assert transport.requests[0]["max_tokens"] == 8 and "tools" not in transport.requests[0]


@pytest.mark.parametrize(("config", "model", "role", "message"), [
    (StubConfig(models=("m",), strict_models=True), "typo", "user", "is the model name right"),
    (StubConfig(models=("m",), strict_models=True), "typo", "planner", "is the model name right"),
    (StubConfig(api_key="right"), "m", "user", "refused the API key"),
    (StubConfig(api_key="right"), "m", "planner", "refused the API key"),
    (StubConfig(tools=False), "m", "planner", "rejected a request with a tool definition"),
])
async def test_each_misconfiguration_gets_one_actionable_line(config: StubConfig, model: str, role: str,
                                                            message: str) -> None:
    with run_stub(config) as stub:
        client = _client({"OPENAI_COMPATIBLE_API_KEY": "wrong"})
        try:
            with pytest.raises(ModelProbeError, match=message) as caught:
                await probe_models(client, {role: stub.model(model)})
        finally:
            await client.aclose()
    assert "\n" not in str(caught.value) and stub.base_url in str(caught.value)


async def test_tools_are_not_required_of_roles_that_do_not_call_them() -> None:
    with run_stub(StubConfig(tools=False)) as stub:
        client = _client()
        assert await probe_models(client, {"user": stub.model(), "nl_judge": stub.model()})
        await client.aclose()


async def test_nothing_listening_fails_in_seconds() -> None:
    client = _client()
    started = time.perf_counter()
    model = f"openai-compatible:m@http://127.0.0.1:{free_port()}/v1"
    with pytest.raises(ModelProbeError, match="is unreachable"):
        await probe_models(client, {"planner": model})
    await client.aclose()
    assert time.perf_counter() - started < 10


async def test_names_and_keys_are_checked_before_any_request() -> None:
    client = _client()
    with pytest.raises(UnknownModelError, match="gpt-4.1-typo"):
        await probe_models(client, {"agent": "gpt-4.1-typo"})
    with pytest.raises(MissingAPIKeyError, match="OPENAI_API_KEY"):
        await probe_models(client, {"agent": "gpt-4.1"})  # the client's environment has no key
    await client.aclose()
