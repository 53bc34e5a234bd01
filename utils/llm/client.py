"""`LLMClient`: the one async client for chat completions, with retries, cache, usage and structured output.

```
chat()        cache lookup → [semaphore per endpoint → with_retries(transport.complete)] → cache store
structured()  chat() with a JSON response format → parse → validate → at most one repair round
```

One `LLMClient` serves every role and model of a process; the model is an argument of each call.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import os
import random
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ValidationError

from utils.llm.aliases import ModelSpec, resolve_model
from utils.llm.cache import LLMCache, cache_key
from utils.llm.errors import (
    LLMError,
    LLMOutputError,
    LLMParseError,
    LLMSchemaError,
    LLMTimeoutError,
    LLMUsageError,
)
from utils.llm.jsontext import parse_json_reply
from utils.llm.retry import RetryPolicy, Sleep, classify_error, with_retries
from utils.llm.stage_tags import ROLE_HEADER, SCHEMA_SECTION, section
from utils.llm.transport import DEFAULT_MAX_CONNECTIONS, ChatTransport, LLMToolCall, OpenAITransport, RawReply
from utils.llm.usage import UsageAggregator, UsageRecord
from utils.roles import call_role
from utils.schema.patterns import SafeValidator

M = TypeVar("M", bound=BaseModel)
V = TypeVar("V")
Check = Callable[[Any], tuple[Any, list[str]]]
"""Turns parsed JSON into the caller's value, or returns the list of problems found."""
MAX_REPORTED_ERRORS = 20


@dataclass(frozen=True)
class ClientConfig:
    """Knobs of the client; the server fills them from its `Settings`."""

    timeout_s: float = 60.0
    """Per request (each retry gets the full timeout)."""
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    max_concurrency: int = DEFAULT_MAX_CONNECTIONS
    """Concurrent requests per endpoint (base URL + model) from this process."""
    cache_enabled: bool = True
    """Use the cache (when one is given) for temperature-0 calls."""
    max_tokens: int | None = None
    """Output limit of reasoning models (their stage-level caps would cut their thinking short); None: the
    provider's default."""
    role_max_tokens: Mapping[str, int] = field(default_factory=dict)
    """Output cap per usage role for calls that set none (default: the role's `CallRole.max_tokens`)."""


@dataclass(frozen=True)
class ChatResult:
    """One chat completion as the stages see it."""

    text: str | None
    tool_calls: tuple[LLMToolCall, ...]
    input_tokens: int
    output_tokens: int
    latency_s: float
    cached: bool
    finish_reason: str | None
    model: str
    attempts: int


@dataclass(frozen=True)
class StructuredResult(Generic[V]):
    """A validated structured reply."""

    value: V
    text: str
    """The reply text that was accepted."""
    repaired: bool
    """True when the first reply failed and the repair round fixed it."""
    cached: bool


