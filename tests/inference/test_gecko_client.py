"""The Gecko client without a socket (`httpx.MockTransport`): shapes, errors by fault, retry policy."""

from __future__ import annotations

import json
from collections.abc import Callable

import httpx
import pytest

from inference.gecko import (
    GeckoClient,
    GeckoJudgeError,
    GeckoNotFoundError,
    GeckoRequestError,
    GeckoUnavailableError,
)

PROBLEM = "application/problem+json"


async def _no_wait(seconds: float) -> None:
    return None


def _client(handler: Callable[[httpx.Request], httpx.Response], retries: int = 2) -> GeckoClient:
    return GeckoClient("http://gecko.test", transport=httpx.MockTransport(handler), retries=retries, sleep=_no_wait)


async def test_tool_call_422_is_a_result_not_an_exception() -> None:
    body = {"type": "urn:gecko:problem:invalid-arguments", "title": "Invalid tool arguments", "status": 422,
            "detail": "Argument 'base' must be an integer, not a string.",
            "errors": [{"pointer": "/base", "keyword": "type", "message": "Argument 'base' must be an integer, not a string.",
                        "source": "syntactic"}]}
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(422, json=body, headers={"content-type": PROBLEM, "X-Gecko-State-Version": "3"})

    async with _client(handler) as client:
        response = await client.call_tool("s1", "simple_python_0", "calculate_triangle_area", {"base": "10"})
    assert not response.ok and response.status == 422 and response.state_version == 3
    assert response.errors[0]["pointer"] == "/base" and "integer" in response.detail
    assert seen[0].url.path == "/simple_python_0/calculate_triangle_area"
    assert seen[0].headers["X-Session-ID"] == "s1" and json.loads(seen[0].content) == {"base": "10"}


async def test_statuses_map_to_errors_by_fault() -> None:
    routes = {
        "/sessions/gone/fork": (404, {"type": "urn:gecko:problem:unknown-session", "detail": "no live session"}),
        "/sessions/s/judge": (502, {"type": "urn:gecko:problem:judge-failed", "detail": "bad output"}),
        "/sessions/s/checklist": (503, {"type": "urn:gecko:problem:session-busy", "detail": "busy"}),
        "/sessions": (422, {"type": "urn:gecko:problem:unknown-toolkit", "detail": "unknown toolkit(s): x"}),
        "/tk/op": (404, {"type": "urn:gecko:problem:unknown-session", "detail": "no live session"}),
    }

    def handler(request: httpx.Request) -> httpx.Response:
        status, body = routes[request.url.path]
        return httpx.Response(status, json=body, headers={"content-type": PROBLEM})

    async with _client(handler) as client:
        with pytest.raises(GeckoNotFoundError):
            await client.fork("gone")
        with pytest.raises(GeckoJudgeError):
            await client.judge("s", task="t")
        with pytest.raises(GeckoUnavailableError) as busy:
            await client.checklist("s", "t")
        assert busy.value.status == 503
        with pytest.raises(GeckoRequestError) as bad:
            await client.create_session({"toolkits": ["x"]})
        assert "unknown toolkit" in str(bad.value)
        with pytest.raises(GeckoNotFoundError):
            await client.call_tool("gone", "tk", "op", {})


async def test_transport_errors_are_retried_only_when_safe() -> None:
    attempts: dict[str, int] = {}

    def handler(request: httpx.Request) -> httpx.Response:
        key = f"{request.method} {request.url.path}"
        attempts[key] = attempts.get(key, 0) + 1
        if request.url.path == "/health" and attempts[key] < 3:
            raise httpx.ReadTimeout("slow", request=request)
        if request.url.path == "/sessions" and attempts[key] < 2:
            raise httpx.ConnectError("refused", request=request)
        if request.url.path == "/tk/op":
            raise httpx.ReadError("reset", request=request)
        if request.url.path == "/sessions":
            return httpx.Response(201, json={"session_id": "s1"})
        return httpx.Response(200, json={"status": "ok"})

    async with _client(handler) as client:
        assert (await client.health()).status == "ok"                  # idempotent: read timeouts retried
        assert (await client.create_session()).session_id == "s1"      # not sent yet: connect errors retried
        with pytest.raises(GeckoUnavailableError):
            await client.call_tool("s1", "tk", "op", {})              # maybe executed: never repeated
    assert attempts == {"GET /health": 3, "POST /sessions": 2, "POST /tk/op": 1}


async def test_retries_give_up_as_unavailable() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused", request=request)

    async with _client(handler, retries=1) as client:
        with pytest.raises(GeckoUnavailableError, match="after 2 tries"):
            await client.health()


async def test_history_pages_and_usage() -> None:
    entries = [{"tool": "tk/op", "usage": [{"role": "validator", "input_tokens": i}]} for i in range(1500)]

    def handler(request: httpx.Request) -> httpx.Response:
        offset = int(request.url.params["offset"])
        limit = int(request.url.params["limit"])
        return httpx.Response(200, json={"calls": entries[offset: offset + limit]})

    async with _client(handler) as client:
        usage = await client.session_usage("s")
    assert len(usage) == 1500 and usage[-1]["input_tokens"] == 1499
