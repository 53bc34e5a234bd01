"""The stub's HTTP app: OpenAI-compatible `/v1/chat/completions` and `/v1/models`, plus `/stats`.

Stage recognition, in order: the `X-Gecko-Role` header (a server stage's usage role), the name of the
requested JSON schema (`gecko_<role>`), tools in the request (planner), else plain chat.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, ValidationError

from utils.llm import stage_tags as tags
from utils.llm_stub.config import StubConfig
from utils.llm_stub.faults import FaultPlan, body_digest
from utils.llm_stub.planner import planner_reply
from utils.llm_stub.replies import malformed_text, structured_value, violating_value
from utils.roles import PLANNER

CREATED = 1_700_000_000
"""Fixed `created` timestamp: replies are byte-for-byte deterministic."""


class ChatRequest(BaseModel):
    """The fields of a chat-completions request the stub looks at (others are accepted and ignored)."""

    model_config = ConfigDict(extra="allow")

    model: str
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] | None = None
    tool_choice: Any = None
    response_format: dict[str, Any] | None = None
    stub_plan: dict[str, Any] | None = None
    """A scripted plan for this request (sent through the SDK's `extra_body`)."""


@dataclass
class StubStats:
    """Counters served by `GET /stats`."""

    requests: int = 0
    by_stage: Counter[str] = field(default_factory=Counter)
    faults: Counter[str] = field(default_factory=Counter)
    statuses: Counter[int] = field(default_factory=Counter)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    in_flight: int = 0
    max_in_flight: int = 0

    def public(self) -> dict[str, Any]:
        return {
            "requests": self.requests, "by_stage": dict(self.by_stage), "faults": dict(self.faults),
            "statuses": {str(k): v for k, v in self.statuses.items()}, "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens, "in_flight": self.in_flight,
            "max_in_flight": self.max_in_flight,
        }


def _text(content: Any) -> str:
    if isinstance(content, list):
        return "\n".join(str(part.get("text", "")) if isinstance(part, dict) else str(part) for part in content)
    return "" if content is None else str(content)


def _tokens(text: str) -> int:
    return len(text) // 4 + 1


def detect_request_stage(request: ChatRequest, role: str | None = None) -> str:
    """The stage a request belongs to (`chat` when none is recognisable).

    Args:
        request: the request body.
        role: the `X-Gecko-Role` header, if any (client roles fall through to the other clues).
    """
    if role is not None and role in tags.STAGES:
        return role
    rf = request.response_format or {}
    if rf.get("type") == "json_schema":
        found = tags.stage_of_schema_name(str((rf.get("json_schema") or {}).get("name", "")))
        if found:
            return found
    if request.tools:
        return PLANNER.name
    return "chat"


def _requested_schema(request: ChatRequest, system: str) -> Any:
    rf = request.response_format or {}
    if rf.get("type") == "json_schema":
        schema = (rf.get("json_schema") or {}).get("schema")
        if schema is not None:
            return schema
    return tags.read_json_section(system, tags.SCHEMA_SECTION)


def _error(status: int, kind: str, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"error": {"message": message, "type": kind, "code": kind, "param": None}},
                        status_code=status, headers=headers)