def _jsonable_messages(messages: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    return [dict(m) for m in messages]


@functools.lru_cache(maxsize=256)
def output_schema(model: type[BaseModel]) -> dict[str, Any]:
    """JSON Schema of a pydantic output model (computed once per model: it costs ~1 ms)."""
    return model.model_json_schema()


def pydantic_check(model: type[M]) -> Check:
    """A `Check` that validates parsed JSON into `model` and reports pydantic's errors readably."""

    def check(value: Any) -> tuple[Any, list[str]]:
        try:
            return model.model_validate(value), []
        except ValidationError as exc:
            return None, [
                f"{'/'.join(str(p) for p in err['loc']) or '(root)'}: {err['msg']}" for err in exc.errors()
            ]

    return check


def schema_check(schema: Mapping[str, Any], validator: Any | None = None) -> Check:
    """A `Check` that reports every JSON Schema violation with its location."""
    checker = validator or SafeValidator(dict(schema))

    def check(value: Any) -> tuple[Any, list[str]]:
        errors = sorted(checker.iter_errors(value), key=lambda e: list(e.absolute_path))
        return value, [f"{'/' + '/'.join(str(p) for p in e.absolute_path) if e.absolute_path else '(root)'}: "
                       f"{e.message}" for e in errors]

    return check


def _check_role(role: str) -> None:
    if call_role(role) is None:
        raise LLMUsageError(f"unknown usage role {role!r}: add it to utils.roles.CALL_ROLES")


def _deadline(deadline_s: float | None) -> float | None:
    """The `time.monotonic()` by which a call with a total budget of `deadline_s` seconds must end."""
    return None if deadline_s is None else time.monotonic() + deadline_s


class LLMClient:
    """Async chat-completions client shared by every role.

    Args:
        transport: how requests are sent (default: the openai SDK).
        cache: reply cache, or None for no caching.
        config: timeouts, retries, concurrency, cache switch.
        env: environment for model resolution and keys (default `os.environ`).
        sleep: awaited between retries (tests pass a no-op).
        rng: jitter source.
        usage_sink: also receives every usage record (all records are summed in `usage_totals` anyway).

    Attributes:
        usage_totals: this client's running totals per (role, model), for `GET /metrics`.
    """

    def __init__(
        self,
        *,
        transport: ChatTransport | None = None,
        cache: LLMCache | None = None,
        config: ClientConfig | None = None,
        env: Mapping[str, str] | None = None,
        sleep: Sleep = asyncio.sleep,
        rng: random.Random | None = None,
        usage_sink: Callable[[UsageRecord], None] | None = None,
    ) -> None:
        self.transport: ChatTransport = transport or OpenAITransport()
        self.cache = cache
        self.config = config or ClientConfig()
        self._env = os.environ if env is None else env
        self._sleep = sleep
        self._rng = rng or random.Random()
        self._usage_sinks: list[Callable[[UsageRecord], None]] = [usage_sink] if usage_sink is not None else []
        self.usage_totals = UsageAggregator()
        self._specs: dict[str, ModelSpec] = {}
        self._probed: set[str] = set()
        self._probing: dict[str, asyncio.Lock] = {}
        self._limits: dict[str, asyncio.Semaphore] = {}

    @property
    def env(self) -> Mapping[str, str]:
        """The environment keys and base URLs are read from."""
        return self._env

    def spec(self, model: str | ModelSpec) -> ModelSpec:
        """Resolve a model name (memoised).

        Raises:
            UnknownModelError, LLMUsageError: see `resolve_model`.
        """
        if isinstance(model, ModelSpec):
            return model
        if model not in self._specs:
            self._specs[model] = resolve_model(model, self._env)
        return self._specs[model]

    async def probe(self, model: str) -> ModelSpec:
        """The spec of `model` with the capabilities of its endpoint probed (`utils.llm.probe`), once per
        process: later calls with this name use them. A probe that could not tell is tried again next time.

        Raises:
            UnknownModelError, LLMUsageError, MissingAPIKeyError: see `resolve_model` and `ModelSpec.api_key`.
        """
        spec = self.spec(model)
        if not spec.needs_probe or spec.name in self._probed:
            return spec
        async with self._probing.setdefault(spec.name, asyncio.Lock()):
            spec = self.spec(model)
            if spec.name in self._probed:
                return spec
            from utils.llm.probe import probe_capabilities

            spec = await probe_capabilities(self, spec)
            self._specs[spec.name] = spec
            if spec.slots is not None:  # requests from now on keep to the endpoint's slots
                self._limits.pop(spec.endpoint, None)
            if spec.probe_error is None:
                self._probed.add(spec.name)
            return spec

    def _limit(self, spec: ModelSpec) -> asyncio.Semaphore:
        """Requests in flight to one endpoint: at most `max_concurrency`, and no more than its slots (a one-slot
        llama.cpp server queues the rest, and a request that times out there is retried behind the one it left)."""
        if spec.endpoint not in self._limits:
            self._limits[spec.endpoint] = asyncio.Semaphore(min(self.config.max_concurrency,
                                                                spec.slots or self.config.max_concurrency))
        return self._limits[spec.endpoint]

    def output_cap(self, role: str, max_tokens: int | None = None) -> int:
        """The output cap of a call of usage role `role`: `max_tokens` if given, else the configured cap of the
        role (`ClientConfig.role_max_tokens`), else the role's default (`utils.roles.CallRole.max_tokens`)."""
        if max_tokens is not None:
            return max_tokens
        configured = self.config.role_max_tokens.get(role)
        if configured is not None:
            return configured
        known = call_role(role)
        return known.max_tokens if known is not None else 1024

    def _request(
        self, spec: ModelSpec, messages: Sequence[Mapping[str, Any]], *, role: str,
        tools: Sequence[Mapping[str, Any]] | None, tool_choice: Any, temperature: float | None,
        max_tokens: int | None, response_format: Mapping[str, Any] | None, seed: int | None,
        extra: Mapping[str, Any] | None,
    ) -> dict[str, Any]:
        request: dict[str, Any] = {"model": spec.model, "messages": _jsonable_messages(messages)}
        if tools:
            if not spec.capabilities.tools:
                raise LLMUsageError(f"model {spec.name!r} does not support tool calls")
            request["tools"] = [dict(t) for t in tools]
            if tool_choice is not None:
                request["tool_choice"] = tool_choice
        if temperature is not None and spec.capabilities.temperature:
            request["temperature"] = temperature
        # A reasoning model spends most of its budget thinking: role caps (sized for the answer) would cut it
        # off, so only the operator's limit from ClientConfig applies to it.
        limit = self.config.max_tokens if spec.capabilities.reasoning else self.output_cap(role, max_tokens)
        if limit is not None:
            request[spec.token_param] = limit
        if response_format is not None:
            request["response_format"] = dict(response_format)
        if seed is not None:
            request["seed"] = seed
        if extra:
            request.update(extra)
        return request

    def _cache_key(self, spec: ModelSpec, request: Mapping[str, Any], prompt_version: str) -> str:
        return cache_key({"base_url": spec.base_url, "request": dict(request), "prompt_version": prompt_version})

    def _use_cache(self, temperature: float | None, use_cache: bool) -> bool:
        return self.cache is not None and self.config.cache_enabled and use_cache and temperature == 0

    def _emit(
        self, usage: list[dict[str, Any]] | None, *, spec: ModelSpec, role: str, prompt_version: str, purpose: str,
        latency_s: float, reply: RawReply | None = None, cached: bool = False, attempts: int = 0,
        error: str | None = None,
    ) -> None:
        input_tokens = 0 if cached or reply is None else reply.input_tokens
        output_tokens = 0 if cached or reply is None else reply.output_tokens
        if cached:
            cost: float | None = 0.0
        elif spec.price is None:
            cost = None
        else:
            cost = spec.price.cost(input_tokens, output_tokens)
        record: UsageRecord = {
            "role": role, "model": spec.name, "api_model": spec.model, "provider": spec.provider,
            "input_tokens": input_tokens, "output_tokens": output_tokens, "latency_s": round(latency_s, 6),
            "cached": cached, "cost_usd": cost, "attempts": attempts, "ok": error is None, "error": error,
            "prompt_version": prompt_version, "purpose": purpose,
        }
        if usage is not None:
            usage.append(dict(record))
        self.usage_totals.add(record)
        for sink in self._usage_sinks:
            sink(record)

    async def _send(
        self, spec: ModelSpec, request: dict[str, Any], *, role: str, prompt_version: str, purpose: str,
        usage: list[dict[str, Any]] | None, deadline: float | None = None, policy: RetryPolicy | None = None,
    ) -> ChatResult:
        api_key = spec.api_key(self._env)
        headers = {ROLE_HEADER: role}
        started = time.perf_counter()
        made = 0

        async def once() -> RawReply:
            nonlocal made
            timeout = self.config.timeout_s
            if deadline is not None:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise LLMTimeoutError(f"{spec.name} ({role}): the deadline of this step passed", made)
                timeout = min(timeout, left)
            made += 1
            async with self._limit(spec):
                return await self.transport.complete(spec, api_key, request, timeout, headers)

        try:
            reply, attempts = await with_retries(once, policy or self.config.retry, sleep=self._sleep, rng=self._rng,
                                                 deadline=deadline)
        except LLMError as exc:
            self._emit(usage, spec=spec, role=role, prompt_version=prompt_version, purpose=purpose,
                       latency_s=time.perf_counter() - started, attempts=made, error=classify_error(exc).kind)
            raise
        except BaseException:  # cancelled (the caller gave up, or a sibling stage decided): still accounted
            self._emit(usage, spec=spec, role=role, prompt_version=prompt_version, purpose=purpose,
                       latency_s=time.perf_counter() - started, attempts=made, error="cancelled")
            raise
        latency = time.perf_counter() - started
        self._emit(usage, spec=spec, role=role, prompt_version=prompt_version, purpose=purpose, latency_s=latency,
                   reply=reply, attempts=attempts)
        return ChatResult(reply.text, reply.tool_calls, reply.input_tokens, reply.output_tokens, latency, False,
                          reply.finish_reason, reply.model, attempts)

    async def _lookup(
        self, key: str, spec: ModelSpec, *, role: str, prompt_version: str, usage: list[dict[str, Any]] | None,
        accept: Callable[[RawReply], bool] | None = None,
    ) -> ChatResult | None:
        assert self.cache is not None
        started = time.perf_counter()
        doc = await self.cache.get(key)
        if doc is None:
            return None
        reply = RawReply.from_doc(doc)
        if accept is not None and not accept(reply):
            return None
        latency = time.perf_counter() - started
        self._emit(usage, spec=spec, role=role, prompt_version=prompt_version, purpose="call", latency_s=latency,
                   reply=reply, cached=True)
        return ChatResult(reply.text, reply.tool_calls, reply.input_tokens, reply.output_tokens, latency, True,
                          reply.finish_reason, reply.model, 0)

    async def _store(self, key: str, spec: ModelSpec, result: ChatResult) -> None:
        assert self.cache is not None
        reply = RawReply(result.text, result.tool_calls, result.input_tokens, result.output_tokens,
                         result.finish_reason, result.model)
        await self.cache.put(key, reply.to_doc(), spec.name)

    async def chat(
        self,
        model: str | ModelSpec,
        messages: Sequence[Mapping[str, Any]],
        *,
        role: str,
        tools: Sequence[Mapping[str, Any]] | None = None,
        tool_choice: Any = None,
        temperature: float | None = 0.0,
        max_tokens: int | None = None,
        response_format: Mapping[str, Any] | None = None,
        seed: int | None = None,
        prompt_version: str = "",
        usage: list[dict[str, Any]] | None = None,
        use_cache: bool = True,
        extra: Mapping[str, Any] | None = None,
        deadline_s: float | None = None,
        max_attempts: int | None = None,
    ) -> ChatResult:
        """One chat completion.

        Args:
            model: alias or spec.
            messages: OpenAI-format messages.
            role: usage role, one of `utils.roles.CALL_ROLES` (recorded with the usage; sent as `X-Gecko-Role`).
            tools: OpenAI tool definitions.
            tool_choice: passed through when tools are given.
            temperature: dropped for models that refuse it; 0 makes the call cacheable.
            max_tokens: output limit (sent as the model's token parameter); default: the role's cap
                (`output_cap`).
            response_format: passed through.
            seed: passed through.
            prompt_version: part of the cache key and of the usage record.
            usage: list that receives this call's usage record.
            use_cache: False skips the cache for this call.
            extra: additional request fields (sent in the body as-is).
            deadline_s: total seconds for the call, every attempt and back-off included (None: only the
                retry policy and the per-request timeout bound it).
            max_attempts: fewer attempts than the client's retry policy allows (probes).

        Raises:
            LLMInfrastructureError: the service failed after retries (`LLMTimeoutError` when the deadline passed).
            LLMUsageError: bad model name, missing key, or a request the provider rejected.
        """
        spec = self.spec(model)
        _check_role(role)
        deadline = _deadline(deadline_s)
        request = self._request(spec, messages, role=role, tools=tools, tool_choice=tool_choice,
                                temperature=temperature, max_tokens=max_tokens, response_format=response_format,
                                seed=seed, extra=extra)
        cacheable = self._use_cache(temperature, use_cache)
        key = self._cache_key(spec, request, prompt_version) if cacheable else ""
        if cacheable:
            hit = await self._lookup(key, spec, role=role, prompt_version=prompt_version, usage=usage)
            if hit is not None:
                return hit
        policy = None if max_attempts is None else dataclasses.replace(self.config.retry, max_attempts=max_attempts)
        result = await self._send(spec, request, role=role, prompt_version=prompt_version, purpose="call",
                                  usage=usage, deadline=deadline, policy=policy)
        if cacheable:
            await self._store(key, spec, result)
        return result

    def _json_format(
        self, spec: ModelSpec, messages: Sequence[Mapping[str, Any]], schema: Mapping[str, Any], name: str
    ) -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
        """Messages and response_format asking for JSON that fits `schema`, per the model's capabilities."""
        out = _jsonable_messages(messages)
        if spec.capabilities.json_schema:
            return out, {"type": "json_schema", "json_schema": {"name": name, "schema": dict(schema), "strict": False}}
        instruction = ("Reply with exactly one JSON object and nothing else (no prose, no code fence). "
                       "It must validate against this JSON Schema:\n" + section(SCHEMA_SECTION, schema))
        if out and out[0].get("role") == "system":
            out[0] = {**out[0], "content": f"{out[0].get('content') or ''}\n\n{instruction}"}
        else:
            out.insert(0, {"role": "system", "content": instruction})
        return out, ({"type": "json_object"} if spec.capabilities.json_mode else None)

    @staticmethod
    def _accept(text: str | None, check: Check) -> tuple[Any, list[str], bool]:
        """(value, problems, parsed) for one reply text."""
        try:
            parsed = parse_json_reply(text)
        except LLMParseError as exc:
            return None, [str(exc)], False
        value, problems = check(parsed)
        return value, problems, True

    async def structured_json(
        self,
        model: str | ModelSpec,
        messages: Sequence[Mapping[str, Any]],
        schema: Mapping[str, Any],
        *,
        role: str,
        name: str,
        check: Check | None = None,
        temperature: float | None = 0.0,
        max_tokens: int | None = None,
        prompt_version: str = "",
        usage: list[dict[str, Any]] | None = None,
        use_cache: bool = True,
        deadline_s: float | None = None,
    ) -> StructuredResult[Any]:
        """A JSON reply that fits `schema` (and passes `check`), with one bounded repair round.

        The JSON-schema response format is used where the model supports it; otherwise JSON mode with
        the schema in the system prompt. The reply is parsed (reasoning blocks and fences stripped),
        checked, and on failure sent back once with the list of problems. Only an accepted reply is
        cached, under the key of the first request.

        Args:
            schema: JSON Schema of the reply (its root should be an object for JSON mode).
            name: schema name for the response format (`[a-zA-Z0-9_-]{1,64}`).
            check: converts and checks the parsed value; default: JSON Schema validation against `schema`.
            deadline_s: total seconds for the call and its repair round, every attempt included.

        Raises:
            LLMParseError: no JSON after the repair round.
            LLMSchemaError: JSON that still fails the check after the repair round.
            LLMInfrastructureError, LLMUsageError: as for `chat`.
        """
        spec = self.spec(model)
        _check_role(role)
        deadline = _deadline(deadline_s)
        check = check or schema_check(schema)
        full, response_format = self._json_format(spec, messages, schema, name)
        request = self._request(spec, full, role=role, tools=None, tool_choice=None, temperature=temperature,
                                max_tokens=max_tokens, response_format=response_format, seed=None, extra=None)
        cacheable = self._use_cache(temperature, use_cache)
        key = self._cache_key(spec, request, prompt_version) if cacheable else ""
        if cacheable:
            found: list[Any] = []

            def accept(reply: RawReply) -> bool:
                value, problems, _ = self._accept(reply.text, check)
                found.append(value)
                return not problems

            hit = await self._lookup(key, spec, role=role, prompt_version=prompt_version, usage=usage, accept=accept)
            if hit is not None:
                return StructuredResult(found[-1], hit.text or "", False, True)
        first = await self._send(spec, request, role=role, prompt_version=prompt_version, purpose="call", usage=usage,
                                 deadline=deadline)
        value, problems, parsed = self._accept(first.text, check)
        accepted, repaired = first, False
        if problems:
            shown = problems[:MAX_REPORTED_ERRORS]
            more = f"\n(and {len(problems) - len(shown)} more)" if len(problems) > len(shown) else ""
            repair = list(full) + [
                {"role": "assistant", "content": first.text or ""},
                {"role": "user", "content": (
                    "Your reply cannot be used. Problems found:\n" + "\n".join(f"- {p}" for p in shown) + more
                    + "\nReply again with only the corrected JSON object, fitting the schema."
                )},
            ]
            repair_request = {**request, "messages": repair}
            second = await self._send(spec, repair_request, role=role, prompt_version=prompt_version,
                                      purpose="repair", usage=usage, deadline=deadline)
            value, problems, parsed = self._accept(second.text, check)
            accepted, repaired = second, True
            if problems:
                error_type: type[LLMOutputError] = LLMSchemaError if parsed else LLMParseError
                raise error_type(
                    f"{spec.name} ({role}): the reply does not fit after one repair round: {problems[0]}",
                    raw=second.text or "", errors=problems,
                )
        if cacheable:
            await self._store(key, spec, accepted)
        return StructuredResult(value, accepted.text or "", repaired, False)

    async def structured(
        self,
        model: str | ModelSpec,
        messages: Sequence[Mapping[str, Any]],
        output: type[M],
        *,
        role: str,
        name: str | None = None,
        schema: Mapping[str, Any] | None = None,
        extra_check: Callable[[M], list[str]] | None = None,
        temperature: float | None = 0.0,
        max_tokens: int | None = None,
        prompt_version: str = "",
        usage: list[dict[str, Any]] | None = None,
        use_cache: bool = True,
        deadline_s: float | None = None,
    ) -> StructuredResult[M]:
        """Like `structured_json`, parsed into the pydantic model `output`.

        Args:
            output: pydantic model of the reply.
            name: schema name (default: the model's class name).
            schema: schema to request (default: `output.model_json_schema()`, cached).
            extra_check: further problems to report for a parsed value (e.g. a patch that does not apply);
                they go through the same repair round.
        """
        base = pydantic_check(output)

        def check(value: Any) -> tuple[Any, list[str]]:
            parsed, problems = base(value)
            if problems or extra_check is None:
                return parsed, problems
            return parsed, extra_check(parsed)

        return await self.structured_json(
            model, messages, schema or output_schema(output), role=role, name=name or output.__name__,
            check=check, temperature=temperature, max_tokens=max_tokens, prompt_version=prompt_version,
            usage=usage, use_cache=use_cache, deadline_s=deadline_s,
        )

    def add_usage_sink(self, sink: Callable[[UsageRecord], None]) -> None:
        """Also send every usage record to `sink` (e.g. the server's Prometheus counters)."""
        self._usage_sinks.append(sink)

    async def aclose(self) -> None:
        """Close the transport (and keep the cache, which the owner closes)."""
        await self.transport.aclose()
