"""How a chat request reaches a model: the `ChatTransport` interface and its OpenAI-SDK implementation.

The transport makes exactly one request: no retries (the SDK's own are off, `max_retries=0`), no
cache. `LLMClient` layers those on top. Tests swap in `utils.llm.scripted.ScriptedTransport`.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ValidationError

from utils.llm.aliases import ModelSpec
from utils.llm.errors import LLMParseError, LLMServerError

DEFAULT_MAX_CONNECTIONS = 256
"""Connections per endpoint (and the client's concurrent requests per endpoint) unless configured."""


@dataclass(frozen=True)
class LLMToolCall:
    """One function call requested by the model."""

    id: str
    name: str
    arguments: str
    """The raw JSON text of the arguments, as sent by the model."""

    def parsed_arguments(self) -> dict[str, Any]:
        """The arguments as a JSON object.

        Raises:
            LLMParseError: not a JSON object.
        """
        try:
            value = json.loads(self.arguments or "{}")
        except ValueError as exc:
            raise LLMParseError(f"arguments of {self.name!r} are not JSON: {exc}", raw=self.arguments) from exc
        if not isinstance(value, dict):
            raise LLMParseError(f"arguments of {self.name!r} are not a JSON object", raw=self.arguments)
        return value

    def public(self) -> dict[str, str]:
        return {"id": self.id, "name": self.name, "arguments": self.arguments}


@dataclass(frozen=True)
class RawReply:
    """What one request returned."""

    text: str | None
    tool_calls: tuple[LLMToolCall, ...] = ()
    input_tokens: int = 0
    output_tokens: int = 0
    finish_reason: str | None = None
    model: str = ""
    """Model id reported by the server."""
    extra: dict[str, Any] = field(default_factory=dict)

    def to_doc(self) -> dict[str, Any]:
        """JSON form, as stored in the cache."""
        return {
            "text": self.text, "tool_calls": [c.public() for c in self.tool_calls],
            "input_tokens": self.input_tokens, "output_tokens": self.output_tokens,
            "finish_reason": self.finish_reason, "model": self.model,
        }

    @classmethod
    def from_doc(cls, doc: Mapping[str, Any]) -> RawReply:
        """Inverse of `to_doc`."""
        calls = tuple(LLMToolCall(str(c.get("id", "")), str(c.get("name", "")), str(c.get("arguments", "")))
                      for c in doc.get("tool_calls") or [])
        return cls(doc.get("text"), calls, int(doc.get("input_tokens") or 0), int(doc.get("output_tokens") or 0),
                   doc.get("finish_reason"), str(doc.get("model") or ""))


class _WireFunction(BaseModel):
    name: str = ""
    arguments: str | None = ""


class _WireToolCall(BaseModel):
    id: str | None = None
    function: _WireFunction | None = None


class _WireMessage(BaseModel):
    content: str | None = None
    tool_calls: list[_WireToolCall] | None = None


class _WireChoice(BaseModel):
    message: _WireMessage
    finish_reason: str | None = None


class _WireUsage(BaseModel):
    prompt_tokens: int | None = 0
    completion_tokens: int | None = 0


class _WireCompletion(BaseModel):
    """The part of an OpenAI chat-completion body that we read (other fields are ignored)."""

    model: str | None = None
    choices: list[_WireChoice] = []
    usage: _WireUsage | None = None


def parse_completion(spec: ModelSpec, body: bytes | str) -> RawReply:
    """Parse a chat-completion response body.

    Raises:
        LLMServerError: not a chat completion, or no choices (treated as a transient provider fault).
    """
    try:
        completion = _WireCompletion.model_validate_json(body)
    except ValidationError as exc:
        raise LLMServerError(f"{spec.name}: the reply is not a chat completion: {exc.errors()[0]['msg']}") from exc
    if not completion.choices:
        raise LLMServerError(f"{spec.name}: the reply has no choices")
    choice = completion.choices[0]
    calls = tuple(
        LLMToolCall(call.id or f"call_{i}", call.function.name, call.function.arguments or "")
        for i, call in enumerate(choice.message.tool_calls or [])
        if call.function is not None
    )
    usage = completion.usage or _WireUsage()
    return RawReply(
        text=choice.message.content, tool_calls=calls, input_tokens=usage.prompt_tokens or 0,
        output_tokens=usage.completion_tokens or 0, finish_reason=choice.finish_reason,
        model=completion.model or spec.model,
    )


class ChatTransport(Protocol):
    """Sends one chat-completions request."""

    async def complete(self, spec: ModelSpec, api_key: str, request: dict[str, Any], timeout: float,
                       headers: Mapping[str, str] | None = None) -> RawReply:
        """Make one request (with extra HTTP `headers`); raise the SDK's (or any transport) exception on failure."""
        ...

    async def aclose(self) -> None:
        """Release connections."""
        ...


class OpenAITransport:
    """Chat completions through the `openai` SDK, one `AsyncOpenAI` per (base URL, key).

    The body is sent as built by `LLMClient` through the SDK's public `post()` (the typed `create()`
    re-validates every message, which costs more CPU than the rest of the call). Retries are off
    (`max_retries=0`): `utils.llm.retry` owns them.

    Args:
        http_backend: `aiohttp` (aiohttp sockets under the SDK, `utils.llm.http_aiohttp`: much less CPU
            per call than httpx2's pool once hundreds of connections are open), `httpx` (the SDK's default
            httpx2 pool), or `auto` (= `aiohttp`).
        max_connections: connection limit per endpoint.
    """

    def __init__(self, http_backend: Literal["auto", "aiohttp", "httpx"] = "auto",
                 max_connections: int = DEFAULT_MAX_CONNECTIONS) -> None:
        self.http_backend = "httpx" if http_backend == "httpx" else "aiohttp"
        self._max_connections = max_connections
        self._clients: dict[tuple[str, str], Any] = {}
        import openai  # noqa: F401 - imported here (about 1 s) rather than inside the first request

    def _client(self, spec: ModelSpec, api_key: str) -> Any:
        key = (spec.base_url, api_key)
        client = self._clients.get(key)
        if client is None:
            import httpx2
            from openai import AsyncOpenAI

            if self.http_backend == "aiohttp":
                from utils.llm.http_aiohttp import AiohttpTransport

                http_client = httpx2.AsyncClient(transport=AiohttpTransport(self._max_connections))
            else:
                limits = httpx2.Limits(max_connections=self._max_connections,
                                       max_keepalive_connections=self._max_connections)
                http_client = httpx2.AsyncClient(limits=limits)
            client = AsyncOpenAI(base_url=spec.base_url, api_key=api_key, max_retries=0, http_client=http_client)
            self._clients[key] = client
        return client

    async def complete(self, spec: ModelSpec, api_key: str, request: dict[str, Any], timeout: float,
                       headers: Mapping[str, str] | None = None) -> RawReply:
        """Send `request` (with extra HTTP `headers`) to `spec`'s endpoint and parse the reply.

        Raises:
            openai.APIStatusError, openai.APIConnectionError, openai.APITimeoutError: from the SDK.
            LLMServerError: a 2xx reply that is not a chat completion (retryable).
        """
        import httpx2

        response = await self._client(spec, api_key).post(
            "/chat/completions", body=request, cast_to=httpx2.Response,
            options={"timeout": timeout, "headers": dict(headers or {})},
        )
        return parse_completion(spec, response.content)

    async def aclose(self) -> None:
        """Close every SDK client (and its connections)."""
        clients, self._clients = list(self._clients.values()), {}
        for client in clients:
            await client.close()