class StubServer:
    """State of one stub app: config, fault plan, counters, and the event that ends injected hangs."""

    def __init__(self, config: StubConfig) -> None:
        self.config = config
        self.faults = FaultPlan(config)
        self.stats = StubStats()
        self.closing = asyncio.Event()

    def reply(self, request: ChatRequest, stage: str, fault: str | None) -> tuple[str | None, list[dict[str, Any]]]:
        """(content, tool_calls) for a request; `fault` may corrupt it."""
        messages = request.messages
        system = "\n".join(_text(m.get("content")) for m in messages if m.get("role") in ("system", "developer"))
        everything = "\n".join(_text(m.get("content")) for m in messages)
        first_user = next((_text(m.get("content")) for m in messages if m.get("role") == "user"), "")
        if stage == PLANNER.name:
            content, calls = planner_reply(messages, request.tools or [], request.tool_choice,
                                           self.config.plans, request.stub_plan)
            if calls and fault == "malformed":
                calls[0]["function"]["arguments"] = malformed_text(json.loads(calls[0]["function"]["arguments"]))
            elif calls and fault == "schema_violation":
                calls[0]["function"]["arguments"] = json.dumps({"stub_unexpected_argument": True})
            return content, calls
        schema = _requested_schema(request, system)
        wants_json = schema is not None or (request.response_format or {}).get("type") == "json_object"
        if not wants_json:
            last = next((_text(m.get("content")) for m in reversed(messages) if m.get("role") == "user"), "")
            return f"stub reply: {last[:80]}", []
        value = structured_value(stage, everything, first_user, schema)
        if fault == "malformed":
            return malformed_text(value), []
        if fault == "schema_violation":
            return json.dumps(violating_value(schema, first_user)), []
        return json.dumps(value, ensure_ascii=False), []

    async def complete(self, body: dict[str, Any], role: str | None = None) -> JSONResponse:
        """Handle one chat-completions request (`role`: its `X-Gecko-Role` header)."""
        try:
            request = ChatRequest.model_validate(body)
        except ValidationError as exc:
            self.stats.statuses[400] += 1
            return _error(400, "invalid_request_error", f"invalid request: {exc.errors()[0]['msg']}")
        stage = detect_request_stage(request, role)
        self.stats.requests += 1
        self.stats.by_stage[stage] += 1
        digest = body_digest(body)
        fault, latency = self.faults.draw(digest)
        if fault:
            self.stats.faults[fault] += 1
        self.stats.in_flight += 1
        self.stats.max_in_flight = max(self.stats.max_in_flight, self.stats.in_flight)
        try:
            if latency > 0:
                await asyncio.sleep(latency)
            response = await self._answer(request, stage, fault, digest)
        finally:
            self.stats.in_flight -= 1
        self.stats.statuses[response.status_code] += 1
        return response

    async def _answer(self, request: ChatRequest, stage: str, fault: str | None, digest: str) -> JSONResponse:
        if fault == "timeout":
            try:
                await asyncio.wait_for(self.closing.wait(), self.config.hang_s)
            except TimeoutError:
                pass
            return _error(504, "timeout", "stub: injected timeout")
        if fault == "rate_limit":
            return _error(429, "rate_limit_exceeded", "stub: injected rate limit",
                          {"Retry-After": f"{self.config.retry_after_s:g}"})
        if fault == "server_error":
            return _error(500, "server_error", "stub: injected server error")
        content, calls = self.reply(request, stage, fault)
        message: dict[str, Any] = {"role": "assistant", "content": content}
        if calls:
            message["tool_calls"] = calls
        prompt_tokens = sum(_tokens(_text(m.get("content"))) for m in request.messages)
        completion_tokens = _tokens((content or "") + "".join(c["function"]["arguments"] for c in calls))
        self.stats.prompt_tokens += prompt_tokens
        self.stats.completion_tokens += completion_tokens
        return JSONResponse({
            "id": "chatcmpl-stub-" + hashlib.sha256(digest.encode()).hexdigest()[:16],
            "object": "chat.completion",
            "created": CREATED,
            "model": request.model,
            "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls" if calls else "stop",
                         "logprobs": None}],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                      "total_tokens": prompt_tokens + completion_tokens},
        })


def _refusal(config: StubConfig, body: dict[str, Any], authorization: str | None) -> JSONResponse | None:
    """What a real server refuses before answering: a wrong key, an unknown model, tools it cannot handle."""
    if config.api_key is not None and authorization != f"Bearer {config.api_key}":
        return _error(401, "invalid_api_key", "stub: incorrect API key provided")
    if config.strict_models and body.get("model") not in config.models:
        return _error(404, "model_not_found", f"stub: the model {body.get('model')!r} does not exist")
    if not config.tools and body.get("tools"):
        return _error(400, "invalid_request_error", "stub: tools are not supported by this server")
    return None


def create_app(config: StubConfig | None = None) -> FastAPI:
    """Build the stub app; `app.state.stub` is its `StubServer`."""
    stub = StubServer(config or StubConfig())
    app = FastAPI(title="Gecko LLM stub", docs_url=None, redoc_url=None, openapi_url=None)
    app.state.stub = stub

    @app.post("/v1/chat/completions")
    async def chat_completions(request: Request) -> JSONResponse:
        try:
            body = await request.json()
        except ValueError:
            return _error(400, "invalid_request_error", "the body is not JSON")
        if not isinstance(body, dict):
            return _error(400, "invalid_request_error", "the body must be a JSON object")
        if body.get("stream"):
            return _error(400, "invalid_request_error", "the stub does not stream; send stream=false")
        refusal = _refusal(stub.config, body, request.headers.get("authorization"))
        if refusal is not None:
            stub.stats.statuses[refusal.status_code] += 1
            return refusal
        return await stub.complete(body, request.headers.get(tags.ROLE_HEADER))

    @app.get("/v1/models")
    async def models() -> dict[str, Any]:
        return {"object": "list", "data": [{"id": name, "object": "model", "created": CREATED, "owned_by": "stub"}
                                           for name in stub.config.models]}

    @app.get("/stats")
    async def stats() -> dict[str, Any]:
        return stub.stats.public()

    @app.post("/stats/reset")
    async def reset() -> dict[str, Any]:
        stub.stats = StubStats(in_flight=stub.stats.in_flight)
        return stub.stats.public()

    @app.get("/health")
    async def health() -> dict[str, str]:
        return {"status": "ok"}

    return app
