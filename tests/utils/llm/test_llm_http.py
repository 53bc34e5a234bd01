"""LLMClient against the stub over real HTTP: retries, Retry-After, timeouts, repair, cache, concurrency."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from pydantic import BaseModel

from utils.llm import (
    LLMCache,
    LLMParseError,
    LLMRateLimitError,
    LLMServerError,
    LLMTimeoutError,
)
from utils.llm import stage_tags as tags
from utils.llm_stub import FaultRates, StubConfig
from utils.llm_stub.testing import RecordedSleep, run_stub, stub_client


class Verdict(BaseModel):
    valid: bool
    errors: list[str] = []


def semantic_messages(i: int | str) -> list[dict[str, str]]:
    return [{"role": "system", "content": "Check."},
            {"role": "user", "content": tags.section(tags.SECTION_ARGUMENTS, {"i": i})}]


@pytest.mark.parametrize("backend", ["aiohttp", "httpx", "raw"])
async def test_both_http_backends_parse_replies(backend: str) -> None:
    with run_stub() as stub:
        client = stub_client(stub, http_backend=backend)
        result = await client.structured(stub.model(), semantic_messages(1), Verdict, role="validator")
        assert result.value == Verdict(valid=True)
        # nothing in the prompt names the stage: the stub knows it from the X-Gecko-Role header
        rejected = await client.structured(stub.model(), semantic_messages("stub-reject"), Verdict, role="validator")
        assert rejected.value.valid is False and stub.stats()["by_stage"]["validator"] == 2
        chat = await client.chat(stub.model(), [{"role": "user", "content": "hello"}], role="user")
        assert chat.text == "stub reply: hello" and chat.input_tokens > 0 and chat.output_tokens > 0
        await client.aclose()


@pytest.mark.parametrize("backend", ["auto", "raw"])
async def test_rate_limit_honours_retry_after_then_gives_up(backend: str) -> None:
    with run_stub(StubConfig(faults=FaultRates(rate_limit=1.0), retry_after_s=3)) as stub:
        sleep = RecordedSleep()
        client = stub_client(stub, max_attempts=3, sleep=sleep, http_backend=backend)
        with pytest.raises(LLMRateLimitError):
            await client.chat(stub.model(), [{"role": "user", "content": "x"}], role="user")
        assert sleep.waits == [3.0, 3.0]
        assert stub.stats()["statuses"] == {"429": 3}
        await client.aclose()


async def test_server_errors_then_success() -> None:
    with run_stub(StubConfig(faults=FaultRates(server_error=0.5), seed=3)) as stub:
        client = stub_client(stub, max_attempts=8)
        results = await asyncio.gather(*[
            client.structured(stub.model(), semantic_messages(i), Verdict, role="validator") for i in range(20)])
        assert all(r.value.valid for r in results)
        assert stub.stats()["statuses"]["500"] > 0
        await client.aclose()


@pytest.mark.parametrize("backend", ["auto", "raw"])
async def test_only_server_errors_raise_typed_infrastructure_error(backend: str) -> None:
    with run_stub(StubConfig(faults=FaultRates(server_error=1.0))) as stub:
        client = stub_client(stub, max_attempts=2, http_backend=backend)
        with pytest.raises(LLMServerError) as info:
            await client.chat(stub.model(), [{"role": "user", "content": "x"}], role="user")
        assert info.value.attempts == 2
        await client.aclose()


@pytest.mark.parametrize("backend", ["auto", "raw"])
async def test_hanging_server_times_out(backend: str) -> None:
    with run_stub(StubConfig(faults=FaultRates(timeout=1.0), hang_s=30)) as stub:
        client = stub_client(stub, timeout_s=0.1, max_attempts=2, http_backend=backend)
        with pytest.raises(LLMTimeoutError):
            await client.chat(stub.model(), [{"role": "user", "content": "x"}], role="user")
        await client.aclose()


async def test_malformed_reply_is_repaired() -> None:
    with run_stub(StubConfig(faults=FaultRates(malformed=0.5), seed=11)) as stub:
        usage: list[dict] = []
        client = stub_client(stub)
        results = await asyncio.gather(*[client.structured(stub.model(), semantic_messages(i), Verdict,
                                                           role="validator", usage=usage) for i in range(16)],
                                       return_exceptions=True)
        failed = [r for r in results if isinstance(r, BaseException)]
        assert all(isinstance(r, LLMParseError) for r in failed)
        repaired = [r for r in results if not isinstance(r, BaseException) and r.repaired]
        assert repaired and all(r.value.valid for r in repaired)
        repairs = [u for u in usage if u["purpose"] == "repair"]
        assert len(repairs) == len(repaired) + len(failed)
        await client.aclose()


async def test_second_run_is_served_from_cache(tmp_path: Path) -> None:
    cache = LLMCache(tmp_path / "cache.db")
    with run_stub() as stub:
        client = stub_client(stub, cache=cache)
        first = [await client.structured(stub.model(), semantic_messages(i), Verdict, role="validator")
                 for i in range(5)]
        requests = stub.stats()["requests"]
        second = [await client.structured(stub.model(), semantic_messages(i), Verdict, role="validator")
                  for i in range(5)]
        assert stub.stats()["requests"] == requests
        assert [r.text for r in first] == [r.text for r in second] and all(r.cached for r in second)
        await client.aclose()
    cache.close()


async def test_hundreds_of_concurrent_calls_and_usage_sink() -> None:
    with run_stub(StubConfig(latency_ms=(20, 20))) as stub:
        client = stub_client(stub)
        results = await asyncio.gather(*[
            client.chat(stub.model(), [{"role": "user", "content": f"q{i}"}], role="planner") for i in range(300)])
        assert len({r.text for r in results}) == 300
        assert stub.stats()["max_in_flight"] > 50
        assert client.usage_totals.summary()["roles"]["planner"]["total"]["calls"] == 300
        assert 'gecko_llm_calls_total{role="planner"' in client.usage_totals.prometheus()
        await client.aclose()


async def test_unreachable_endpoint_is_a_connection_error() -> None:
    from utils.llm import LLMConnectionError
    from utils.llm_stub.testing import StubHandle

    for backend in ("auto", "raw"):
        client = stub_client(StubHandle("http://127.0.0.1:9"), max_attempts=2, http_backend=backend)
        with pytest.raises(LLMConnectionError):
            await client.chat("openai-compatible:m@http://127.0.0.1:9/v1", [{"role": "user", "content": "x"}],
                              role="user")
        await client.aclose()
