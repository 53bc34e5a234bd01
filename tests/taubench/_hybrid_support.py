"""Helpers of the hybrid-mode and runner tests: a Gecko on the tau2 mock toolkits, a recording HTTP
transport, and a scripted LLM agent model."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx

from benchmarks.taubench.mock_toolkits import MOCK_DIR
from utils.llm import LLMClient, LLMToolCall, RawReply
from utils.llm.client import ClientConfig
from utils.llm.retry import RetryPolicy
from utils.llm.scripted import ScriptedTransport
from utils.procs import gecko_server

GENERIC = "openai-compatible:m@http://127.0.0.1:1/v1#tools,json_schema=off,json_mode,temperature"
"""Every capability declared, so the runner's preflight probes nothing (the scripted transport answers the agent)."""


@contextmanager
def rules_gecko(state_dir: Path) -> Iterator[str]:
    """Gecko with the offline rules engines serving the airline and retail mock toolkits."""
    with gecko_server([MOCK_DIR], workers=1, state_dir=state_dir, extra=["--state-model", "none"]) as url:
        yield url


class RecordingTransport(httpx.AsyncBaseTransport):
    """Forwards to a real transport and keeps every request body."""

    def __init__(self) -> None:
        self.inner = httpx.AsyncHTTPTransport()
        self.bodies: list[str] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        self.bodies.append(f"{request.method} {request.url.path} {(await request.aread()).decode()}")
        return await self.inner.handle_async_request(request)

    async def aclose(self) -> None:
        await self.inner.aclose()


def reading_agent_reply(user_id: str):  # noqa: ANN201 - a ScriptedTransport step
    """A scripted model: after a customer message, look the user up; after a tool result, answer."""
    def step(request: dict[str, Any]) -> RawReply:
        roles = [m["role"] for m in request["messages"] if m["role"] != "system"]
        if roles and roles[-1] == "user":
            call = LLMToolCall(id=f"c{len(roles)}", name="get_user_details", arguments=json.dumps({"user_id": user_id}))
            return RawReply(text=None, tool_calls=(call,), input_tokens=10, output_tokens=5)
        return RawReply(text="I have looked up your profile.", input_tokens=10, output_tokens=5)
    return step


def scripted_client(steps: list[Any]) -> tuple[LLMClient, ScriptedTransport]:
    """An LLM client over a scripted transport, one attempt per call, no cache."""
    transport = ScriptedTransport(steps)
    config = ClientConfig(retry=RetryPolicy(max_attempts=1), cache_enabled=False)
    return LLMClient(transport=transport, config=config, env={}), transport
